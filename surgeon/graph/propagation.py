"""Whether onnx's data propagation can run on a model without bringing the process down.

onnx 1.23's Slice data propagation walks the sliced shape with a 32-bit index: a constant step
of 2^31 or more wraps it (a segmentation fault) or never ends it (memory until killed). Such a
step means "take the first element" on any real shape, so the model is legal; inference just
has to run without data propagation there.
"""

from __future__ import annotations

import numpy as np
from onnx import GraphProto, ModelProto, numpy_helper

from .fold import constant_attribute
from .node import Node, is_op, subgraphs_of

_STEP_LIMIT = 2**31 - 1


def propagation_hazard(model: ModelProto) -> str | None:
    """Why data propagation must not run on ``model``, or None."""
    return _in_graph(model.graph)


def _in_graph(graph: GraphProto) -> str | None:
    initializers = {t.name: t for t in graph.initializer}
    constants = {n.output[0]: n for n in graph.node if is_op(n, "Constant") and n.output}
    for node in graph.node:
        if is_op(node, "Slice") and len(node.input) > 4 and _too_large(node.input[4], initializers, constants):
            return f"Slice {node.name or node.output[0]!r} has a step past 2^31"
        for sub in subgraphs_of(node):
            found = _in_graph(sub)
            if found:
                return found
    return None


def _too_large(name: str, initializers: dict, constants: dict) -> bool:
    try:
        if name in constants:
            values = constant_attribute(Node(constants[name], 0))
        elif name in initializers:
            values = numpy_helper.to_array(initializers[name])
        else:
            return False
    except Exception:  # unreadable (external, truncated): onnx will not read it either
        return False
    if values is None or values.dtype.kind not in "iu":
        return False
    return bool(np.any(np.abs(values.astype(np.float64)) > _STEP_LIMIT))
