"""Rules for arithmetic: elementwise ops, reductions and products.

A rule sees the node, its inputs' abstract values (``ins``), their concrete values at the probe
(``vals``) and the concrete outputs (``outs``); it returns the outputs' abstract values or raises
``NotProved`` naming what cannot be proved. Products keep affinity only with at most one side
depending on the variables; division only by constants or shape-derived values.
"""

from __future__ import annotations

import numpy as np

from . import bounds
from .elements import (AFFINE, BRANCHED, DIMS, KNOWN, OTHER, Abstract, NotProved, branch_of, broadcast,
                       combine, known, mark_branch, move, reduce)


def finish(result: Abstract, out: np.ndarray) -> Abstract:
    """KNOWN elements take their concrete value as bounds; variable-dependent ones none."""
    value = np.asarray(out)
    if value.dtype.kind in "biuf" and value.shape == result.shape:
        exact = value.astype(np.float64)
        result.lo = np.where(result.kind == KNOWN, exact, result.lo)
        result.hi = np.where(result.kind == KNOWN, exact, result.hi)
    high = result.kind >= AFFINE
    result.lo = np.where(high, -np.inf, result.lo)
    result.hi = np.where(high, np.inf, result.hi)
    return result


def _is_zero(a: Abstract, value: np.ndarray, shape) -> np.ndarray:
    v = np.broadcast_to(np.asarray(value), shape)
    return (np.broadcast_to(a.kind, shape) == KNOWN) & (v == 0)


def add(node, ins, vals, outs, sign=1.0):
    out = outs[0]
    a, b = broadcast(ins[:2], out.shape)
    kind = np.maximum(a.kind, b.kind)
    lo, hi = bounds.add(a, b, out.shape, sign)
    return [finish(combine([a, b], out.shape, kind, lo, hi), out)]


def variadic_add(node, ins, vals, outs):
    out = outs[0]
    parts = broadcast([p for p in ins if p is not None], out.shape)
    kind = np.max([p.kind for p in parts], axis=0)
    return [finish(combine(parts, out.shape, kind), out)]


def mul(node, ins, vals, outs):
    out = outs[0]
    a, b = broadcast(ins[:2], out.shape)
    kind = np.maximum(a.kind, b.kind)
    kind = np.where((a.kind >= AFFINE) & (b.kind >= AFFINE), OTHER, kind)
    zero = _is_zero(a, vals[0], out.shape) | _is_zero(b, vals[1], out.shape)  # 0 * x is 0 for finite x
    kind = np.where(zero, KNOWN, kind)
    lo, hi = bounds.mul(a, b, out.shape)
    return [finish(combine([a, b], out.shape, kind, lo, hi, why=f"{node.label} multiplies two values that "
                                                                   "both depend on the variables"), out)]


def div(node, ins, vals, outs):
    out = outs[0]
    a, b = broadcast(ins[:2], out.shape)
    kind = np.where(b.kind >= AFFINE, OTHER, np.maximum(a.kind, b.kind))
    lo, hi = bounds.div(a, b, out.shape)
    result = combine([a, b], out.shape, kind, lo, hi, why=f"{node.label} divides by a value that depends on the "
                                                          "variables")
    if np.asarray(out).dtype.kind in "iu":  # integer division rounds: W // 128 steps where no probe looks
        unit = (b.kind == KNOWN) & (np.abs(b.lo) == 1)
        result = mark_branch(result, (result.kind == DIMS) & ~unit, bounds.branch(node.label, "divides, rounding,", ins))
    return [finish(result, out)]


def neg(node, ins, vals, outs):
    a = ins[0]
    result = Abstract(a.kind.copy(), a.reads.copy(), -a.hi, -a.lo, a.why, a.data, branch=a.branch)
    if a.sym is not None:  # -N is no longer the dim N; a branch's outcome stays one
        result.sym = np.where(a.sym == BRANCHED, BRANCHED, -1).astype(np.int32)
    return [finish(result, outs[0])]


def same(node, ins, vals, outs):
    """Unary ops that keep every category (Identity, Cast between floats)."""
    a = ins[0]
    out = outs[0]
    shape = np.shape(out)
    result = Abstract(a.kind.reshape(shape), a.reads.reshape(shape), a.lo.reshape(shape), a.hi.reshape(shape),
                      a.why, a.data, None if a.sym is None else a.sym.reshape(shape))
    return [finish(result, out)]


def smooth(node, ins, vals, outs):
    """Non-linear but not a branch (Sqrt, Exp, Tanh...): shape-derived stays shape-derived."""
    out = outs[0]
    parts = broadcast([p for p in ins if p is not None], out.shape)
    kinds = [p.kind for p in parts]
    kind = np.where(bounds.variable_dependent(kinds), OTHER, np.max(kinds, axis=0))
    result = combine(parts, out.shape, kind, why=f"{node.label} is not affine")
    # a curve of sizes (Sigmoid(W), Sqrt(W)) is pinned by no set of probe sizes: a coefficient made
    # of it is not proved, a size made of it is only an extent (where a rule says so)
    return [finish(mark_branch(result, result.kind == DIMS, bounds.branch(node.label, "bends", ins)), out)]


def rounding(node, ins, vals, outs):
    """Floor, Ceil, Round: a size computed from dims may round; the variables may not."""
    a = ins[0]
    out = outs[0]
    kind = np.where(a.kind >= AFFINE, OTHER, a.kind)
    lo, hi = np.floor(a.lo), np.ceil(a.hi)
    result = combine([a], out.shape, kind, lo, hi, why=f"{node.label} rounds values that depend on the variables")
    # on sizes a size's rounding is a step between the sizes a probe tries (settled only when pinned)
    stepped = (result.kind == DIMS) & ~((a.lo == a.hi) & (np.floor(a.lo) == a.lo))
    return [finish(mark_branch(result, stepped, bounds.branch(node.label, "rounds", ins)), out)]


def decided_unary(node, ins, vals, outs):
    """Abs, Relu, Sign: on shape-derived values only where the sign is settled at every dim."""
    a = ins[0]
    out = outs[0]
    kind = np.where(a.kind >= AFFINE, OTHER, a.kind)
    dims = a.kind == DIMS
    settled = (a.lo >= 0) | (a.hi <= 0)
    if node.op_type == "Sign":
        kind = np.where(dims & settled, KNOWN, kind)
    lo = np.where(a.lo >= 0, a.lo, np.where(a.hi <= 0, np.where(node.op_type == "Abs", -a.hi, 0.0), 0.0))
    hi = np.where(a.lo >= 0, a.hi, np.where(a.hi <= 0, np.where(node.op_type == "Abs", -a.lo, 0.0), np.inf))
    result = combine([a], out.shape, kind, lo, hi, why=f"{node.label} is not affine")
    undecided = dims & ~settled
    return [finish(mark_branch(result, undecided, bounds.branch(node.label, "takes the sign of", ins)), out)]


def compare(node, ins, vals, outs):
    out = outs[0]
    a, b = broadcast(ins[:2], out.shape)
    kind = np.where(bounds.variable_dependent([a.kind, b.kind]), OTHER, np.maximum(a.kind, b.kind))
    decide = bounds.needs_decision([a.kind, b.kind])
    undecided = np.zeros(out.shape, bool)
    if decide.any():
        outcome = bounds.settled(a, b, out.shape, node.op_type)
        undecided = decide & (outcome < 0)
        kind = np.where(decide & ~undecided, KNOWN, kind)
    result = combine([a, b], out.shape, kind, why=f"{node.label} compares values that depend on the variables")
    if decide.any():  # a settled comparison does not carry its operands' branches
        quiet = decide & ~undecided
        result.sym = np.where(quiet, -1, result.syms()).astype(np.int32)
        result.kind = np.where(quiet, KNOWN, result.kind).astype(np.int8)
    return [finish(mark_branch(result, undecided, bounds.branch(node.label, "compares", ins)), out)]


def _settled_or_branch(node, ins, outs, what: str, why: str):
    """Ops whose result on sizes is a branch unless every operand is a constant (Mod, logic on
    booleans): known in, known out; sizes in, a branch; the variables in, "neither"."""
    out = outs[0]
    parts = broadcast([p for p in ins if p is not None], out.shape)
    kinds = [p.kind for p in parts]
    undecided = bounds.needs_decision(kinds)
    kind = np.where(bounds.variable_dependent(kinds), OTHER, np.where(undecided, DIMS, KNOWN))
    result = combine(parts, out.shape, kind, why=f"{node.label} {why}")
    return [finish(mark_branch(result, undecided, bounds.branch(node.label, what, ins)), out)]


def logic(node, ins, vals, outs):
    """Not/And/Or/Xor/IsNaN/IsInf."""
    return _settled_or_branch(node, ins, outs, "tests", "tests values that depend on the variables")


def where(node, ins, vals, outs):
    out = outs[0]
    cond, a, b = broadcast(ins[:3], out.shape)
    pick = np.broadcast_to(np.asarray(vals[0]).astype(bool), out.shape)
    kind = np.where(pick, a.kind, b.kind)
    reads = np.where(pick, a.reads, b.reads)
    lo, hi = np.where(pick, a.lo, b.lo), np.where(pick, a.hi, b.hi)
    varies = cond.kind >= AFFINE  # the variables choose: neither branch is the value everywhere
    kind = np.where(varies, OTHER, kind)
    reads = np.where(varies, a.reads | b.reads | cond.reads, reads)
    why, data = _meta([cond, a, b], f"{node.label} chooses by a condition on the variables" if varies.any() else None)
    sym = np.where(pick & ~varies, a.syms(), np.where(varies, -1, b.syms())) if a.sym is not None or \
        b.sym is not None else None
    result = Abstract(kind.astype(np.int8), reads.astype(np.uint32), lo.astype(np.float64), hi.astype(np.float64),
                      why, data, sym, branch=a.branch or b.branch)
    on_sizes = cond.kind == DIMS  # chosen by a size: either side, differently past the probe's sizes
    result.lo, result.hi = np.where(on_sizes, np.minimum(a.lo, b.lo), result.lo), \
        np.where(on_sizes, np.maximum(a.hi, b.hi), result.hi)
    result.kind = np.where(on_sizes, np.maximum(a.kind, b.kind), result.kind).astype(np.int8)
    result.reads = np.where(on_sizes, a.reads | b.reads, result.reads).astype(np.uint32)
    message = cond.branch or bounds.branch(node.label, "chooses by a condition on", ins)
    return [finish(mark_branch(result, on_sizes, message), out)]


def _meta(parts, why):
    from .elements import merge_meta

    inherited, data = merge_meta(parts)
    return inherited or why, data


def clip_attributes(node, ins, vals, outs):
    """Clip before opset 11: its bounds are attributes, defaulting to the type's extremes."""
    if node.attr("min") is None and node.attr("max") is None:
        return extreme(node, ins[:1], vals[:1], outs)
    dtype = np.asarray(vals[0]).dtype
    top = float(np.finfo(dtype).max) if dtype.kind == "f" else np.inf
    low, high = np.asarray(node.attr("min", -top), dtype), np.asarray(node.attr("max", top), dtype)
    return extreme(node, [ins[0], known(low), known(high)], [vals[0], low, high], outs)


def _clamps_infinities(node, result: Abstract) -> Abstract:
    """Clip without bounds: the identity on finite values, yet an infinity comes out as the
    type's largest finite value (onnxruntime, every opset), which no affine map does."""
    affine = result.kind >= AFFINE
    if affine.any():
        result.kind = np.where(affine, OTHER, result.kind).astype(np.int8)
        result.why = result.why or f"{node.label} clamps values that depend on the variables at the type's " \
                                   "extremes (an infinity comes out finite)"
    return result


def extreme(node, ins, vals, outs):
    """Min/Max (any arity) and Clip: a clamp of the variables is not affine; on sizes it must be
    settled at every dim (``Max(N, 1)`` is, ``Min(W, 64)`` is not)."""
    out = outs[0]
    if node.op_type == "Clip":
        x, low, high = (list(ins) + [None, None])[:3]
        if low is None and high is None:  # the bounds default to the type's extremes: a clamp of infinities
            return [_clamps_infinities(node, same(node, ins[:1], vals[:1], outs)[0])]
        steps = [(p, True) for p in (low,) if p is not None] + [(p, False) for p in (high,) if p is not None]
        result = broadcast([x], out.shape)[0]
        for bound, is_max in steps:
            result = _pick(node, [result, broadcast([bound], out.shape)[0]], is_max, out.shape, ins)
    else:
        parts = broadcast([p for p in ins if p is not None], out.shape)
        result = parts[0]
        for p in parts[1:]:
            result = _pick(node, [result, p], node.op_type == "Max", out.shape, ins)
    return [finish(result, out)]


def _pick(node, parts: list[Abstract], is_max: bool, shape, ins) -> Abstract:
    kinds = [p.kind for p in parts]
    kind = np.where(bounds.variable_dependent(kinds), OTHER, np.max(kinds, axis=0))
    result = combine(parts, shape, kind, why=f"{node.label} clamps values that depend on the variables")
    decide = bounds.needs_decision(kinds)
    if not decide.any():
        return result
    a, b = parts
    same_dim = (a.syms() >= 0) & (a.syms() == b.syms())  # one input dim on both sides: equal
    a_wins = ((a.lo >= b.hi) if is_max else (a.hi <= b.lo)) | same_dim
    b_wins = (b.lo >= a.hi) if is_max else (b.hi <= a.lo)
    undecided = decide & ~a_wins & ~b_wins
    sym = np.full(shape, -1, np.int32)
    for p, wins in ((a, a_wins), (b, b_wins & ~a_wins)):
        hit = decide & wins
        result.kind = np.where(hit, p.kind, result.kind).astype(np.int8)
        result.lo, result.hi = np.where(hit, p.lo, result.lo), np.where(hit, p.hi, result.hi)
        sym = np.where(hit, p.syms(), sym)
    result.sym = sym
    pick = np.maximum if is_max else np.minimum  # both sides' bounds: either may be the result
    result.lo = np.where(undecided, pick(a.lo, b.lo), result.lo)
    result.hi = np.where(undecided, pick(a.hi, b.hi), result.hi)
    return mark_branch(result, undecided, bounds.branch(node.label, "takes the smaller or larger of", ins))


def reciprocal(node, ins, vals, outs):
    one = Abstract(np.zeros((), np.int8), np.zeros((), np.uint32), np.ones(()), np.ones(()))
    return div(node, [one, ins[0]], [np.ones(()), vals[0]], outs)


def power(node, ins, vals, outs):
    exponent = ins[1]
    if exponent.top() == KNOWN and np.all(np.asarray(vals[1]) == 1):
        return same(node, ins[:1], vals[:1], outs)
    return smooth(node, ins, vals, outs)


def branch_only(node, ins, vals, outs):
    """Mod and the like: a branch on sizes, non-linear on the variables."""
    return _settled_or_branch(node, ins, outs, "wraps", "is not affine")


# -- reductions and products ------------------------------------------------------------------

def _axes(node, ins, vals, rank: int, opset: int = 18) -> tuple | None:
    axes = node.attr("axes")
    if axes is None and len(vals) > 1 and vals[1] is not None:
        if ins[1].top() != KNOWN:
            raise NotProved(f"{node.label} reduces over axes that are not constant")
        axes = [int(a) for a in np.asarray(vals[1]).reshape(-1)]
    if not axes:
        return None if node.attr("noop_with_empty_axes", 0) else tuple(range(rank))
    return tuple(sorted(int(a) % rank for a in axes))


def _reduced(node, ins, vals, outs, finish_with):
    """The reductions: every output element from the elements it reduces over; ``finish_with``
    (result, input, axes, keepdims) says what the reduction does to their categories."""
    a = ins[0]
    axes = _axes(node, ins, vals, len(a.shape), 18)
    if axes is None:  # noop_with_empty_axes
        return same(node, ins[:1], vals[:1], outs)
    keep = bool(node.attr("keepdims", 1))
    return [finish(finish_with(reduce(a, axes, keep), a, axes, keep), outs[0])]


def reduce_sum(node, ins, vals, outs):
    """ReduceSum, ReduceMean: linear."""
    return _reduced(node, ins, vals, outs, lambda result, a, axes, keep: result)


def reduce_prod(node, ins, vals, outs):
    def products(result, a, axes, keep):
        several = np.sum(a.kind >= AFFINE, axis=axes, keepdims=keep) > 1
        result.kind = np.where(several, OTHER, result.kind).astype(np.int8)
        if several.any():
            result.why = result.why or f"{node.label} multiplies values that depend on the variables"
        return result
    return _reduced(node, ins, vals, outs, products)


def reduce_extreme(node, ins, vals, outs):
    """ReduceMax/Min/L1/L2...: a branch on sizes, not affine in the variables."""
    def extremes(result, a, axes, keep):
        result = mark_branch(result, result.kind == DIMS, bounds.branch(node.label, "takes an extreme of", ins))
        result.kind = np.where(result.kind >= AFFINE, OTHER, result.kind).astype(np.int8)
        if (result.kind == OTHER).any():
            result.why = result.why or f"{node.label} is not affine"
        return result
    return _reduced(node, ins, vals, outs, extremes)


def _product(a: Abstract, b: Abstract, a_zero: np.ndarray, b_zero: np.ndarray, shape) -> Abstract:
    """Elementwise product categories of broadcast operands (no bounds: products of sizes are
    never compared in practice)."""
    ka, kb = np.broadcast_to(a.kind, shape), np.broadcast_to(b.kind, shape)
    kind = np.where((ka >= AFFINE) & (kb >= AFFINE), OTHER, np.maximum(ka, kb))
    kind = np.where(np.broadcast_to(a_zero, shape) | np.broadcast_to(b_zero, shape), KNOWN, kind)
    reads = np.broadcast_to(a.reads, shape) | np.broadcast_to(b.reads, shape)
    inf = np.full(shape, np.inf)
    return Abstract(kind.astype(np.int8), reads.astype(np.uint32), -inf, inf)


def matmul(node, ins, vals, outs):
    a, b = ins[0], ins[1]
    va, vb = np.asarray(vals[0]), np.asarray(vals[1])
    squeeze_a, squeeze_b = a.kind.ndim == 1, b.kind.ndim == 1
    ka = a.kind[None] if squeeze_a else a.kind
    kb = b.kind[:, None] if squeeze_b else b.kind
    reshape_a = (lambda x: x[None]) if squeeze_a else (lambda x: x)
    reshape_b = (lambda x: x[:, None]) if squeeze_b else (lambda x: x)
    A = Abstract(ka, reshape_a(a.reads), reshape_a(a.lo), reshape_a(a.hi))
    B = Abstract(kb, reshape_b(b.reads), reshape_b(b.lo), reshape_b(b.hi))
    za = (A.kind == KNOWN) & (reshape_a(va) == 0)
    zb = (B.kind == KNOWN) & (reshape_b(vb) == 0)
    # [..., I, K, 1] x [..., 1, K, J] -> sum over K
    expand_a = lambda x: x[..., :, :, None]
    expand_b = lambda x: x[..., None, :, :]
    shape = np.broadcast_shapes(expand_a(A.kind).shape, expand_b(B.kind).shape)
    prod = _product(Abstract(expand_a(A.kind), expand_a(A.reads), expand_a(A.lo), expand_a(A.hi)),
                    Abstract(expand_b(B.kind), expand_b(B.reads), expand_b(B.lo), expand_b(B.hi)),
                    expand_a(za), expand_b(zb), shape)
    result = reduce(prod, (len(shape) - 2,), False)
    if squeeze_a:
        result = _squeeze(result, -2)
    if squeeze_b:
        result = _squeeze(result, -1)
    result.why, result.data = _meta([a, b], f"{node.label} multiplies two values that both depend on the variables"
                                    if (result.kind == OTHER).any() else None)
    return [finish(_carry_branch(result, [a, b]), outs[0])]


def _carry_branch(result: Abstract, parts) -> Abstract:
    """Products mix whole rows: an operand with any element from a branch on sizes taints all."""
    source = branch_of(parts)
    return mark_branch(result, np.full(result.kind.shape, source is not None), source)


def _squeeze(a: Abstract, axis: int) -> Abstract:
    return Abstract(np.squeeze(a.kind, axis), np.squeeze(a.reads, axis), np.squeeze(a.lo, axis),
                    np.squeeze(a.hi, axis), a.why, a.data)


def gemm(node, ins, vals, outs):
    a, b = ins[0], ins[1]
    va, vb = np.asarray(vals[0]), np.asarray(vals[1])
    if node.attr("transA", 0):
        a, va = _transpose(a), va.T
    if node.attr("transB", 0):
        b, vb = _transpose(b), vb.T
    product = matmul(node, [a, b], [va, vb], [np.zeros((va.shape[0], vb.shape[1]))])[0]
    # alpha = 0 or beta = 0: onnxruntime skips that term, so it reads none of its elements (an
    # infinity there stays out of the result)
    if float(node.attr("alpha", 1.0)) == 0.0:
        product = known(np.zeros(product.shape))
    if len(ins) > 2 and ins[2] is not None and float(node.attr("beta", 1.0)) != 0.0:
        c = broadcast([ins[2]], product.shape)[0]
        product = combine([product, c], product.shape, np.maximum(product.kind, c.kind))
    return [finish(product, outs[0])]


def fused_matmul(node, ins, vals, outs):
    """com.microsoft::FusedMatMul, as onnxruntime's optimiser writes it: alpha * op(A) @ op(B),
    op a transpose of the last two axes where transA / transB say (the batch transposes are
    refused: no rule)."""
    if node.attr("transBatchA", 0) or node.attr("transBatchB", 0):
        raise NotProved(f"{node.label}: FusedMatMul with a batch transpose has no rule here")
    swap = lambda x: np.swapaxes(x, -1, -2)
    parts, values = [], []
    for p, v, flag in ((ins[0], vals[0], "transA"), (ins[1], vals[1], "transB")):
        v = np.asarray(v)
        if node.attr(flag, 0) and v.ndim >= 2:
            p, v = move(p, swap), swap(v)
        parts.append(p)
        values.append(v)
    return matmul(node, parts, values, outs)  # alpha scales by a constant: affine stays affine


def _transpose(a: Abstract) -> Abstract:
    return Abstract(a.kind.T, a.reads.T, a.lo.T, a.hi.T, a.why, a.data)


def einsum(node, ins, vals, outs):
    equation = node.attr("equation").replace(" ", "")
    if "..." in equation:
        raise NotProved(f"{node.label}: Einsum with '...' has no rule here")
    lhs, _, rhs = equation.partition("->")
    terms = lhs.split(",")
    if any(len(set(t)) != len(t) for t in terms) or len(terms) != len([p for p in ins if p is not None]):
        raise NotProved(f"{node.label}: Einsum with repeated labels has no rule here")
    labels = list(dict.fromkeys("".join(terms)))
    out_labels = rhs if _ else "".join(sorted(c for c in labels if "".join(terms).count(c) == 1))
    sizes = {}
    for term, p in zip(terms, ins):
        sizes.update({c: max(sizes.get(c, 1), d) for c, d in zip(term, p.shape)})
    full = tuple(sizes[c] for c in labels)

    def align(term, x):
        order = [term.index(c) for c in labels if c in term]
        x = np.transpose(x, order)
        return x.reshape([sizes[c] if c in term else 1 for c in labels] if x.ndim else [1] * len(labels))

    result = None
    for term, p, v in zip(terms, ins, vals):
        part = Abstract(align(term, p.kind), align(term, p.reads), align(term, p.lo), align(term, p.hi))
        zero = (part.kind == KNOWN) & (align(term, np.asarray(v)) == 0)
        if result is None:
            result, result_zero = part, zero
            continue
        result = _product(result, part, result_zero, zero, np.broadcast_shapes(result.kind.shape, part.kind.shape))
        result_zero = result.kind == KNOWN
    shape = np.broadcast_shapes(result.kind.shape, full)
    result = Abstract(np.broadcast_to(result.kind, shape), np.broadcast_to(result.reads, shape),
                      np.broadcast_to(result.lo, shape), np.broadcast_to(result.hi, shape))
    summed = tuple(i for i, c in enumerate(labels) if c not in out_labels)
    result = reduce(result, summed, False) if summed else result
    kept = [c for c in labels if c in out_labels]
    order = [kept.index(c) for c in out_labels]
    result = Abstract(np.transpose(result.kind, order), np.transpose(result.reads, order),
                      np.transpose(result.lo, order), np.transpose(result.hi, order))
    result.why, result.data = _meta(ins, f"{node.label} multiplies two values that both depend on the variables"
                                    if (result.kind == OTHER).any() else None)
    return [finish(_carry_branch(result, ins), outs[0])]


def _shift_along(a: np.ndarray, axis: int, fill) -> np.ndarray:
    """``a`` moved one step along ``axis``, ``fill`` entering at the start."""
    shifted = np.roll(a, 1, axis=axis)
    first = [slice(None)] * a.ndim
    first[axis] = 0
    shifted[tuple(first)] = fill
    return shifted


def cumsum(node, ins, vals, outs):
    a = ins[0]
    axis = int(np.asarray(vals[1]).reshape(-1)[0]) % max(a.kind.ndim, 1)
    flip = bool(node.attr("reverse", 0))
    kind, reads = (np.flip(a.kind, axis), np.flip(a.reads, axis)) if flip else (a.kind, a.reads)
    kind = np.maximum.accumulate(kind, axis=axis)
    reads = np.bitwise_or.accumulate(reads, axis=axis)
    if node.attr("exclusive", 0):  # each sum stops before its own element: the first is 0
        kind, reads = _shift_along(kind, axis, KNOWN), _shift_along(reads, axis, 0)
    if flip:
        kind, reads = np.flip(kind, axis), np.flip(reads, axis)
    inf = np.full(kind.shape, np.inf)
    return [finish(Abstract(kind.astype(np.int8), reads.astype(np.uint32), -inf, inf, a.why, a.data), outs[0])]
