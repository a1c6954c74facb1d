"""Whether onnx's data propagation can run on a model without bringing the process down.

onnx 1.23's Slice data propagation walks the sliced shape with a 32-bit index: a constant step
of 2^31 or more wraps it (a segmentation fault) or never ends it (memory until killed). Such a
step means "take the first element" on any real shape, so the model is legal; inference just
has to run without data propagation there.
"""

from __future__ import annotations

import numpy as np
from onnx import GraphProto, ModelProto, numpy_helper

from .node import subgraphs_of

_STEP_LIMIT = 2**31 - 1


def propagation_hazard(model: ModelProto) -> str | None:
    """Why data propagation must not run on ``model``, or None."""
    return _in_graph(model.graph)


def _in_graph(graph: GraphProto) -> str | None:
    constants = {t.name: t for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and node.output:
            value = next((a.t for a in node.attribute if a.name == "value"), None)
            if value is not None:
                constants[node.output[0]] = value
    for node in graph.node:
        if node.op_type == "Slice" and node.domain in ("", "ai.onnx") and len(node.input) > 4:
            steps = constants.get(node.input[4])
            if steps is not None and _too_large(steps):
                return f"Slice {node.name or node.output[0]!r} has a step past 2^31"
        for sub in subgraphs_of(node):
            found = _in_graph(sub)
            if found:
                return found
    return None


def _too_large(tensor) -> bool:
    try:
        values = numpy_helper.to_array(tensor)
    except Exception:  # unreadable (external, truncated): onnx will not read it either
        return False
    return values.dtype.kind in "iu" and bool(np.any(np.abs(values.astype(np.float64)) > _STEP_LIMIT))
