"""Asks the installed onnxruntime itself whether it runs a node: a one-node model with the node's
own opsets, attributes, input types and small constants becomes a session (kernel lookup and
the kernel's attribute checks happen there), and, where every data input is a static float
tensor, it runs once on zeros (checks only made on run, e.g. ranks). Answers are cached by the
node's signature, so a large model costs one session per distinct kind of node."""

from __future__ import annotations

import numpy as np
from onnx import ModelProto, TensorProto, helper, numpy_helper

from ...errors import unregistered_op

_RUN_AT_MOST = 1 << 20  # elements per input: larger static inputs are only loaded, not run
_FLOATS = {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16}


class OrtNodeProbe:
    """Whether onnxruntime runs each node of ``view``, one-node sessions cached by signature."""

    def __init__(self, view, libraries=()):
        self.view, self.libraries = view, tuple(libraries)
        self._seen: dict = {}

    def model_error(self) -> str | None:
        """Why onnxruntime loads no model with these opset imports at all (None: it does)."""
        node = helper.make_node("Identity", ["x"], ["y"])
        vi = helper.make_tensor_value_info
        return self._session(self._model([node], [vi("x", TensorProto.FLOAT, [1])], [vi("y", TensorProto.FLOAT, [1])],
                                         []), None)

    def error(self, site) -> str | None | bool:
        """onnxruntime's reason for refusing the node, None when it runs it, False when the
        node's input types are unknown (nothing was asked)."""
        built = self._one_node(site.node)
        if built is None:
            return False
        model, feeds, key = built
        if key not in self._seen:
            self._seen[key] = self._session(model, feeds)
        return self._seen[key]

    def _one_node(self, node):
        view, inputs, inits, feeds, key = self.view, [], [], {}, [node.op_type, node.domain]
        key += [a.SerializeToString() for a in node.attribute]
        for value in dict.fromkeys(v for v in node.input if v):
            const = view.constant(value)
            if const is not None:
                inits.append(numpy_helper.from_array(const, value))
                key.append(("const", const.dtype.str, const.shape, const.tobytes()))
                continue
            elem, dims = view.elem_type(value), view.dims(value)
            if not elem:
                return None
            inputs.append(helper.make_tensor_value_info(value, elem, None if dims is None else
                                                        [d if d is not None else "?" for d in dims]))
            key.append((elem, dims))
            if feeds is not None and elem in _FLOATS and dims is not None and all(isinstance(d, int) for d in dims) \
                    and int(np.prod(dims)) <= _RUN_AT_MOST:
                feeds[value] = np.zeros(dims, helper.tensor_dtype_to_np_dtype(elem))
            else:
                feeds = None  # some input cannot be made up faithfully: load only
        outputs = []
        for value in (o for o in node.output if o):
            elem = view.elem_type(value)
            outputs.append(helper.make_tensor_value_info(value, elem, None) if elem
                           else helper.make_empty_tensor_value_info(value))
        return self._model([node], inputs, outputs, inits), feeds, repr(key)

    def _model(self, nodes, inputs, outputs, inits) -> ModelProto:
        graph = helper.make_graph(nodes, "lint", inputs, outputs, inits)
        proto = self.view.proto
        return helper.make_model(graph, opset_imports=list(proto.opset_import), ir_version=proto.ir_version or 8)

    def _session(self, model: ModelProto, feeds) -> str | None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.log_severity_level = 4
        for path in self.libraries:
            options.register_custom_ops_library(path)
        try:
            session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
            if feeds:
                session.run(None, feeds)
        except Exception as exc:  # onnxruntime's own words are the finding
            return _reason(exc)
        return None


def _reason(exc: Exception) -> str:
    """onnxruntime's message without its source locations and C++ signatures."""
    missing = unregistered_op(exc)
    if missing:
        return f"none of them implements {missing[0]}::{missing[1]}"
    text = " ".join(str(exc).split())
    for marker in ("Status Message: ", "Exception during initialization: ", "FAIL : ", "NOT_IMPLEMENTED : "):
        text = text.rsplit(marker, 1)[-1]
    if "] " in text and text.startswith("/"):
        text = text.rsplit("] ", 1)[-1]
    return text.strip()[:300] or type(exc).__name__
