"""Cut a region out of a graph as a tiny standalone model, and run it.

Patterns that recognise a computation by what it computes evaluate the region on probe inputs.
Sessions are cached by the region's bytes: a model with 200 identical chains builds one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import ModelProto, helper, numpy_helper

from ..errors import SurgeonError
from .fold import ConstantFolder
from .index import GraphIndex, reads_of
from .node import Node


@dataclass
class Slice:
    """The nodes between some values and the leaves they read.

    ``leaves`` are where the walk stopped: values named in ``stop_at``, graph inputs,
    initializers and values from enclosing scopes.
    """

    nodes: list[Node]
    leaves: list[str]


def backward_slice(index: GraphIndex, outputs: list[str], stop_at=()) -> Slice:
    stop = set(stop_at)
    seen_nodes: dict[int, Node] = {}
    leaves: dict[str, None] = {}
    stack = list(reversed(outputs))
    visited: set[str] = set()
    while stack:
        value = stack.pop()
        if not value or value in visited:
            continue
        visited.add(value)
        node = index.find_producer(value)
        if value in stop or node is None:
            leaves[value] = None
            continue
        if id(node) not in seen_nodes:
            seen_nodes[id(node)] = node
            stack.extend(reversed(reads_of(node)))
    nodes = sorted(seen_nodes.values(), key=lambda n: n.position)
    return Slice(nodes, list(leaves))


class RegionEvaluator:
    """Extracts regions to models and runs them in onnxruntime (sessions cached)."""

    def __init__(self, proto: ModelProto, folder: ConstantFolder):
        self.opsets = list(proto.opset_import)
        self.ir_version = proto.ir_version
        self.functions = list(proto.functions)
        self.folder = folder
        self._sessions: dict[str, object] = {}

    def extract(self, index: GraphIndex, outputs: list[str], feeds: dict[str, np.ndarray]) -> ModelProto:
        region = backward_slice(index, outputs, stop_at=feeds)
        graph = helper.make_graph([n.proto for n in region.nodes], "region", [], [])
        for leaf in region.leaves:
            if leaf in feeds:
                array = np.asarray(feeds[leaf])
                graph.input.append(helper.make_tensor_value_info(
                    leaf, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape))
                continue
            value = self.folder.value(index, leaf)
            if value is None:
                raise SurgeonError(f"region reads run-time value {leaf!r} that is neither fed nor constant")
            graph.initializer.append(numpy_helper.from_array(np.asarray(value), leaf))
        for out in outputs:
            # Untyped outputs: onnxruntime rejects elem_type UNDEFINED ("Invalid tensor data type 0")
            # but accepts a ValueInfoProto without a type and infers it. (Fix by the patterns' author.)
            graph.output.append(onnx.ValueInfoProto(name=out))
        model = helper.make_model(graph, opset_imports=self.opsets, functions=self.functions)
        model.ir_version = self.ir_version
        return model

    def run(self, index: GraphIndex, outputs: list[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        model = self.extract(index, outputs, feeds)
        payload = model.SerializeToString()
        key = hashlib.sha1(payload).hexdigest()
        session = self._sessions.get(key)
        if session is None:
            import onnxruntime as ort  # only when a pattern probes a region

            options = ort.SessionOptions()
            options.log_severity_level = 4  # failures come back as SurgeonError; keep stderr quiet (patterns author)
            options.intra_op_num_threads = 1
            try:
                session = ort.InferenceSession(payload, options, providers=["CPUExecutionProvider"])
            except Exception as exc:
                raise SurgeonError(f"onnxruntime cannot run the region: {str(exc).splitlines()[0]}") from None
            self._sessions[key] = session
        input_names = {i.name for i in session.get_inputs()}
        try:
            return session.run(outputs, {k: v for k, v in feeds.items() if k in input_names})
        except Exception as exc:
            raise SurgeonError(f"onnxruntime failed on the region: {str(exc).splitlines()[0]}") from None
