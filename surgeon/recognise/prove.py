"""Prove what a region computes, by one rule per op: an abstract interpretation, element by
element, at one set of concrete dims.

``prove`` walks the region in graph order. Every value gets an ``Abstract``: which of its
elements are constants, shape-derived, affine in the variables (and which variable elements each
reads), or neither. The concrete values at the probe's dims come from one evaluation of the
region; they only settle what is concrete anyway (indices, shapes, constants). Nothing is
concluded from the values the variables happen to take: a clamp at 20 is a clamp whatever the
probe's variables, and ``Min(W, 64)`` is a branch whatever the probe's W.

Ops outside the table make everything that depends on the variables "neither" (and refuse on
shape-derived values); a pattern adds rules for ops it knows (``rules``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import arith, movement
from .axes import propagate
from .positions import growth
from .bounds import branch
from .elements import AFFINE, DIMS, KNOWN, OTHER, Abstract, NotProved, branch_of, known, mark_branch

Rule = Callable  # (node, ins, vals, outs) -> list[Abstract]

_FLOAT_WIDTH = {np.dtype(np.float16): 2, np.dtype(np.float32): 4, np.dtype(np.float64): 8}


def _sub(node, ins, vals, outs):
    return arith.add(node, ins, vals, outs, sign=-1.0)


def _cast(node, ins, vals, outs):
    a = ins[0]
    source, target = np.asarray(vals[0]).dtype, np.asarray(outs[0]).dtype
    if target.kind in "biu" and source.kind == "f":
        result = arith.same(node, ins[:1], vals[:1], outs)[0]
        if a.top() >= AFFINE:
            result.kind = np.where(result.kind >= AFFINE, OTHER, result.kind).astype(np.int8)
            result.why = result.why or f"{node.label} casts values that depend on the variables to {target} (it " \
                                       "rounds, and wraps past the type's range)"
        # truncating a size computed in floats steps where no probe looks (int(W * 0.3))
        pinned = (a.lo == a.hi) & (np.floor(a.lo) == a.lo)
        return [mark_branch(result, (result.kind == DIMS) & ~pinned, branch(node.label, "truncates", ins))]
    if target.kind == "f" and source.kind in "iu" and a.data and (a.kind == DIMS).any():
        raise NotProved(f"{node.label} turns the run-time integer input {a.data!r} into data; such an input may "
                        "only set sizes")
    return arith.same(node, ins[:1], vals[:1], outs)


TABLE: dict[str, Rule] = {
    "Add": arith.add, "Sub": _sub, "Mul": arith.mul, "Div": arith.div, "Neg": arith.neg,
    "Sum": arith.variadic_add, "Mean": arith.variadic_add,
    "Cast": _cast, "CastLike": _cast,
    "MatMul": arith.matmul, "Gemm": arith.gemm, "Einsum": arith.einsum, "CumSum": arith.cumsum,
    "ReduceSum": arith.reduce_sum, "ReduceMean": arith.reduce_sum, "ReduceProd": arith.reduce_prod,
    "ReduceMax": arith.reduce_extreme, "ReduceMin": arith.reduce_extreme, "ReduceL1": arith.reduce_extreme,
    "ReduceL2": arith.reduce_extreme, "ReduceSumSquare": arith.reduce_extreme,
    "ReduceLogSumExp": arith.reduce_extreme,
    "Abs": arith.decided_unary, "Relu": arith.decided_unary, "Sign": arith.decided_unary,
    "Floor": arith.rounding, "Ceil": arith.rounding, "Round": arith.rounding,
    "Reciprocal": arith.reciprocal, "Pow": arith.power,
    "Min": arith.extreme, "Max": arith.extreme, "Clip": arith.extreme, "Mod": arith.branch_only,
    "Equal": arith.compare, "Less": arith.compare, "Greater": arith.compare, "LessOrEqual": arith.compare,
    "GreaterOrEqual": arith.compare,
    "Not": arith.logic, "And": arith.logic, "Or": arith.logic, "Xor": arith.logic, "IsNaN": arith.logic,
    "IsInf": arith.logic,
    "Where": arith.where,
    "Identity": movement.reshape, "Dropout": movement.reshape, "Reshape": movement.reshape,
    "Flatten": movement.reshape, "Squeeze": movement.reshape, "Unsqueeze": movement.reshape,
    "Transpose": movement.transpose, "Expand": movement.expand, "Tile": movement.tile,
    "ConstantOfShape": movement.constant_of_shape, "Range": movement.range_, "Shape": movement.shape_of,
    "Size": movement.shape_of, "Concat": movement.concat, "Split": movement.split, "Slice": movement.slice_,
    "Gather": movement.gather, "GatherElements": movement.gather_elements, "GatherND": movement.gather_nd,
    "ScatterND": movement.scatter_nd, "ScatterElements": movement.scatter_elements,
    "Scatter": movement.scatter_elements, "Pad": movement.pad,
}
# onnxruntime's contrib ops its optimiser writes in place of standard ones
CONTRIB: dict[tuple[str, str], Rule] = {("com.microsoft", "FusedMatMul"): arith.fused_matmul}

for _op in ("Sqrt", "Exp", "Log", "Tanh", "Sigmoid", "Erf", "Sin", "Cos", "Tan", "Atan", "Asin", "Acos",
            "Softplus", "Softsign", "Elu", "Selu", "LeakyRelu", "HardSigmoid", "Gelu", "Sinh", "Cosh"):
    TABLE[_op] = arith.smooth


@dataclass
class Proof:
    """What the region's outputs are, element by element (``Abstract`` each), and the narrowing
    float casts met on the way (``narrowed``: node labels)."""

    outputs: dict[str, Abstract]
    narrowed: list[str] = field(default_factory=list)
    values: dict[str, np.ndarray] = field(default_factory=dict)
    # per output: its order of growth in positions and dims (positions.py), and the op that made it too fast
    positions: dict[str, tuple[int, str | None]] = field(default_factory=dict)


def rule_for(node, rules: dict, table: dict, contrib: dict):
    """A node's rule: the caller's by (domain, op type), else the table's for a standard op, else
    the one for onnxruntime's contrib op (None: no rule)."""
    domain = "" if node.domain in ("", "ai.onnx") else node.domain
    return rules.get((domain, node.op_type)) or (table.get(node.op_type) if domain == "" else None) or \
        contrib.get((domain, node.op_type))


def _unknown(node, ins, vals, outs):
    """An op without a rule: constant in, constant out; the variables in, "neither" out."""
    present = [p for p in ins if p is not None]
    top = max((p.top() for p in present), default=KNOWN)
    if top == KNOWN:
        return [arith.finish(known(np.asarray(o)), o) for o in outs]
    if top == DIMS:
        raise NotProved(f"{node.label}: no rule for {node.op_type} on values derived from sizes")
    reads = np.uint32(0)
    for p in present:
        reads |= np.uint32(p.all_reads())
    why = next((p.why for p in present if p.why), None) or f"{node.label} ({node.op_type}) is not known to be affine"
    return [Abstract(np.full(np.shape(o), OTHER, np.int8), np.full(np.shape(o), reads, np.uint32),
                     np.full(np.shape(o), -np.inf), np.full(np.shape(o), np.inf), why) for o in outs]


def evaluate_region(ctx, nodes, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every value the region computes at these feeds, in one run (``SurgeonError`` when it does
    not run), with the feeds."""
    wanted = [o for n in nodes for o in n.outputs if o and o not in feeds]
    return {**feeds, **(dict(zip(wanted, ctx.evaluate(wanted, feeds))) if wanted else {})}


def prove(ctx, nodes, outputs: list[str], leaves: dict[str, Abstract], feeds: dict[str, np.ndarray],
          rules: dict[tuple[str, str], Rule] | None = None, values: dict | None = None) -> Proof:
    """Abstract values of ``outputs`` of the region ``nodes`` (in graph order).

    ``leaves``: abstract values of the region's run-time leaves (the variables, dims, sizes);
    ``feeds``: their concrete values at the probe's dims (also for leaves computed by nodes the
    caller evaluates itself, such as ops onnxruntime cannot run); ``values``: what
    ``evaluate_region`` gave, when the caller has it already. Any other value the region reads
    must be a constant. Raises ``NotProved`` naming the op or leaf that stops the proof, and
    ``SurgeonError`` when the region does not run at these dims."""
    rules = rules or {}
    values = dict(values) if values is not None else evaluate_region(ctx, nodes, feeds)
    abstract: dict[str, Abstract] = dict(leaves)
    narrowed: list[str] = []

    def value_of(name: str):
        if name in values:
            return values[name]
        constant = ctx.constant(name)
        if constant is None:
            raise NotProved(f"the region reads {name!r}, which is neither a leaf nor a constant")
        values[name] = np.asarray(constant)
        return values[name]

    degree: dict[str, tuple[int, str | None]] = {}  # name -> (order of growth, the op that made it too fast)

    def abstract_of(name: str) -> Abstract | None:
        if not name:
            return None
        if name not in abstract:
            abstract[name] = known(value_of(name))
        return abstract[name]

    for node in nodes:
        outs = [o for o in node.outputs if o]
        if outs and all(o in leaves for o in outs):
            continue  # fed by the caller (a folded Shape, say)
        ins = [abstract_of(i) for i in node.inputs]
        vals = [value_of(i) if i else None for i in node.inputs]
        out_vals = [values[o] for o in outs]
        domain = "" if node.domain in ("", "ai.onnx") else node.domain
        if node.op_type.startswith("Random") or node.op_type == "Multinomial":
            raise NotProved(f"{node.label} draws random values")
        present = [p for p in ins if p is not None]
        if all(p.top() == KNOWN and p.sym is None and not p.varies for p in present) and \
                (domain, node.op_type) not in rules:
            for name, value in zip(outs, out_vals):  # constants in, constants out: no rule to run
                abstract[name] = arith.finish(known(np.asarray(value)), value)
            continue
        rule = rule_for(node, rules, TABLE, CONTRIB) or _unknown
        if rule is arith.extreme and node.op_type == "Clip" and _opset(ctx) < 11:
            rule = arith.clip_attributes
        try:
            results = rule(node, ins, vals, out_vals)
        except NotProved:
            raise
        except (ValueError, IndexError, TypeError) as exc:  # a rule meeting a shape it was not written for
            raise NotProved(f"{node.label}: cannot follow its elements ({type(exc).__name__}: {exc})") from None
        sizing = getattr(rule, "sizing", None) or _SIZING.get(node.op_type, ())
        found = growth(node, [degree.get(i, (_leaf_growth(ins[k]), None)) if i else (0, None)
                              for k, i in enumerate(node.inputs)], vals, () if node.op_type == "Range" else sizing,
                       _counted(node, ins[0] if ins else None, vals))
        for name, result, axes in zip(outs, results, propagate(node, ins, vals, out_vals)):
            if result.axes is None or len(result.axes) != result.kind.ndim:
                result.axes = axes if len(axes) == result.kind.ndim else None
            source = branch_of([p for i, p in enumerate(ins) if i not in sizing])  # data, not sizes
            result.branch = result.branch or source  # the first branch a value came through
            if source and result.sym is None and (result.kind != KNOWN).any():
                # a rule that does not follow branches element by element: all of it is suspect
                result = mark_branch(result, result.kind != KNOWN, source)
            result.resized = result.resized or _resized(node, ins, sizing)
            result.varies = result.varies or _varies(node, ins, result, sizing)
            abstract[name] = result
            degree[name] = (0, None) if (result.kind == KNOWN).all() else found
        if node.op_type in ("Cast", "CastLike") and _narrows(vals[0], out_vals[0]) and ins[0].top() >= DIMS:
            narrowed.append(node.label)
    return Proof({o: abstract_of(o) for o in outputs}, narrowed, values,
                 {o: degree.get(o, (0, None)) for o in outputs})


def _counted(node, a: Abstract | None, vals) -> bool:
    """A ReduceSum or CumSum sums along an axis whose length follows the dims (unknown: it may)."""
    if node.op_type not in ("ReduceSum", "CumSum") or a is None or a.axes is None:
        return True
    rank = a.kind.ndim
    given = node.attr("axes")
    if given is None and len(vals) > 1 and vals[1] is not None:
        given = np.asarray(vals[1]).reshape(-1).tolist()
    if not given:
        given = list(range(rank)) if node.op_type == "ReduceSum" else [0]
    return any(a.axes[int(x) % rank] not in (None, -1) for x in given) if rank else False


def _leaf_growth(a: Abstract | None) -> int:
    """A leaf's order of growth: a dim's value grows as 1, the variables and constants as 0."""
    return 1 if a is not None and (a.kind == DIMS).any() else 0


def _opset(ctx) -> int:
    """The model's default-domain opset (the latest when the context does not say)."""
    opset = getattr(ctx, "opset", None)
    return (opset("") if callable(opset) else None) or 10 ** 6


# Inputs that set the length of an output's axes rather than its values (a pattern's rule says
# its own with an attribute: ``rule.sizing = (1,)``).
_SIZING = {"Reshape": (1,), "Expand": (1,), "Tile": (1,), "ConstantOfShape": (0,), "Range": (0, 1, 2),
           "Slice": (1, 2, 3, 4), "Pad": (1, 3), "Resize": (1, 2, 3), "Upsample": (1,), "Split": (1,)}


def _resized(node, ins, sizing) -> str | None:
    """A branch on sizes that decided the length of some axis of the output (directly, or of an
    input it was computed from)."""
    inherited = next((p.resized for p in ins if p is not None and p.resized), None)
    if inherited:
        return inherited
    return branch_of([ins[i] for i in sizing if i < len(ins)])


def _varies(node, ins, result, sizing) -> bool:
    """The length of some axis of the output follows the dims: an input's does (and the op keeps
    that axis or sums over it), a sizing input is not a constant, or an axis is an input dim."""
    if any(p is not None and p.varies for p in ins):
        return node.op_type not in ("Shape", "Size")  # a shape's own length is its input's rank
    sizes = [ins[i] for i in sizing if i < len(ins) and ins[i] is not None]
    return any(p.top() != KNOWN for p in sizes) or any(a not in (None, -1) for a in (result.axes or ()))


def _narrows(source, target) -> bool:
    s, t = np.asarray(source).dtype, np.asarray(target).dtype
    return s in _FLOAT_WIDTH and t in _FLOAT_WIDTH and _FLOAT_WIDTH[t] < _FLOAT_WIDTH[s]
