"""Cut a region out of a graph as a tiny standalone model, and run it.

Patterns that recognise a computation by what it computes evaluate the region on probe inputs.
Sessions are cached by the region's bytes: a model with 200 identical chains builds one.

A probe never computes with large tensors: a constant the folder will not read (over
``fold.MAX_READ`` elements), feeds or region constants over ``MAX_VALUE`` elements, or a value
that onnx shape inference sizes past it are refused before onnxruntime runs anything.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import ModelProto, helper, numpy_helper

from ..errors import SurgeonError, ort_message
from ..forksafe import ForkSafeSession
from .fold import MAX_READ, ConstantFolder
from .index import GraphIndex, reads_of
from .node import Node
from .propagation import propagation_hazard
from .walk import BackWalk

MAX_VALUE = 1 << 23  # elements of any one value a probe feeds, reads or computes
_SMALL_INTS = 64  # int feeds up to this size are sizes: shape inference is told their values
_DATA_PROP_SAFE = 4096  # onnx's data propagation spends ~200 bytes per element of a 1-D value


@dataclass
class Slice:
    """The nodes between some values and the leaves they read.

    ``leaves`` are where the walk stopped: values named in ``stop_at``, graph inputs,
    initializers and values from enclosing scopes.
    """

    nodes: list[Node]
    leaves: list[str]


def backward_slice(index: GraphIndex, outputs: list[str], stop_at=(), known=None) -> Slice:
    """``known(value)``: True for values to take as they are (constants) rather than compute."""
    stop = set(stop_at)
    leaves: dict[str, None] = {}
    walk = BackWalk(reversed(outputs))  # in the order given, each node's reads likewise
    for value in walk:
        node = index.find_producer(value)
        if value in stop or node is None or (known is not None and value not in outputs and known(value)):
            leaves[value] = None
            continue
        if walk.take(node):
            walk.into(reversed(reads_of(node)))
    return Slice(walk.nodes(), list(leaves))


class RegionEvaluator:
    """Extracts regions to models and runs them in onnxruntime (sessions cached)."""

    def __init__(self, proto: ModelProto, folder: ConstantFolder):
        self.opsets = list(proto.opset_import)
        self.ir_version = proto.ir_version
        self.functions = list(proto.functions)
        self.folder = folder
        self._sessions: dict[str, object] = {}  # by the extracted model's bytes
        self._asked: dict[tuple, object] = {}  # by what was asked of which graph

    def extract(self, index: GraphIndex, outputs: list[str], feeds: dict[str, np.ndarray]) -> ModelProto:
        region = backward_slice(index, outputs, stop_at=feeds)
        if any(leaf not in feeds and self.folder.value(index, leaf) is None for leaf in region.leaves):
            # A constant computed from a tensor the region has no value for (a Shape of an
            # input whose dims are fixed): read it as the constant it is instead.
            region = backward_slice(index, outputs, stop_at=feeds,
                                    known=lambda v: self.folder.value(index, v) is not None)
        graph = helper.make_graph([n.proto for n in region.nodes], "region", [], [])
        total = 0
        for leaf in region.leaves:
            if leaf in feeds:
                array = np.asarray(feeds[leaf])
                graph.input.append(helper.make_tensor_value_info(
                    leaf, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape))
                total += array.size
                continue
            value = self.folder.value(index, leaf)
            if value is None:
                size = self.folder.too_large(index, leaf)
                if size is not None:
                    raise SurgeonError(f"region reads constant {leaf!r} of {size} elements; probes read at "
                                       f"most {MAX_READ}")
                raise SurgeonError(f"region reads run-time value {leaf!r} that is neither fed nor constant")
            total += np.asarray(value).size
            graph.initializer.append(numpy_helper.from_array(np.asarray(value), leaf))
        if total > MAX_VALUE:
            raise SurgeonError(f"region reads {total} elements of inputs and constants; probes read at most "
                               f"{MAX_VALUE}")
        for out in outputs:
            # Untyped outputs: onnxruntime rejects elem_type UNDEFINED ("Invalid tensor data type 0")
            # but accepts a ValueInfoProto without a type and infers it. (Fix by the patterns' author.)
            graph.output.append(onnx.ValueInfoProto(name=out))
        model = helper.make_model(graph, opset_imports=self.opsets, functions=self.functions)
        model.ir_version = self.ir_version
        return model

    def run(self, index: GraphIndex, outputs: list[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        # The same outputs from feeds of the same types and shapes, in a graph not changed since:
        # the same model, so its session, without extracting and hashing it again.
        asked = (id(index), index.version, tuple(outputs),
                 tuple(sorted((k, np.asarray(v).dtype.str, np.shape(v)) for k, v in feeds.items())))
        session = self._asked.get(asked)
        if session is None:
            session = self._session(index, outputs, feeds)
            self._asked[asked] = session
        input_names = {i.name for i in session.get_inputs()}
        try:
            return session.run(outputs, {k: v for k, v in feeds.items() if k in input_names})
        except Exception as exc:
            raise SurgeonError(f"onnxruntime failed on the region: {ort_message(exc)}") from None

    def _session(self, index: GraphIndex, outputs: list[str], feeds: dict[str, np.ndarray]):
        model = self.extract(index, outputs, feeds)
        payload = model.SerializeToString()
        key = hashlib.sha1(payload).hexdigest()
        session = self._sessions.get(key)
        if session is None:
            import onnxruntime as ort  # only when a pattern probes a region

            too_big = oversized(model, feeds)
            if too_big:
                raise SurgeonError(too_big)
            options = ort.SessionOptions()
            options.log_severity_level = 4  # failures come back as SurgeonError; keep stderr quiet (patterns author)
            options.intra_op_num_threads = 1
            # A region is tiny and runs a few times: optimising buys nothing, and onnxruntime's
            # full optimisation level has crashed (SIGSEGV) on regions a fuzzer cut from mutants.
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            try:
                session = ForkSafeSession(ort.InferenceSession(payload, options, providers=["CPUExecutionProvider"]))
            except Exception as exc:
                raise SurgeonError(f"onnxruntime cannot run the region: {ort_message(exc)}") from None
            self._sessions[key] = session
        return session


def oversized(model: ModelProto, feeds: dict[str, np.ndarray]) -> str | None:
    """Why the region would compute a value over ``MAX_VALUE`` elements, as far as onnx shape
    inference can tell from the fed shapes, with small int feeds (sizes) taken as constants."""
    sized = ModelProto()
    sized.CopyFrom(model)
    graph = sized.graph
    for vi in list(graph.input):
        value = np.asarray(feeds.get(vi.name, 0.0))
        if value.dtype.kind in "iu" and value.size <= _SMALL_INTS:
            graph.input.remove(vi)
            graph.initializer.append(numpy_helper.from_array(value, vi.name))
    for data_prop in (False, True) if propagation_hazard(sized) is None else (False,):
        try:
            inferred = onnx.shape_inference.infer_shapes(sized, data_prop=data_prop)
        except Exception:  # inference is best effort; onnxruntime reports real errors itself
            return None
        risky = False
        for vi in (*inferred.graph.value_info, *inferred.graph.output):
            tensor_type = vi.type.tensor_type
            dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor_type.shape.dim]
            if any(d is None for d in dims):
                continue
            if math.prod(dims) > MAX_VALUE:
                return f"region computes {vi.name!r} of shape {dims}; probes compute at most {MAX_VALUE} elements"
            risky |= len(dims) <= 1 and math.prod(dims) > _DATA_PROP_SAFE
        if risky:
            break
    return None
