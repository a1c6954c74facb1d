"""Mutation fuzzer: mutate the sample models structurally, fuse each mutant, and compare the
fused model with the mutant in onnxruntime (custom nodes on the reference kernels, through
``surgeon.validate``). Prints one summary line; silent wrong results are counted apart from
crashes and hangs, and every finding is saved with its reproducer.

Mutations (one to three per mutant): swap a node's inputs, change an input's dims or a shape
constant, change a dtype, insert an element-wise op on the grid path (grid or theta side),
duplicate or drop a node, corrupt an attribute; and, from seed 2031 on (older seeds rebuild their
cases as they were), plant the traps that bend only far from where a probe looks (issue 27): a
clamp at +-12 or +-20, a wrap with Mod, a tiny quadratic term, rounding to 2^-16, int32 fixed
point, a branch on a dim (``Min(W, 64)``), an int input gating the grid, an initializer that is
also a graph input, a value_info with static dims the data does not have; from seed 2040 on, issue
39's classes (a Clip without bounds, a clamp as a scatter of the max, ``+ 0.5 * (W // 128)``, a
Slice bound past every probe's width); from seed 2060 on, terms the probes' sizes hide (a scale of
1 + 6e-6, a shift of 8e-6, (v + 128) - 128, 1e-8 x a column index), from 2063 constants whose
length follows a dim, with a wide round that runs every fused mutant whose last axis is dynamic
again at 65,536 columns; and one case in four that applies only exact affine steps (a scale, a
shift, a cast to double and back) to a sample that fuses: the share of those fused is the
completeness figure. Each fused mutant is compared by ``surgeon.validate``: its near draws, then
its far round (coordinates past +-20, dynamic dims past 64, integer inputs at -1 and 0). Case ``i``
of seed ``s`` is generated from ``(s, i)`` alone, so ``--replay s:i`` rebuilds it exactly.

    python benchmarks/fuzz.py [--minutes 30] [--seed 0] [--jobs 1] [--timeout 60] [--out fuzz-findings]
    python benchmarks/fuzz.py --replay 0:123
    python benchmarks/fuzz.py --smoke    # 10 cases of seed 2060 (every plant), one worker: the tests run it

--smoke writes its findings to a temporary folder unless --out is given, and prints them.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import re
import resource
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "models"
GRID_OPS = {"GridSample", "grid_sampler", "ATen", "FusedGridSample"}
ELEMENTWISE = ["Add", "Sub", "Mul", "Div", "Neg", "Abs", "Relu", "Tanh", "Sigmoid", "Floor", "Clip", "Pow"]
ENUMS = [("bilinear", "nearest", "bicubic", "linear", "cubic"), ("zeros", "border", "reflection")]
MEMORY_LIMIT = 6 << 30  # a worker that needs more is a crash, not the machine's problem


# Mutations ----------------------------------------------------------------------------------

def _fresh(model: onnx.ModelProto, hint: str) -> str:
    used = {v for n in model.graph.node for v in (*n.input, *n.output, n.name)}
    used |= {i.name for i in model.graph.input} | {t.name for t in model.graph.initializer}
    k = 0
    while f"{hint}_{k}" in used:
        k += 1
    return f"{hint}_{k}"


def _consumers(model, value):
    return [(n, i) for n in model.graph.node for i, v in enumerate(n.input) if v == value]


def _grid_path(model) -> list[str]:
    """Values the grid of some sampler is computed from (its backward slice, inputs included)."""
    producer = {o: n for n in model.graph.node for o in n.output}
    stack = [n.input[1] for n in model.graph.node if n.op_type in GRID_OPS and len(n.input) > 1]
    seen: list[str] = []
    while stack:
        value = stack.pop()
        if not value or value in seen:
            continue
        seen.append(value)
        node = producer.get(value)
        if node is not None:
            stack.extend(node.input)
    return [v for v in seen if _consumers(model, v)]


def _elem_type(model, value) -> int:
    for vi in (*model.graph.input, *model.graph.value_info, *model.graph.output):
        if vi.name == value:
            return vi.type.tensor_type.elem_type
    for t in model.graph.initializer:
        if t.name == value:
            return t.data_type
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
        for vi in inferred.graph.value_info:
            if vi.name == value:
                return vi.type.tensor_type.elem_type
    except Exception:
        pass
    return TensorProto.FLOAT


def swap_inputs(model, rng):
    nodes = [n for n in model.graph.node if len([v for v in n.input if v]) >= 2]
    if not nodes:
        return None
    node = nodes[rng.integers(len(nodes))]
    i, j = rng.choice([k for k, v in enumerate(node.input) if v], 2, replace=False)
    node.input[i], node.input[j] = node.input[j], node.input[i]
    return f"swap inputs {i},{j} of {node.op_type} {node.name or node.output[0]}"


def change_dims(model, rng):
    shapes = [t for t in model.graph.initializer if t.data_type == TensorProto.INT64 and 0 < np.prod(t.dims) <= 8]
    dims = [(vi, d) for vi in model.graph.input for d in vi.type.tensor_type.shape.dim if d.HasField("dim_value")]
    if shapes and (not dims or rng.random() < 0.5):
        tensor = shapes[rng.integers(len(shapes))]
        value = numpy_helper.to_array(tensor).copy().reshape(-1)
        k = rng.integers(value.size)
        value[k] = int(rng.choice([value[k] + 1, max(1, value[k] - 1), value[k] * 2, 1, -1]))
        tensor.CopyFrom(numpy_helper.from_array(value.reshape(numpy_helper.to_array(tensor).shape), tensor.name))
        return f"shape constant {tensor.name}[{k}] -> {value[k]}"
    if not dims:
        return None
    vi, dim = dims[rng.integers(len(dims))]
    dim.dim_value = int(rng.choice([1, 2, 3, 5, dim.dim_value + 1, dim.dim_value * 2]))
    return f"input {vi.name} dim -> {dim.dim_value}"


def change_dtype(model, rng):
    casts = [n for n in model.graph.node if n.op_type == "Cast"]
    if casts and rng.random() < 0.5:
        node = casts[rng.integers(len(casts))]
        to = int(rng.choice([TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT64]))
        for a in node.attribute:
            if a.name == "to":
                a.i = to
        return f"Cast {node.name or node.output[0]} to {TensorProto.DataType.Name(to)}"
    floats = [vi for vi in model.graph.input if vi.type.tensor_type.elem_type == TensorProto.FLOAT]
    if not floats:
        return None
    vi = floats[rng.integers(len(floats))]
    vi.type.tensor_type.elem_type = int(rng.choice([TensorProto.DOUBLE, TensorProto.FLOAT16]))
    return f"input {vi.name} dtype -> {TensorProto.DataType.Name(vi.type.tensor_type.elem_type)}"


def insert_elementwise(model, rng):
    path = _grid_path(model)
    if not path:
        return None
    value = path[rng.integers(len(path))]
    op = ELEMENTWISE[rng.integers(len(ELEMENTWISE))]
    elem = _elem_type(model, value)
    out = _fresh(model, "fuzz")
    inputs = [value]
    if op in ("Add", "Sub", "Mul", "Div", "Pow", "Clip"):
        scalar = float(rng.choice([0.0, 1.0, 2.0, -1.0, 0.5, 1e-3, float(rng.normal())]))
        dtype = helper.tensor_dtype_to_np_dtype(elem) if elem else np.float32
        for k in range(2 if op == "Clip" else 1):  # each name fresh after the last is added: no duplicates
            name = _fresh(model, "fuzz_c")
            bound = -abs(scalar) if op == "Clip" and k == 0 else abs(scalar) if op == "Clip" else scalar
            model.graph.initializer.append(numpy_helper.from_array(np.array(bound, dtype=dtype), name))
            inputs.append(name)
    readers = _consumers(model, value)
    model.graph.node.append(helper.make_node(op, inputs, [out]))
    for node, i in readers if rng.random() < 0.7 else readers[:1]:
        node.input[i] = out
    _reorder(model)
    return f"insert {op} after {value}"


def duplicate_node(model, rng):
    nodes = [n for n in model.graph.node if n.output and _consumers(model, n.output[0])]
    if not nodes:
        return None
    node = nodes[rng.integers(len(nodes))]
    clone = onnx.NodeProto()
    clone.CopyFrom(node)
    clone.name = _fresh(model, "dup")
    rename = {o: _fresh(model, f"dup_{k}") for k, o in enumerate(node.output) if o}
    clone.output[:] = [rename.get(o, o) for o in node.output]
    model.graph.node.append(clone)
    readers = _consumers(model, node.output[0])
    reader, i = readers[rng.integers(len(readers))]
    reader.input[i] = rename[node.output[0]]
    _reorder(model)
    return f"duplicate {node.op_type} {node.name or node.output[0]}"


def drop_node(model, rng):
    outputs = {o.name for o in model.graph.output}
    nodes = [n for n in model.graph.node if len(n.output) == 1 and n.input and n.input[0]
             and n.output[0] not in outputs]
    if not nodes:
        return None
    node = nodes[rng.integers(len(nodes))]
    for reader, i in _consumers(model, node.output[0]):
        reader.input[i] = node.input[0]
    model.graph.node.remove(node)
    return f"drop {node.op_type} {node.name or node.output[0]}"


def corrupt_attribute(model, rng):
    attrs = [(n, a) for n in model.graph.node for a in n.attribute
             if a.type in (onnx.AttributeProto.INT, onnx.AttributeProto.INTS, onnx.AttributeProto.STRING,
                           onnx.AttributeProto.FLOAT)]
    if not attrs:
        return None
    node, attr = attrs[rng.integers(len(attrs))]
    if attr.type == onnx.AttributeProto.INT:
        attr.i = int(rng.choice([1 - attr.i if attr.i in (0, 1) else attr.i + 1, attr.i - 1, -1, 2]))
        value = attr.i
    elif attr.type == onnx.AttributeProto.INTS and len(attr.ints):
        ints = list(attr.ints)
        ints = list(rng.permutation(ints)) if rng.random() < 0.5 else [v + int(rng.choice([-1, 1])) for v in ints]
        attr.ints[:] = [int(v) for v in ints]
        value = list(attr.ints)
    elif attr.type == onnx.AttributeProto.FLOAT:
        attr.f = float(attr.f * rng.choice([0.5, 2.0, -1.0]) + rng.choice([0.0, 0.1]))
        value = attr.f
    else:
        family = next((f for f in ENUMS if attr.s.decode(errors="replace") in f), None)
        choices = [s for s in (family or ("", "bogus")) if s != attr.s.decode(errors="replace")]
        attr.s = choices[rng.integers(len(choices))].encode()
        value = attr.s.decode()
    return f"attribute {node.op_type}.{attr.name} -> {value}"


def _plant(model, rng, build) -> str | None:
    """Insert ``build(g, value) -> (new value, what)`` after a value on the grid path."""
    path = [v for v in _grid_path(model) if _elem_type(model, v) in (TensorProto.FLOAT, TensorProto.FLOAT16,
                                                                       TensorProto.DOUBLE)]
    if not path:
        return None
    value = path[rng.integers(len(path))]
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(_elem_type(model, value)))
    readers = _consumers(model, value)

    def const(v, np_dtype=None):
        name = _fresh(model, "trap_c")
        model.graph.initializer.append(numpy_helper.from_array(np.array(v, dtype=np_dtype or dtype), name))
        return name

    def op(op_type, *inputs, **attrs):
        out = _fresh(model, "trap")
        model.graph.node.append(helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    out, what = build(op, const, value, dtype, rng)
    for node, i in readers:
        node.input[i] = out
    _reorder(model)
    return f"plant {what} after {value}"


def plant_far_trap(model, rng):
    kind = rng.integers(6)

    def build(op, const, v, dtype, rng):
        if kind == 0:
            bound = float(rng.choice([12.0, 20.0]))
            return op("Clip", v, const(-bound), const(bound)), f"a clamp at +-{bound:g}"
        if kind == 1:
            return op("Sub", op("Mod", op("Add", v, const(30.0)), const(60.0), fmod=1), const(30.0)), "a wrap (Mod)"
        if kind == 2:
            return op("Add", v, op("Mul", op("Mul", v, v), const(1e-9))), "a quadratic term of 1e-9"
        if kind == 3:
            steps = const(65536.0)
            return op("Div", op("Round", op("Mul", v, steps)), steps), "rounding to 2^-16"
        if kind == 4:
            scale = const(float(2 ** 20 if dtype != np.float16 else 2 ** 8))
            fixed = op("Cast", op("Mul", v, scale), to=TensorProto.INT32)
            return op("Div", op("Cast", fixed, to=_elem_type(model, v)), scale), "int32 fixed point"
        k = _fresh(model, "k")
        model.graph.input.append(helper.make_tensor_value_info(k, TensorProto.INT64, [1]))
        gate = op("Cast", op("Greater", k, const([0], np.int64)), to=_elem_type(model, v))
        return op("Mul", v, gate), f"a gate by int input {k} > 0"
    return _plant(model, rng, build)


def plant_dim_branch(model, rng):
    """``Min(dim, 64)`` where a Shape's output (or a Gather of it) is read."""
    shapes = [n for n in model.graph.node if n.op_type in ("Shape", "Gather") and n.output
              and any(r.op_type != "Shape" for r, _ in _consumers(model, n.output[0]))]
    shapes = [n for n in shapes if n.op_type == "Shape" or any(p.op_type == "Shape" and p.output[0] == n.input[0]
                                                             for p in model.graph.node)]
    if not shapes:
        return None
    node = shapes[rng.integers(len(shapes))]
    value, readers = node.output[0], _consumers(model, node.output[0])
    limit = _fresh(model, "trap_c")
    model.graph.initializer.append(numpy_helper.from_array(np.array([64], np.int64), limit))
    out = _fresh(model, "trap")
    model.graph.node.append(helper.make_node("Min", [value, limit], [out]))
    for reader, i in readers:
        reader.input[i] = out
    _reorder(model)
    return f"plant Min(., 64) after {value}"


def plant_overridable(model, rng):
    """An initializer the grid reads listed among the graph inputs (a default a caller may
    override, IR >= 4)."""
    listed = {i.name for i in model.graph.input}
    path = set(_grid_path(model))
    inits = [t for t in model.graph.initializer if t.name in path and t.name not in listed]
    if not inits:
        return None
    tensor = inits[rng.integers(len(inits))]
    model.graph.input.append(helper.make_tensor_value_info(tensor.name, tensor.data_type, list(tensor.dims)))
    return f"list initializer {tensor.name} as a graph input"


def plant_value_info_lie(model, rng):
    """A value_info on the grid path whose static dims the data does not have."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:
        return None
    path = set(_grid_path(model))
    known = [vi for vi in inferred.graph.value_info if vi.name in path and vi.type.tensor_type.shape.dim]
    if not known:
        return None
    vi = onnx.ValueInfoProto()
    vi.CopyFrom(known[rng.integers(len(known))])
    dims = vi.type.tensor_type.shape.dim
    d = dims[rng.integers(len(dims))]
    d.dim_value = (d.dim_value or 16) + int(rng.choice([1, 3, 7]))
    for old in [v for v in model.graph.value_info if v.name == vi.name]:
        model.graph.value_info.remove(old)
    model.graph.value_info.append(vi)
    return f"value_info {vi.name} declares a dim of {d.dim_value}"


def plant_rule_trap(model, rng):
    """Issue 39's classes: a value whose bend hides in a rule's assumption (Clip without bounds
    clamps an infinity; a scatter of the max is a clamp; W // 128 as a coefficient; a fixed Slice
    bound past every probe's width)."""
    kind = rng.integers(4)
    widths = [n.output[0] for n in model.graph.node if n.op_type == "Shape" and n.output]

    def build(op, const, v, dtype, rng):
        if kind == 0:
            return op("Clip", v), "a Clip without bounds"
        if kind == 1:
            flat = op("Reshape", v, const([-1], np.int64))
            index = op("Range", const(0, np.int64), op("Size", flat), const(1, np.int64))
            floor = op("Expand", const([-20.0]), op("Shape", flat))
            return op("Reshape", op("ScatterElements", flat, index, floor, axis=0, reduction="max"),
                      op("Shape", v)), "a clamp at -20 as ScatterElements(max)"
        if kind == 2 and widths:
            w = op("Gather", widths[rng.integers(len(widths))], const([-1], np.int64), axis=0)
            step = op("Cast", op("Div", w, const([128], np.int64)), to=_elem_type(model, v))
            return op("Add", v, op("Mul", step, const(0.5))), "+ 0.5 * (W // 128)"
        return op("Slice", v, const([0], np.int64), const([100], np.int64), const([-2], np.int64)), \
            "Slice(0, 100) along the second-last axis"
    return _plant(model, rng, build)


def plant_affine_map(model, rng):
    """An exact affine step on the grid path (a scale, a shift, a widening and back): the grid stays
    affine_grid of an affine map of theta, so the mutant must still fuse (completeness)."""
    kind = rng.integers(3)

    def build(op, const, v, dtype, rng):
        if kind == 0:
            return op("Mul", v, const(float(rng.choice([0.5, 1.25, -1.0])))), "a scale"
        if kind == 1:
            return op("Add", v, const(float(rng.choice([0.125, -0.25])))), "a shift"
        return op("Cast", op("Cast", v, to=TensorProto.DOUBLE), to=_elem_type(model, v)), "a cast to double and back"
    return _plant(model, rng, build)


def plant_hidden_term(model, rng):
    """Issue 39's class 7 and its kin: a term the probes' sizes hide (a scale of 1 + 6e-6, a shift of
    8e-6, coordinates rounded to 2^-16 by (v + 128) - 128, 1e-8 x the column index along a grid's
    width). Each is under every tolerance at the sizes validate draws, and a fraction of a pixel or
    more at 65,536 columns: the wide round (``_wide_round``) runs both models there."""
    kind = rng.integers(4)
    if rng.integers(2):  # where the sizes follow the image, the wide round can then run the mutant
        _free_last_axis(model)

    def build(op, const, v, dtype, rng):
        if kind == 0:
            return op("Mul", v, const(1 + 6e-6)), "hidden: a scale of 1 + 6e-6"
        if kind == 1:
            return op("Add", v, const(8e-6)), "hidden: a shift of 8e-6"
        if kind == 2:
            return op("Sub", op("Add", v, const(128.0)), const(128.0)), "hidden: (v + 128) - 128"
        width = op("Squeeze", _second_last(op, const, v))
        column = op("Cast", op("Range", const(0, np.int64), width, const(1, np.int64)), to=_elem_type(model, v))
        along = op("Unsqueeze", column, const([1], np.int64))  # [W, 1]: broadcast along the second-last axis
        return op("Add", v, op("Mul", along, const(1e-8))), "hidden: 1e-8 x the index along the second-last axis"
    return _plant(model, rng, build)


def plant_dim_constant(model, rng):
    """Issue 39's class 1: a "constant" whose length follows a dim, summed into a size and used as
    a coefficient (ones expanded along the second-last axis, counted by ReduceSum or as
    ConstantOfShape's Size): ``1e-3 * Min(count, 128)`` bends past 128 columns; ``1e-3 * count``
    alone is affine in the dims (it must fuse or be refused, and be right at 65,536 columns)."""
    kind = rng.integers(3)

    def build(op, const, v, dtype, rng):
        width = _second_last(op, const, v)
        if kind == 1:
            count = op("Cast", op("Size", op("ConstantOfShape", width)), to=_elem_type(model, v))
        else:
            count = op("ReduceSum", op("Expand", const([1.0]), width), const([0], np.int64), keepdims=0)
        what = "a count of ones along the second-last axis"
        if kind != 2:
            count, what = op("Min", count, const(128.0)), f"Min({what}, 128)"
        return op("Add", v, op("Mul", count, const(1e-3))), f"dim constant: 1e-3 x {what}"
    return _plant(model, rng, build)


def _second_last(op, const, v) -> str:
    """[the extent of v's second-last axis] (W of a grid [N, H, W, 2])."""
    return op("Gather", op("Shape", v), const([-2], np.int64), axis=0)


def _free_last_axis(model) -> None:
    """Every image-like input's last axis made dynamic, and the value_info that pinned it dropped."""
    for vi in model.graph.input:
        dims = vi.type.tensor_type.shape.dim
        if len(dims) in (4, 5) and vi.type.tensor_type.elem_type in (TensorProto.FLOAT, TensorProto.FLOAT16):
            dims[-1].Clear()
            dims[-1].dim_param = "free_width"
    del model.graph.value_info[:]
    for vi in model.graph.output:
        for d in vi.type.tensor_type.shape.dim:
            d.Clear()


MUTATIONS = [swap_inputs, change_dims, change_dtype, insert_elementwise, insert_elementwise, duplicate_node,
             drop_node, corrupt_attribute]
PLANTS = [plant_far_trap, plant_far_trap, plant_dim_branch, plant_overridable, plant_value_info_lie]
PLANTS_FROM = 2031  # seeds from here plant issue 27's traps too; older seeds rebuild their cases as they were
RULE_PLANTS = [plant_rule_trap, plant_affine_map]
RULE_PLANTS_FROM = 2040  # seeds from here plant issue 39's classes and measure completeness
HIDDEN_PLANTS_FROM = 2060  # seeds from here plant terms the probes' sizes hide, and run the wide round
DIM_CONSTANT_FROM = 2063  # seeds from here plant constants whose length follows a dim (issue 39's class 1)
AFFINE_ONLY = {"plant_affine_map"}  # mutations after which the grid is still affine (completeness)


def mutations_for(seed: int) -> list:
    """The table a seed draws from: each generation's plants from its first seed on (older seeds
    rebuild their cases as they were)."""
    generations = [(PLANTS_FROM, PLANTS), (RULE_PLANTS_FROM, RULE_PLANTS), (HIDDEN_PLANTS_FROM, [plant_hidden_term]),
                   (DIM_CONSTANT_FROM, [plant_dim_constant])]
    return MUTATIONS + [m for first, plants in generations if seed >= first for m in plants]


def _reorder(model) -> None:
    """Nodes in topological order again after an insertion."""
    graph, ordered = model.graph, []
    done = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    pending = list(graph.node)
    done.add("")
    while pending:
        ready = [n for n in pending if all(v in done for v in n.input)]
        if not ready:  # a cycle or an outer value: leave the rest as they were
            ordered += pending
            break
        for n in ready:
            ordered.append(n)
            done.update(n.output)
            pending.remove(n)
    copies = [onnx.NodeProto() for _ in ordered]
    for c, n in zip(copies, ordered):
        c.CopyFrom(n)
    del graph.node[:]
    graph.node.extend(copies)


def make_case(seed: int, index: int, samples: list[str]):
    """The mutant of case ``(seed, index)``: (sample name, mutant, mutations applied, whether
    they were all affine steps)."""
    rng = np.random.default_rng([seed, index])
    name = samples[rng.integers(len(samples))]
    model = onnx.load(SAMPLES / name)
    done = []
    table = mutations_for(seed)
    # seeds with issue 39's plants: one case in four applies only affine steps (completeness)
    affine_case = seed >= RULE_PLANTS_FROM and rng.integers(4) == 0
    for _ in range(int(rng.integers(1, 4))):
        mutate = plant_affine_map if affine_case else table[rng.integers(len(table))]
        try:
            what = mutate(model, rng)
        except Exception as exc:  # a mutation that does not apply here
            what = f"{mutate.__name__} skipped ({type(exc).__name__})"
        if what:
            done.append(what)
    return name, model, done, affine_case


# Running one case -------------------------------------------------------------------------

def run_case(seed: int, index: int, samples: list[str], manifest: dict) -> dict:
    """Fuse and compare one mutant; returns its verdict (the worker's whole job)."""
    import surgeon
    from surgeon.errors import SurgeonError
    from surgeon.rewrite.plugins import resolve
    from surgeon.validate.draws import input_drawers
    from surgeon.runtime.inputs import random_inputs

    name, mutant, mutations, affine_case = make_case(seed, index, samples)
    verdict = {"case": f"{seed}:{index}", "sample": name, "mutations": mutations}
    if affine_case and mutations and manifest.get(name, {}).get("expected") == "fuse":
        verdict["affine"] = True  # still affine: counted for completeness
    declared = {vi.name for vi in mutant.graph.input}
    shapes = {k: v for k, v in manifest.get(name, {}).get("inputs", {}).items() if k in declared}
    try:
        result = surgeon.fuse(mutant, input_shapes=None)
    except SurgeonError as exc:
        return {**verdict, "kind": "refused", "detail": str(exc)}
    except Exception as exc:
        return {**verdict, "kind": "crash", "detail": "".join(traceback.format_exception(exc))[-2000:]}
    raised = [r.reason for r in result.report.refusals if " raised " in r.reason]
    if raised:  # a pattern's exception, turned into a near miss: no user sees it, but it is a bug
        verdict["raised"] = raised[0]
    if not result.report.rewrites:  # a near miss is a refusal with a reason, not "nothing to do"
        if result.report.refusals:
            return {**verdict, "kind": "refused", "detail": result.report.refusals[0].reason}
        return {**verdict, "kind": "unchanged"}
    verdict["rewrites"] = len(result.report.rewrites)
    try:  # the inputs validate would draw (the fused model's drawers), given to both models
        feeds, _ = random_inputs(mutant, _fixed(mutant, shapes), drawers=input_drawers(result.model, resolve(None)))
        first = surgeon.run(mutant, feeds)
        if not all(_same(first, surgeon.run(mutant, feeds)) for _ in range(2)):  # reads memory never written
            return {**verdict, "kind": "invalid", "detail": "the mutant's outputs change from run to run"}
    except SurgeonError as exc:
        return {**verdict, "kind": "invalid", "detail": str(exc)}  # the mutant itself does not run
    except Exception as exc:
        return {**verdict, "kind": "invalid", "detail": f"{type(exc).__name__}: {exc}"}
    outcome = {}
    for engine in ("reference", "auto"):  # the reference kernels first; the op library says whose bug
        try:
            report = surgeon.validate(mutant, result.model, feeds, max_mismatch=1e-3, engine=engine)
            failures = report.failures()
            outcome[engine] = None if report.passed else (failures[0] if failures else "nothing compared")
        except SurgeonError as exc:
            if "the original does not run" in str(exc):  # it runs only once an optimiser rewrote it
                return {**verdict, "kind": "invalid", "detail": str(exc)}
            outcome[engine] = str(exc)
        except Exception as exc:
            return {**verdict, "kind": "crash", "detail": "".join(traceback.format_exception(exc))[-2000:]}
        if outcome[engine] is None:
            break
    if outcome["reference"] is None:
        wide = _wide_round(mutant, result.model, shapes) if seed >= HIDDEN_PLANTS_FROM else None
        if isinstance(wide, str):
            return {**verdict, "kind": "wrong", "detail": wide, "wide": True}
        return {**verdict, "kind": "fused", "wide": bool(wide)}
    detail = f"engine reference: {outcome['reference']}; engine auto: {outcome.get('auto') or 'passed'}"
    if all(_runtime_failure(text) for text in outcome.values() if text):
        kind = "engine" if outcome.get("auto") is None else "broken"  # runs in one engine, not the other
    else:
        kind = "wrong"
    return {**verdict, "kind": kind, "detail": detail}


WIDE = 65536  # columns: a term of 1e-8 per column moves coordinates by ~10 pixels there


def _wide_round(mutant, fused, shapes: dict) -> str | bool:
    """Both models once more at a size no probe and no validate draw tries: every input whose last
    axis is dynamic gets ``WIDE`` there and 2 on its other dynamic axes (so it stays small), and a ramp
    as its values (white noise would let validate's rounding probe explain whole pixels away). What
    differed, True when they agree, False when there is no such input or the mutant does not run
    there (sizes it ties elsewhere)."""
    import surgeon
    from surgeon.errors import SurgeonError
    from surgeon.runtime.inputs import random_inputs

    wide = {}
    for vi in mutant.graph.input:
        dims = list(vi.type.tensor_type.shape.dim)
        if len(dims) >= 3 and not dims[-1].HasField("dim_value"):
            known = shapes.get(vi.name) or [1] * len(dims)
            wide[vi.name] = [d.dim_value if d.HasField("dim_value") else (WIDE if i == len(dims) - 1 else
                             min(2, known[i]) if i >= 2 else known[i]) for i, d in enumerate(dims)]
    if not wide:
        return False
    try:
        feeds, _ = random_inputs(mutant, {**_fixed(mutant, shapes), **wide})
    except Exception:  # noqa: BLE001 - inputs it cannot draw at this size: nothing to compare
        return False
    for name in wide:  # a ramp, each value its column: a coordinate moved by d pixels moves outputs by d
        if feeds[name].dtype.kind == "f":
            feeds[name] = np.broadcast_to(np.arange(WIDE, dtype=feeds[name].dtype), feeds[name].shape).copy()
    try:
        report = surgeon.validate(mutant, fused, feeds, max_mismatch=1e-3, engine="reference", far=False, quiet=True)
    except SurgeonError as exc:
        if "the original does not run" in str(exc):  # sizes the mutant ties elsewhere
            return False
        return f"at {WIDE} columns: {exc}"
    if report.passed:
        return True
    failures = report.failures()
    return f"at {WIDE} columns: {failures[0] if failures else 'nothing compared'}"


def _same(a: dict, b: dict) -> bool:
    """Two runs of one model gave the same outputs (NaN where NaN)."""
    if a.keys() != b.keys():
        return False
    for name in a:
        x, y = np.asarray(a[name]), np.asarray(b[name])
        if x.shape != y.shape or not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
            return False
    return True


def _runtime_failure(text: str) -> bool:
    """The fused model did not run (as opposed to running and computing something else)."""
    return any(s in text for s in ("onnxruntime failed", "onnxruntime cannot", "kernel for", "failed:"))


def _fixed(model, shapes: dict) -> dict:
    """Manifest dims for the inputs whose dims are not fixed in the model."""
    out = {}
    for vi in model.graph.input:
        dims = vi.type.tensor_type.shape.dim
        if vi.name in shapes and len(shapes[vi.name]) == len(dims) and any(not d.HasField("dim_value") for d in dims):
            out[vi.name] = [d.dim_value if d.HasField("dim_value") else s for d, s in zip(dims, shapes[vi.name])]
    return out


def warm_up() -> None:
    """Import everything and build the kernels before the first case is timed."""
    import surgeon

    sample = SAMPLES / "stn_ts_opset20_2d.onnx"
    surgeon.validate(sample, surgeon.fuse(sample).model, engine="reference")


def worker(conn, samples, manifest) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    try:
        warm_up()
    except Exception as exc:
        conn.send({"kind": "crash", "case": "warm-up", "detail": f"{type(exc).__name__}: {exc}"})
    conn.send("ready")
    while True:
        job = conn.recv()
        if job is None:
            return
        try:
            conn.send(run_case(*job, samples, manifest))
        except BaseException as exc:  # MemoryError and the like: still a verdict
            conn.send({"case": f"{job[0]}:{job[1]}", "kind": "crash", "detail": f"{type(exc).__name__}: {exc}"})


class Worker:
    """One worker process; killed and replaced when a case hangs or kills it. A case is timed
    from when it is handed to a warmed-up worker."""

    STARTUP = 900.0  # seconds a new worker may take to import and build the kernels

    def __init__(self, samples, manifest):
        self.args = (samples, manifest)
        self.start()

    def start(self):
        self.conn, child = mp.Pipe()
        self.proc = mp.get_context("spawn").Process(target=worker, args=(child, *self.args), daemon=True)
        self.proc.start()
        self.job, self.ready, self.since = None, False, time.monotonic()

    @property
    def idle(self) -> bool:
        return self.ready and self.job is None

    def submit(self, job):
        self.job, self.since = job, time.monotonic()
        self.conn.send(job)

    def poll(self, timeout: float) -> dict | None:
        case = f"{self.job[0]}:{self.job[1]}" if self.job else "warm-up"
        try:
            if self.conn.poll(0.05):
                message = self.conn.recv()
                if message == "ready":
                    self.ready = True
                    return None
                if self.job is not None:
                    self.job = None
                return message
        except (EOFError, OSError):
            pass
        if self.job is None and self.ready:
            return None
        if not self.proc.is_alive():
            verdict = {"case": case, "kind": "crash", "detail": f"worker died (exit {self.proc.exitcode})"}
        elif time.monotonic() - self.since > (timeout if self.ready else self.STARTUP):
            verdict = {"case": case, "kind": "hang", "detail": f"no verdict in {timeout:.0f} s"}
            self.proc.kill()
        else:
            return None
        self.proc.join()
        self.start()
        return verdict


# The campaign -----------------------------------------------------------------------------

def save_finding(out: Path, verdict: dict, samples: list[str]) -> None:
    """The mutant as a file, and a line with its verdict and how to replay it."""
    out.mkdir(parents=True, exist_ok=True)
    entry = dict(verdict)
    if ":" in verdict["case"]:
        seed, index = map(int, verdict["case"].split(":"))
        name, mutant, mutations, _ = make_case(seed, index, samples)
        path = out / f"{verdict['kind'] if verdict['kind'] != 'fused' else 'raised'}-{seed}-{index}.onnx"
        onnx.save(mutant, path)
        entry.update(sample=name, mutations=mutations, model=str(path),
                     reproduce=f"python benchmarks/fuzz.py --replay {seed}:{index}")
    with open(out / "findings.jsonl", "a") as f:
        f.write(json.dumps(entry) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--cases", type=int, default=None, help="stop after this many cases")
    parser.add_argument("--seed", type=int, default=None, help="default 0 (--smoke: 2060, the first with every plant "
                                                                "and the wide round)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a case counts as a hang")
    parser.add_argument("--out", default=None, help="where findings and their models go (default fuzz-findings)")
    parser.add_argument("--replay", metavar="SEED:INDEX", help="run one case here and print its verdict")
    parser.add_argument("--smoke", action="store_true", help="check the script in seconds: 10 cases, one worker")
    args = parser.parse_args()
    samples = sorted(p.name for p in SAMPLES.glob("*.onnx"))
    manifest = json.loads((SAMPLES / "manifest.json").read_text())
    if args.replay:
        seed, index = map(int, args.replay.split(":"))
        print(json.dumps(run_case(seed, index, samples, manifest), indent=1))
        return
    if not args.smoke:
        args.seed = 0 if args.seed is None else args.seed
        campaign(args, samples, manifest, args.out or "fuzz-findings")
        return
    args.seed = HIDDEN_PLANTS_FROM if args.seed is None else args.seed
    args.cases, args.jobs, args.minutes = 10, 1, 5.0  # the minutes only bound a machine far slower than CI
    with tempfile.TemporaryDirectory(prefix="fuzz-smoke-") as tmp:
        out = args.out or tmp
        campaign(args, samples, manifest, out)
        found = Path(out) / "findings.jsonl"
        if not args.out and found.exists():  # the folder goes: show what it held
            sys.stdout.write(found.read_text())


def campaign(args, samples: list[str], manifest: dict, out: str) -> None:
    """Cases (args.seed, 0), (args.seed, 1)... on args.jobs workers until args.minutes or
    args.cases; findings saved in ``out``; prints the summary line."""
    workers = [Worker(samples, manifest) for _ in range(args.jobs)]
    counts, start, index = Counter(), time.monotonic(), 0
    missed = Counter()  # affine mutants not fused, by reason (numbers and names folded)
    deadline = start + args.minutes * 60
    bad = ("crash", "hang", "wrong", "broken", "engine")
    more = lambda: time.monotonic() < deadline and (args.cases is None or index < args.cases)  # noqa: E731
    while True:
        for w in workers:
            if w.idle and more():
                w.submit((args.seed, index))
                index += 1
            verdict = w.poll(args.timeout)
            if verdict is not None:
                counts[verdict["kind"]] += 1
                if verdict.get("affine") and verdict["kind"] != "invalid":
                    counts["affine"] += 1
                    counts["affine fused"] += verdict["kind"] == "fused"
                    if verdict["kind"] != "fused":
                        missed[_folded(verdict.get("detail") or verdict["kind"])] += 1
                counts["rewrites"] += verdict.get("rewrites", 0)
                counts["raised"] += "raised" in verdict
                counts["wide"] += bool(verdict.get("wide"))
                if any(m.startswith("plant hidden") for m in verdict["mutations"]):
                    counts["hidden"] += 1
                    counts[f"hidden {verdict['kind']}"] += 1
                    counts["hidden wide"] += bool(verdict.get("wide"))
                if verdict["kind"] in bad or "raised" in verdict:
                    save_finding(Path(out), verdict, samples)
        if not more() and all(w.job is None for w in workers):
            break
    for w in workers:
        w.conn.send(None)
    total = sum(counts[k] for k in ("fused", "unchanged", "refused", "invalid", *bad))
    print(f"fuzz: {total} mutants in {(time.monotonic() - start) / 60:.1f} min (seed {args.seed}): "
          f"{counts['fused']} fused and equal ({counts['rewrites']} rewrites), {counts['unchanged']} unchanged, "
          f"{counts['refused']} refused cleanly, {counts['invalid']} fused but not runnable as mutated; "
          f"silent wrong results {counts['wrong']} (+{counts['broken']} fused models that do not run), "
          f"crashes {counts['crash']}, hangs {counts['hang']}; reference-engine failures {counts['engine']}, "
          f"pattern exceptions {counts['raised']}; completeness {counts['affine fused']} of {counts['affine']} "
          f"affine mutants fused; hidden-term plants {counts['hidden']}: {counts['hidden fused']} fused "
          f"({counts['hidden wide']} also equal at {WIDE} columns), {counts['hidden refused']} refused; wide round "
          f"{counts['wide']}" + (f"; findings in {out}/findings.jsonl"
                                                      if any(counts[k] for k in (*bad, "raised")) else ""))
    for reason, count in missed.most_common(8):  # completeness's other side: what the missed ones were told
        print(f"  missed affine: {count} x {reason}")


def _folded(reason: str) -> str:
    """A refusal with its numbers and quoted names folded, so that one cause counts once."""
    reason = re.sub(r"'[^']*'", "'…'", reason.splitlines()[0] if reason else "")
    return re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "#", reason)[:160]


if __name__ == "__main__":
    main()
