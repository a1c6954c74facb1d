"""The exact rules of ``symbolic.py``, one per op: each takes its inputs' ``Sym`` and gives its
outputs', extents from extents and an element from the elements it really reads."""

from __future__ import annotations

import numpy as np
import sympy

from .algebra import Ratio
from .symbolic_tensor import (LEAST, NotExact, Sym, Tied, broadcast, broadcast_index, constant, dim_symbol,
                              flat_index, integers, nonneg, number, same, scalar, split, to_integer, to_ratio,
                              unflat_index)


_END = (1 << 31) - 1  # a Slice bound at or past this (either way) means "to the end"


def _ints(sym: Sym) -> list[int]:
    return [number(v) for v in integers(sym)]


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


# -- arithmetic ----------------------------------------------------------------------------------

def _elementwise(fn):
    def rule(ev, node, ins):
        shape = broadcast(*[s.shape for s in ins])
        integer = ev.integer(node.outputs[0])

        def at(index):
            return fn([s.at(broadcast_index(index, s.shape)) for s in ins], integer)

        return [Sym(shape, at, integer)]
    return rule


def _div(args, integer):
    a, b = args
    if not integer:
        return a / b
    q = a / b  # integer division floors: exact only where it divides
    if q.polynomial() is None or any(c != int(c) for c, _ in q.num.terms.values()):
        raise NotExact("an integer division that need not divide")
    return q


def _sum(args, integer):
    total = args[0]
    for a in args[1:]:
        total = total + a
    return total


def _product(args, integer):
    return args[0] * args[1]


_COMPARE = ("Greater", "Less", "Equal", "GreaterOrEqual", "LessOrEqual")


def _comparison(ev, node, ins):
    op = node.op_type
    return _elementwise(lambda args, integer: Ratio.const(float(ev.compare(args[0], args[1], op))))(ev, node, ins)


def _logic(ev, node, ins):
    table = {"And": lambda a, b: a and b, "Or": lambda a, b: a or b, "Xor": lambda a, b: a != b}
    if node.op_type == "Not":
        return _elementwise(lambda args, integer: Ratio.const(float(not ev.decide(args[0]))))(ev, node, ins)
    fn = table[node.op_type]
    return _elementwise(lambda args, integer: Ratio.const(float(fn(ev.decide(args[0]), ev.decide(args[1])))))(
        ev, node, ins)


def _where(ev, node, ins):
    shape = broadcast(*[s.shape for s in ins])

    def at(index):
        c, a, b = (s.at(broadcast_index(index, s.shape)) for s in ins)
        return a if ev.decide(c) else b

    return [Sym(shape, at, ins[1].integer)]


def _extreme(ev, node, ins):
    """Min / Max of values whose order is the same for every size (a guard ``Max(W - 1, 1)``
    settled for W >= 2); an order that can go either way has no exact rule."""
    pick = "Greater" if node.op_type == "Max" else "Less"

    def fn(args, integer):
        best = args[0]
        for a in args[1:]:
            if ev.compare(a, best, pick):
                best = a
        return best

    return _elementwise(fn)(ev, node, ins)


def _sign_rules(ev, node, ins):
    """Abs, Relu, Sign and Clip of values whose sign against the bounds is the same for every
    size (``Abs`` of an element every run holds at 1, a clamp a size never reaches)."""
    zero = Ratio.const(0.0)
    op = node.op_type
    if op == "Clip":  # bounds: opset 6's attributes, inputs from 11 on; none is no bound
        low, high = (scalar(ins[i]) if len(ins) > i and ins[i] is not None else
                     None if node.attr(name) is None else Ratio.const(float(node.attr(name)))
                     for i, name in ((1, "min"), (2, "max")))
        data = ins[0]

        def clip(index):
            x = data.at(index)
            if low is not None and ev.compare(x, low, "Less"):
                return low
            return high if high is not None and ev.compare(x, high, "Greater") else x

        return [Sym(data.shape, clip, data.integer)]
    if op == "Abs":
        fn = lambda x: -x if ev.compare(x, zero, "Less") else x  # noqa: E731
    elif op == "Relu":
        fn = lambda x: zero if ev.compare(x, zero, "Less") else x  # noqa: E731
    else:
        fn = lambda x: Ratio.const(float(ev.compare(x, zero, "Greater")) - float(ev.compare(x, zero, "Less")))  # noqa: E731
    return _elementwise(lambda args, integer: fn(args[0]))(ev, node, ins)


def _cast(ev, node, ins):
    target = np.asarray(ev.values.get(node.outputs[0], np.zeros(0, np.float32))).dtype
    source = ins[0]
    if target.kind in "biu" and not source.integer:
        raise NotExact(f"{node.label} casts floats to integers (it truncates)")
    return [Sym(source.shape, source.at, target.kind in "biu")]


def _identity(ev, node, ins):
    return [ins[0]]


# -- moves ---------------------------------------------------------------------------------------

def _reshape(ev, node, ins):
    source = ins[0]
    if node.op_type == "Reshape":
        target = integers(ins[1])
        allow_zero = node.attr("allowzero") or 0
        target = [source.shape[i] if (t == 0 and not allow_zero) else t for i, t in enumerate(target)]
    elif node.op_type == "Flatten":
        axis = _axis(node.attr("axis") if node.attr("axis") is not None else 1, len(source.shape))
        lead = sympy.Integer(1)
        for e in source.shape[:axis]:
            lead *= e
        target = [lead, -1]
    elif node.op_type == "Unsqueeze":
        axes = node.attr("axes") if node.attr("axes") is not None else _ints(ins[1])
        rank = len(source.shape) + len(axes)
        axes = sorted(_axis(a, rank) for a in axes)
        target = list(source.shape)
        for a in axes:
            target.insert(a, sympy.Integer(1))
    else:  # Squeeze
        axes = node.attr("axes") if node.attr("axes") is not None else (_ints(ins[1]) if len(ins) > 1 and ins[1]
                                                                         else None)
        rank = len(source.shape)
        if axes is None:
            axes = [i for i, e in enumerate(source.shape) if e == 1]
        axes = {_axis(a, rank) for a in axes}
        target = [e for i, e in enumerate(source.shape) if i not in axes]
    total = sympy.Integer(1)
    for e in source.shape:
        total *= e
    if any(t == -1 for t in target):
        known = sympy.Integer(1)
        for t in target:
            if t != -1:
                known *= t
        rest = sympy.cancel(total / known)
        if sympy.fraction(rest)[1] != 1:
            raise NotExact(f"{node.label}: a -1 extent that divides only at some sizes")
        target = [sympy.expand(rest) if t == -1 else sympy.sympify(t) for t in target]
    target = tuple(sympy.expand(sympy.sympify(t)) for t in target)
    product = sympy.Integer(1)
    for t in target:
        product *= t
    if not same(product, total):
        raise Tied(product, total, f"{node.label}: reshapes {source.shape} to {target}")

    def at(index):
        return source.at(unflat_index(flat_index(index, target), source.shape, ev.ranges))

    return [Sym(target, at, source.integer)]


def _transpose(ev, node, ins):
    source = ins[0]
    perm = node.attr("perm") or list(reversed(range(len(source.shape))))
    shape = tuple(source.shape[p] for p in perm)

    def at(index):
        back = [None] * len(perm)
        for i, p in enumerate(perm):
            back[p] = index[i]
        return source.at(tuple(back))

    return [Sym(shape, at, source.integer)]


def _expand(ev, node, ins):
    source = ins[0]
    target = tuple(sympy.sympify(t) for t in integers(ins[1]))
    shape = broadcast(source.shape, target)
    return [Sym(shape, lambda index: source.at(broadcast_index(index, source.shape)), source.integer)]


def _concat(ev, node, ins):
    parts = [s for s in ins if s is not None]
    rank = len(parts[0].shape)
    axis = _axis(node.attr("axis"), rank)
    shape = list(parts[0].shape)
    shape[axis] = sympy.expand(sum((p.shape[axis] for p in parts), sympy.Integer(0)))
    for p in parts:
        for i, (a, b) in enumerate(zip(p.shape, parts[0].shape)):
            if i != axis and not same(a, b):
                raise Tied(a, b, f"{node.label}: concatenates")

    def at(index):
        i = index[axis]
        start = sympy.Integer(0)
        for p in parts:
            stop = sympy.expand(start + p.shape[axis])
            if not sympy.sympify(i).is_Integer or not (start.is_Integer and stop.is_Integer):
                if len(parts) == 1:
                    return p.at(index)
                raise NotExact(f"{node.label}: concatenates along an axis whose extents follow the dims")
            if int(start) <= int(i) < int(stop):
                return p.at(index[:axis] + (i - start,) + index[axis + 1:])
            start = stop
        raise NotExact(f"{node.label}: an index past the concatenation")

    return [Sym(tuple(shape), at, parts[0].integer)]


def _split(ev, node, ins):
    data = ins[0]
    rank = len(data.shape)
    axis = _axis(node.attr("axis") or 0, rank)
    count = len(node.outputs)
    if len(ins) > 1 and ins[1] is not None:
        sizes = [sympy.Integer(v) for v in _ints(ins[1])]
    elif node.attr("split"):
        sizes = [sympy.Integer(int(v)) for v in node.attr("split")]
    else:
        total = data.shape[axis]
        if not total.is_Integer:
            raise NotExact(f"{node.label}: splits an axis whose extent follows the dims")
        each = -(-int(total) // count)
        sizes = [sympy.Integer(min(each, int(total) - i * each)) for i in range(count)]
    outs, start = [], sympy.Integer(0)
    for size in sizes:
        shape = data.shape[:axis] + (size,) + data.shape[axis + 1:]
        outs.append(Sym(shape, lambda index, start=start: data.at(index[:axis] + (index[axis] + start,) +
                                                                 index[axis + 1:]), data.integer))
        start = start + size
    return outs


def _tile(ev, node, ins):
    data = ins[0]
    repeats = _ints(ins[1])
    shape = tuple(sympy.expand(e * r) for e, r in zip(data.shape, repeats))

    def at(index):
        back = []
        for i, e, r in zip(index, data.shape, repeats):
            back.append(i if r == 1 else split(i, e, ev.ranges)[1])
        return data.at(tuple(back))

    return [Sym(shape, at, data.integer)]


def _scatter_nd(ev, node, ins):
    """ScatterND without a reduction: an element is the update written there, else the data's.
    Index rows each either a number or one position of the updates (``base[..., 0] = x`` as
    TorchScript writes it) are inverted for every size; numeric rows are looked up."""
    data, indices, updates = ins
    if (node.attr("reduction") or "none") not in ("none", b"none"):
        raise NotExact(f"{node.label}: a scatter with a reduction")
    depth = number(indices.shape[-1])
    lead = indices.shape[:-1]
    numeric = all(e.is_Integer for e in lead) and int(np.prod([int(e) for e in lead])) <= 64
    if numeric:
        return [Sym(data.shape, _scatter_table(node, data, indices, updates, depth), data.integer)]
    q = [sympy.Integer(0) if e == 1 else dim_symbol(f"q{id(node)}_{j}")
         for j, e in enumerate(lead)]
    for symbol, extent in zip(q, lead):
        if not symbol.is_Integer:
            ev.ranges[symbol] = extent
    row = [to_integer(indices.at(tuple(q) + (sympy.Integer(a),))) for a in range(depth)]
    q = [s for s in q if not s.is_Integer]
    lead = [e for e in lead if e != 1]

    def at(index):
        bound = {}
        for a, r in enumerate(row):
            i = sympy.sympify(index[a])
            if r.is_Integer:
                if not i.is_Integer:
                    raise NotExact(f"{node.label}: a scatter whose written place is decided by the sizes")
                if int(i) != int(r):
                    return data.at(tuple(index))
            elif r in q and (r not in bound or same(bound[r], i)) and same(lead[q.index(r)], data.shape[a]):
                bound[r] = i
            else:
                raise NotExact(f"{node.label}: a scatter index {r} that is not one position of the updates")
        if len(bound) != len(q):
            raise NotExact(f"{node.label}: a scatter that writes one place more than once")
        positions = iter(bound[s] for s in q)
        lead_index = tuple(sympy.Integer(0) if e == 1 else next(positions) for e in indices.shape[:-1])
        return updates.at(lead_index + tuple(index[depth:]))

    return [Sym(data.shape, at, data.integer)]


def _scatter_table(node, data, indices, updates, depth):
    leads = list(np.ndindex(*[number(e) for e in indices.shape[:-1]]))
    rows = [[number(to_integer(indices.at(tuple(sympy.Integer(i) for i in (*lead, j))))) for j in range(depth)]
            for lead in leads]
    if any(r < 0 for row in rows for r in row):
        raise NotExact(f"{node.label}: a scatter with negative indices")

    def at(index):
        head = [sympy.sympify(h) for h in index[:depth]]
        if not all(h.is_Integer for h in head):
            raise NotExact(f"{node.label}: a scatter read at a position that follows the dims")
        where = [int(h) for h in head]
        for lead, row in reversed(list(zip(leads, rows))):
            if row == where:
                return updates.at(tuple(sympy.Integer(i) for i in lead) + tuple(index[depth:]))
        return data.at(tuple(index))

    return at


def _index(i, extent, ev, node):
    """A gathered index: a negative number counts from the end; one computed from the dims must be
    at least 0 at every size (a negative one would wrap where the expression does not)."""
    if i.is_Integer:
        return extent + i if int(i) < 0 else i
    if not nonneg(i, ev.ranges):
        raise NotExact(f"{node.label}: an index computed from the dims that may be negative")
    return i


def _gather_nd(ev, node, ins):
    data, indices = ins
    if node.attr("batch_dims"):
        raise NotExact(f"{node.label}: a GatherND with batch dims")
    depth = number(indices.shape[-1])
    shape = tuple(indices.shape[:-1]) + tuple(data.shape[depth:])
    lead_rank = len(indices.shape) - 1

    def at(index):
        lead = index[:lead_rank]
        picks = []
        for j in range(depth):
            picks.append(_index(to_integer(indices.at(tuple(lead) + (sympy.Integer(j),))), data.shape[j], ev, node))
        return data.at(tuple(picks) + tuple(index[lead_rank:]))

    return [Sym(shape, at, data.integer)]


def _gather(ev, node, ins):
    data, indices = ins
    rank = len(data.shape)
    axis = _axis(node.attr("axis") or 0, rank)
    picks = [number(e) for e in indices.shape]
    shape = data.shape[:axis] + tuple(indices.shape) + data.shape[axis + 1:]

    def at(index):
        chosen = index[axis:axis + len(picks)]
        i = _index(to_integer(indices.at(chosen)), data.shape[axis], ev, node)
        return data.at(index[:axis] + (i,) + index[axis + len(picks):])

    return [Sym(shape, at, data.integer)]


def _slice(ev, node, ins):
    data = ins[0]
    rank = len(data.shape)
    starts, ends = integers(ins[1]), integers(ins[2])
    axes = _ints(ins[3]) if len(ins) > 3 and ins[3] is not None else list(range(len(starts)))
    steps = _ints(ins[4]) if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    shape, offset = list(data.shape), [sympy.Integer(0)] * rank
    for start, end, a, step in zip(starts, ends, axes, steps):
        a = _axis(a, rank)
        extent = data.shape[a]
        if step != 1:
            raise NotExact(f"{node.label}: a slice with step {step}")
        start = _bound(start, extent, node)
        end = _bound(end, extent, node)
        shape[a] = sympy.expand(end - start)
        offset[a] = start

    def at(index):
        return data.at(tuple(sympy.expand(i + o) for i, o in zip(index, offset)))

    return [Sym(tuple(shape), at, data.integer)]


def _bound(value, extent, node):
    """A Slice bound for every size: a number that counts from either end, or a dim itself. A
    number past what every extent of at least LEAST holds clamps at some sizes and not at others
    (``Slice(0, 100)`` along W, or ``-100``): no exact rule."""
    value = sympy.sympify(value)
    if value.is_Integer:
        v = int(value)
        if v >= _END:
            return extent
        if v <= -_END:
            return sympy.Integer(0)
        if extent.is_Integer:
            return sympy.Integer(min(max(v + int(extent), 0) if v < 0 else v, int(extent)))
        if abs(v) <= LEAST:  # within every extent of at least LEAST (a size of 1 is small_dims')
            return sympy.expand(extent + v) if v < 0 else sympy.Integer(v)
        raise NotExact(f"{node.label}: a slice bound {v} on an axis whose extent follows the dims")
    if same(value, extent):
        return extent
    raise NotExact(f"{node.label}: a slice bound {value} that follows the dims")


def _shape(ev, node, ins):
    source = ins[0]
    rank = len(source.shape)
    start = _axis(node.attr("start") or 0, rank) if node.op_type == "Shape" else 0
    end = node.attr("end")
    end = rank if end is None or node.op_type == "Size" else min(_axis(end, rank), rank)
    extents = list(source.shape[start:end])
    if node.op_type == "Size":
        total = sympy.Integer(1)
        for e in source.shape:
            total *= e
        return [Sym((), lambda index: to_ratio(total), True)]
    return [Sym((sympy.Integer(len(extents)),), lambda index: to_ratio(extents[number(index[0])]), True)]


def _range(ev, node, ins):
    start, limit, delta = (scalar(s) for s in ins)
    step = delta.number()
    if step != 1:
        raise NotExact(f"{node.label}: a range with step {step}")
    extent = sympy.expand(to_integer(limit - start))
    integer = ev.integer(node.outputs[0])
    return [Sym((extent,), lambda index: start + to_ratio(index[0]), integer)]


def _constant_of_shape(ev, node, ins):
    extents = tuple(sympy.sympify(e) for e in integers(ins[0]))
    value = node.attr("value")
    fill = 0.0 if value is None else float(np.asarray(value).reshape(-1)[0])
    return [Sym(extents, lambda index: Ratio.const(fill), ev.integer(node.outputs[0]))]


def _matmul(ev, node, ins):
    a, b = ins
    if len(a.shape) < 2 or len(b.shape) < 2:
        raise NotExact(f"{node.label}: a matrix product of a vector")
    if not same(a.shape[-1], b.shape[-2]):
        raise Tied(a.shape[-1], b.shape[-2], f"{node.label}: multiplies")
    inner = number(a.shape[-1]) if a.shape[-1].is_Integer else None
    if inner is None or inner > 16:
        raise NotExact(f"{node.label}: a matrix product over an axis that follows the dims")
    batch = broadcast(a.shape[:-2], b.shape[:-2])
    shape = batch + (a.shape[-2], b.shape[-1])

    def at(index):
        lead, m, n = index[:-2], index[-2], index[-1]
        total = Ratio.const(0.0)
        for k in range(inner):
            kk = sympy.Integer(k)
            total = total + a.at(broadcast_index(lead, a.shape[:-2]) + (m, kk)) * \
                b.at(broadcast_index(lead, b.shape[:-2]) + (kk, n))
        return total

    return [Sym(shape, at, False)]


def _constant(ev, node, ins):
    value = ev.ctx.constant(node.outputs[0])
    if value is None:
        value = ev.values.get(node.outputs[0])
    if value is None:
        raise NotExact(f"{node.label}: a constant whose value is not known")
    return [constant(np.asarray(value))]


def _reduce(ev, node, ins):
    """ReduceSum / ReduceMean over axes of a numeric extent (a matrix product written as a
    product and a sum): the terms added one by one."""
    data = ins[0]
    rank = len(data.shape)
    axes = node.attr("axes")
    if axes is None and len(ins) > 1 and ins[1] is not None:
        axes = _ints(ins[1])
    if not axes:
        if node.attr("noop_with_empty_axes"):
            return [data]
        axes = list(range(rank))
    axes = sorted({_axis(a, rank) for a in axes})
    counts = [data.shape[a] for a in axes]
    if any(not c.is_Integer or int(c) > 64 for c in counts):
        raise NotExact(f"{node.label}: a sum along an axis that follows the dims")
    keep = node.attr("keepdims")
    keep = 1 if keep is None else keep
    shape = tuple(sympy.Integer(1) if i in axes else e for i, e in enumerate(data.shape) if keep or i not in axes)
    total_count = int(np.prod([int(c) for c in counts]))

    def at(index):
        it = iter(index)
        full = list(index) if keep else [None if i in axes else next(it) for i in range(rank)]
        total = Ratio.const(0.0)
        for picks in np.ndindex(*[int(c) for c in counts]):
            for a, i in zip(axes, picks):
                full[a] = sympy.Integer(i)
            total = total + data.at(tuple(full))
        return total / Ratio.const(float(total_count)) if node.op_type == "ReduceMean" else total

    return [Sym(shape, at, data.integer)]


def _fused_matmul(ev, node, ins):
    """onnxruntime's com.microsoft FusedMatMul: alpha * (A or A^T) @ (B or B^T) on the last two axes."""
    if node.attr("transBatchA") or node.attr("transBatchB"):
        raise NotExact(f"{node.label}: a FusedMatMul that transposes batch axes")
    a, b = ins[0], ins[1]
    a = _last_two_swapped(a) if node.attr("transA") else a
    b = _last_two_swapped(b) if node.attr("transB") else b
    product = _matmul(ev, node, [a, b])[0]
    alpha = Ratio.const(float(node.attr("alpha") if node.attr("alpha") is not None else 1.0))
    return [Sym(product.shape, lambda index: product.at(index) * alpha)]


def _last_two_swapped(sym: Sym) -> Sym:
    if len(sym.shape) < 2:
        raise NotExact("a transposed vector")
    shape = sym.shape[:-2] + (sym.shape[-1], sym.shape[-2])
    return Sym(shape, lambda index: sym.at(tuple(index[:-2]) + (index[-1], index[-2])), sym.integer)


# onnxruntime's contrib ops its optimiser writes in place of standard ones
CONTRIB = {("com.microsoft", "FusedMatMul"): _fused_matmul}

RULES = {
    "Add": _elementwise(lambda args, integer: args[0] + args[1]),
    "Sub": _elementwise(lambda args, integer: args[0] - args[1]),
    "Mul": _elementwise(_product), "Div": _elementwise(_div),
    "Neg": _elementwise(lambda args, integer: -args[0]),
    "Sum": _elementwise(_sum),
    "Cast": _cast, "CastLike": _cast, "Identity": _identity, "Dropout": _identity,
    "Reshape": _reshape, "Flatten": _reshape, "Squeeze": _reshape, "Unsqueeze": _reshape,
    "Transpose": _transpose, "Expand": _expand, "Concat": _concat, "Gather": _gather, "Slice": _slice,
    "Shape": _shape, "Size": _shape, "Range": _range, "ConstantOfShape": _constant_of_shape, "MatMul": _matmul,
    "Max": _extreme, "Min": _extreme, "Split": _split, "Tile": _tile, "ScatterND": _scatter_nd,
    "GatherND": _gather_nd, "Reciprocal": _elementwise(lambda args, integer: Ratio.const(1.0) / args[0]),
    "Where": _where, "Constant": _constant, "ReduceSum": _reduce, "ReduceMean": _reduce,
    "Not": _logic, "And": _logic, "Or": _logic, "Xor": _logic,
    "Abs": _sign_rules, "Relu": _sign_rules, "Sign": _sign_rules, "Clip": _sign_rules,
    **{op: _comparison for op in _COMPARE},
}
