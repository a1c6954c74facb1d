"""Shape repair after rewriting: values downstream of a rewrite get their shapes inferred again
from the shapes the patterns declared, replacing stale or meaningless dims (exporters write
symbols such as ``AffineGrid_output_0_dim_0`` for custom ops)."""

from __future__ import annotations

from onnx import GraphProto, ModelProto

from ..graph.index import reads_of
from ..graph.node import Node
from .shapes import infer_shapes, is_static, make_value_info, read_type, shape_of


def _downstream(graph: GraphProto, sources: set[str]) -> set[str]:
    reached = set(sources)
    for node in graph.node:  # nodes are topologically sorted
        if any(v in reached for v in reads_of(Node(node, 0))):
            reached.update(o for o in node.output if o)
    return reached


def _static(vi) -> bool:
    info = read_type(vi.type)
    return info is not None and is_static(info[1])


def repair_shapes(proto: ModelProto, declared: dict[str, tuple], rewritten: set[str]) -> None:
    graph = proto.graph
    outputs = {o.name: o for o in graph.output}
    for name, (elem, dims) in declared.items():
        if name in outputs:
            _merge_output(outputs[name], elem, dims, prefer_new=True)
    # A rewrite keeps the values it replaces, so fully static shapes downstream stay right;
    # symbolic ones may be an exporter's placeholders: forget them and infer again.
    if all(_static(vi) for vi in graph.value_info if vi.name not in declared) and all(_static(o) for o in graph.output):
        return  # nothing symbolic anywhere: nothing to repair (and no graph walk to pay for)
    affected = {
        name for name in _downstream(graph, rewritten) - set(declared)
        if not (name in outputs and _static(outputs[name]))
    }
    stale = [vi for vi in graph.value_info if vi.name in affected and not _static(vi)]
    if not stale and not (affected & set(outputs)):
        return
    stale_names = {vi.name for vi in stale}
    kept = [vi for vi in graph.value_info if vi.name not in stale_names]
    del graph.value_info[:]
    graph.value_info.extend(kept)
    affected = stale_names | (affected & set(outputs)) | (affected - {vi.name for vi in kept})
    # Inference keeps whatever symbols an output already states: let it start from nothing.
    old_types = {}
    for name in affected & set(outputs):
        old_types[name] = outputs[name].type.__deepcopy__()
        outputs[name].type.tensor_type.ClearField("shape")
    inferred = infer_shapes(proto, value_info=True)  # what remains declared: surgeon's own, or static
    for name, old in old_types.items():
        outputs[name].type.CopyFrom(old)
    for name in sorted(affected):
        info = shape_of(inferred, name)
        if info is None:
            continue
        if name in outputs:
            _merge_output(outputs[name], info[0], info[1], prefer_new=False)
        elif info[1] is not None:
            graph.value_info.append(make_value_info(name, info[0], info[1]))


def _meaningful(dim) -> bool:
    return isinstance(dim, int) or (isinstance(dim, str) and bool(dim))


def _merge_output(vi, elem: int, dims, prefer_new: bool) -> None:
    """Update a graph output's type: a known dim from inference replaces one that was unknown or
    a symbol; ``prefer_new`` (shapes a pattern declared) replaces every dim."""
    old = read_type(vi.type)
    old_dims = old[1] if old else None
    if dims is None:
        return
    if old_dims is None or len(old_dims) != len(dims):
        merged = list(dims)
    else:
        merged = []
        for o, n in zip(old_dims, dims):
            if prefer_new and _meaningful(n):
                merged.append(n)
            elif isinstance(n, int) or (_meaningful(n) and not isinstance(o, int)):
                merged.append(n)
            else:
                merged.append(o)
    fresh = make_value_info(vi.name, elem or (old[0] if old else 0), merged)
    vi.type.CopyFrom(fresh.type)
