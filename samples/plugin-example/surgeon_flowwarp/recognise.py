"""Recognise a flow warp by what its grid computes, whatever ops spell it.

From the sampler's grid, walk back to a cut: one run-time tensor shaped like a flow field
``[N, 2, H, W]`` (every other leaf constant or a shape). Evaluate the region on probe flows
and ask: is the grid at zero flow the identity grid, and does the grid move by a constant
scale of the flow, channel 0 along x and channel 1 along y? The scale tells the units
(normalised, or input pixels). Candidates are tried nearest first: RAFT adds the base to the
flow *before* the permute, so the nearest flow-shaped value there is ``base + flow``, which
fails the identity test, and the next one out is the flow itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import TensorProto, helper

from surgeon import SurgeonError

from .kernel import base_grid, flow_scale

# Cheap ops the walk may pass through on its way to the flow; anything else ends it.
WALK_OPS = frozenset({
    "Add", "Sub", "Mul", "Div", "Neg", "Abs", "Identity", "Cast", "CastLike", "Transpose",
    "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Expand", "Tile", "Concat", "Split", "Slice",
    "Gather", "Range", "ConstantOfShape", "Where", "Max", "Min", "Floor", "Ceil", "Round",
    "Equal", "Less", "Greater", "Not", "And", "Or", "Pow", "Sqrt", "Mod", "Pad",
})
SHAPE_OPS = ("Shape", "Size")
MAX_REGION = 96  # nodes; a warp's grid takes a few dozen at most
MAX_CANDIDATES = 4
PROBE_BATCH = 2
PROBE_SIZES = ((5, 7, 6, 9, 4, 11), (8, 4, 9, 6, 7, 5))  # values for symbolic dims, two rounds
PROBE_SCALE = 4.0  # flows of several units: a clamp or other kink in the chain shows


@dataclass
class Found:
    flow: str
    nodes: list
    units: str


@dataclass
class Outcome:
    found: Found | None = None
    near_miss: str | None = None  # a reason worth reporting when nothing was found


def recognise(ctx, sampler, align_corners: int) -> Outcome:
    grid = sampler.inputs[1]
    outcome = Outcome()
    for flow in _candidates(ctx, grid):
        try:
            found, reason = _try_cut(ctx, sampler, flow, align_corners)
        except SurgeonError:  # the region does not run with this cut: not ours
            continue
        if found is not None:
            return Outcome(found)
        outcome.near_miss = outcome.near_miss or reason
    return outcome


def _is_flow_shaped(dims) -> bool:
    return dims is not None and len(dims) == 4 and dims[1] == 2


def _candidates(ctx, grid: str) -> list[str]:
    """Run-time flow-shaped values behind the grid, nearest first."""
    found, seen, frontier, visited = [], {grid}, [grid], 0
    while frontier and visited < MAX_REGION and len(found) < MAX_CANDIDATES:
        next_frontier = []
        for value in frontier:
            if ctx.constant(value) is not None:
                continue
            if value != grid and _is_flow_shaped(ctx.shape(value)):
                found.append(value)
            node = ctx.producer(value)
            if node is None or node.op_type in SHAPE_OPS or node.domain not in ("", "ai.onnx") \
                    or node.op_type not in WALK_OPS:
                continue
            visited += 1
            for v in node.inputs:
                if v and v not in seen:
                    seen.add(v)
                    next_frontier.append(v)
        frontier = next_frontier
    return found


@dataclass
class _Region:
    nodes: list
    shape_leaves: dict  # Shape output -> (dims of the graph input it reads, start, end, is_size)
    constants: dict  # computed constant values -> array (fed, so the probe needs no folding)


def _region(ctx, grid: str, flow: str) -> _Region | None:
    nodes, shape_leaves, constants = {}, {}, {}
    stack, seen = [grid], set()
    while stack:
        value = stack.pop()
        if not value or value in seen or value == flow:
            continue
        seen.add(value)
        node = ctx.producer(value)
        constant = ctx.constant(value)
        if constant is not None:
            if node is not None:
                constants[value] = constant
            continue
        if node is None:
            return None  # a run-time value besides the flow
        nodes[id(node)] = node
        if len(nodes) > MAX_REGION:
            return None
        if node.op_type in SHAPE_OPS and ctx.is_graph_input(node.inputs[0]):
            # The probe gives the model's inputs concrete dims; any other Shape is computed
            # in the region (from the probe flow, or from values computed from the inputs').
            source = node.inputs[0]
            shape_leaves[value] = (ctx.shape(source), node.attr("start", 0), node.attr("end", None),
                                   node.op_type == "Size")
            continue
        stack.extend(node.inputs)
    return _Region(sorted(nodes.values(), key=lambda n: n.position), shape_leaves, constants)


def _assign(symbols: list, sizes: tuple, batch_symbol) -> dict:
    table, k = {}, 0
    for s in symbols:
        if s in table:
            continue
        if s == batch_symbol:
            table[s] = PROBE_BATCH
        else:
            table[s] = sizes[k % len(sizes)]
            k += 1
    return table


def _resolve(dims, table: dict):
    if dims is None or any(d is None or (isinstance(d, str) and d not in table) for d in dims):
        return None
    return [table[d] if isinstance(d, str) else int(d) for d in dims]


def _try_cut(ctx, sampler, flow: str, ac: int):
    """(Found, None) when the cut reproduces a flow warp; else (None, near-miss reason or None)."""
    x, grid = sampler.inputs[0], sampler.inputs[1]
    region = _region(ctx, grid, flow)
    if region is None:
        return None, None
    flow_dims, x_dims = ctx.shape(flow), ctx.shape(x)
    if x_dims is None or len(x_dims) != 4:
        return None, None
    dim_lists = [flow_dims, x_dims] + [info[0] or () for info in region.shape_leaves.values()]
    symbols = [d for dims in dim_lists for d in dims if isinstance(d, str)]
    batch = flow_dims[0] if isinstance(flow_dims[0], str) else None
    dynamic = any(s != batch for s in symbols)
    units = None
    for sizes in PROBE_SIZES[: 2 if dynamic else 1]:
        table = _assign(symbols, sizes, batch)
        verdict, reason = _probe(ctx, region, grid, flow, x_dims, table, ac)
        if verdict is None or (units is not None and verdict != units):
            return None, reason
        units = verdict
    nodes = ctx.exclusive(region.nodes + [sampler], list(sampler.outputs))
    return Found(flow, nodes, units), None


def _probe(ctx, region: _Region, grid: str, flow: str, x_dims, table: dict, ac: int):
    """Units of the flow ('normalized' / 'pixels') at one size assignment, or (None, reason)."""
    flow_shape = _resolve(ctx.shape(flow), table)
    in_shape = _resolve(x_dims, table)
    if flow_shape is None or in_shape is None:
        return None, None
    feeds = dict(region.constants)
    for value, (dims, start, end, is_size) in region.shape_leaves.items():
        resolved = _resolve(dims, table)
        if resolved is None:
            return None, None
        feeds[value] = np.array(np.prod(resolved) if is_size else resolved[start:end], dtype=np.int64)
    elem = ctx.dtype(flow) or TensorProto.FLOAT
    if elem not in (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE):
        return None, None
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    tolerance = max(1e-5, 8 * float(np.finfo(dtype).eps))  # float16 graphs round their grid
    probe = (PROBE_SCALE * np.random.default_rng(0).standard_normal(flow_shape)).astype(dtype)
    at_zero = ctx.evaluate([grid], {**feeds, flow: np.zeros(flow_shape, dtype)})[0].astype(np.float64)
    moved = ctx.evaluate([grid], {**feeds, flow: probe})[0].astype(np.float64)
    n, _, h, w = flow_shape
    if at_zero.shape != (n, h, w, 2):
        return None, None
    base = base_grid(h, w, bool(ac))
    if not np.allclose(at_zero, base, atol=tolerance, rtol=0):
        if np.allclose(at_zero, base_grid(h, w, not ac), atol=tolerance, rtol=0):
            return None, (f"the base grid is the align_corners={1 - ac} identity grid but the sampler has "
                          f"align_corners={ac}; FlowWarp has one flag for both")
        return None, None
    offset = np.moveaxis(probe.astype(np.float64), 1, -1)  # [N, H, W, 2]
    delta = moved - at_zero
    scale = (delta * offset).sum(axis=(0, 1, 2)) / (offset * offset).sum(axis=(0, 1, 2))
    if not np.allclose(delta, offset * scale, atol=tolerance * (1 + np.abs(moved).max()), rtol=0):
        return None, None  # the grid is not the base plus a scaled flow
    for units in ("normalized", "pixels"):
        expected = np.array(flow_scale(units, in_shape[2:], bool(ac)))
        if np.allclose(scale, expected, rtol=10 * tolerance, atol=0):
            return units, None
    return None, (f"the flow is scaled by ({scale[0]:.6g}, {scale[1]:.6g}): neither normalised units "
                  f"(1, 1) nor input pixels {tuple(round(v, 6) for v in flow_scale('pixels', in_shape[2:], bool(ac)))}")
