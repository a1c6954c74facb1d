"""Looking at rewritten graphs: ops in every graph, custom nodes and their declared shapes."""

from __future__ import annotations

from collections import Counter

import onnx

from ..shipped_samples import all_graphs
from .runner import CUSTOM, attrs_of


def op_counts(model) -> Counter:
    return Counter(f"{n.domain}::{n.op_type}" if n.domain else n.op_type
                   for g in all_graphs(model.graph) for n in g.node)


def custom_nodes(model, op_type: str | None = None) -> list:
    return [n for g in all_graphs(model.graph) for n in g.node
            if n.domain == CUSTOM and (op_type is None or n.op_type == op_type)]


def declared(model, name: str):
    """(elem_type, dims) a graph declares for ``name`` (value_info or output), or None."""
    for g in all_graphs(model.graph):
        for vi in list(g.value_info) + list(g.output):
            if vi.name == name:
                tt = vi.type.tensor_type
                dims = [d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in tt.shape.dim]
                return tt.elem_type, dims
    return None


def assert_custom_shapes(model) -> None:
    """ops/OPS.md: every custom output has a value_info with type and meaningful dims."""
    for node in custom_nodes(model):
        info = declared(model, node.output[0])
        assert info is not None, f"{node.name}: no value_info for {node.output[0]}"
        elem, dims = info
        assert elem == onnx.TensorProto.FLOAT
        assert len(dims) in (4, 5), dims
        assert all(isinstance(d, int) or (isinstance(d, str) and d) for d in dims), dims


def fused_settings(model) -> list[tuple]:
    return [(a.get("align_corners", 0), a.get("mode", "bilinear"), a.get("padding_mode", "zeros"))
            for a in map(attrs_of, custom_nodes(model, "FusedGridSample"))]
