"""Elements a graph computes exactly, whatever its run-time data: facts from above a cut.

A region is proved from its variable down; what the graph computed above it is data, any value.
Some of it is not: kornia builds a homography as ``[M; 0 0 1]``, normalises it, inverts it as
adjugate over determinant, and the last row of the result is exactly ``(0, 0, 1)`` for every
``M`` (the cofactors of a row of exact zeros are exact zeros; ``C33 / det`` is one value divided
by itself). ``fixed_elements`` proves such facts: it walks back from a value and computes each
element as an expression of the graph's data, its dims and constants, keeping the identities
IEEE arithmetic holds exactly on finite values:

- ``x * 0 = 0``, ``x * 1 = x``, ``x + 0 = x``, ``x - 0 = x``, ``0 - x = -x``, ``x - x = 0``,
  ``x / 1 = x``, ``0 / x = 0``, ``x / x = 1``, ``--x = x``; products and quotients carry a
  sign out (``a * -b = -(a * b)``: rounding is symmetric), ``x + -y = x - y``; sums and products
  are commutative (the same value either way round), never re-associated;
- selections are exact: ``Min``, ``Max``, their reductions, ``Abs`` and ``Where`` carry bounds
  (the largest of a set holding a 1 is at least 1, so ``Min(that, 1)`` is 1), and a comparison
  the bounds settle is a constant;
- a matrix product's element whose terms but one have an exact zero factor is that term, however
  the kernel orders or fuses its sums; otherwise its terms name it (one kernel, one order);
- moves (Reshape, Gather, Slice, Concat, Expand...) move elements; a constant computed from
  constants is the value the graph computes (one evaluation at probe dims supplies it, with the
  indices and sizes the moves take).

Anything else is a fresh unknown. The identities hold where the values are finite (``0 * inf``
is NaN): a fact is what every run computes whose data and intermediates are finite. Dims are
symbols, never the probe's values, so a fact holds at every size.
"""

from __future__ import annotations

import itertools

import numpy as np
from onnx import helper

from ..errors import SurgeonError
from ..graph.order import toposort
from ..graph.walk import BackWalk

MAX_NODES = 400  # walked above the value; past this it is a network, not a transform
MAX_ELEMENTS = 1 << 16  # elements followed in all, at the probe's dims

_SIZES = (2, 3, 4, 5, 6, 7)  # probe values for dynamic dims, one per name
_PICKS = ("Gather", "Slice", "Split")  # ops whose index inputs choose elements: constants only
# ops with a rule below; the walk stops at any other (a convolution's output is data to it)
FOLLOWED = frozenset("""Constant Identity Reshape Flatten Squeeze Unsqueeze Dropout Transpose Concat Expand Tile
    Gather Slice Split Shape Size ConstantOfShape Cast CastLike Add Sub Mul Div Neg Abs Reciprocal Min Max Equal
    Greater Less GreaterOrEqual LessOrEqual Where Not And Or Xor IsNaN IsInf ReduceMax ReduceMin MatMul""".split())


class _Table:
    """Hash-consed expressions: id -> (key, lo, hi, value). ``value`` is set for constants."""

    def __init__(self):
        self.ids: dict[tuple, int] = {}
        self.keys: list[tuple] = []
        self.lo: list[float] = []
        self.hi: list[float] = []
        self.value: list = []

    def make(self, key: tuple, lo=-np.inf, hi=np.inf, value=None) -> int:
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.keys)
            self.keys.append(key)
            self.lo.append(float(lo))
            self.hi.append(float(hi))
            self.value.append(value)
        return found

    def const(self, v) -> int:
        v = np.asarray(v).item()
        if isinstance(v, float) and v == 0.0:
            v = 0.0  # -0.0 and 0.0: one zero (the sign of a zero only shows past a non-finite step)
        if isinstance(v, (bool, np.bool_)):
            return self.make(("c", bool(v)), float(v), float(v), bool(v))
        if isinstance(v, float) and not np.isfinite(v):
            return self.make(("c", repr(v)), v, v, v)
        return self.make(("c", float(v)), float(v), float(v), float(v))

    def is_const(self, i: int, v=None) -> bool:
        value = self.value[i]
        return value is not None and (v is None or value == v)

    def negated(self, i: int) -> int | None:
        key = self.keys[i]
        return key[2] if key[0] == "neg" else None


class _Arith:
    """Elementwise ops on expression ids, with the exact identities (``dt``: the type computed in)."""

    def __init__(self, table: _Table):
        self.t = table

    def neg(self, dt, a):
        t = self.t
        if t.is_const(a):
            return t.const(-t.value[a]) if not isinstance(t.value[a], bool) else None
        inner = t.negated(a)
        if inner is not None:
            return inner
        return t.make(("neg", dt, a), -t.hi[a], -t.lo[a])

    def _unsign(self, a):
        """(magnitude, negated?): a negation or a negative constant carries its sign out."""
        t = self.t
        inner = t.negated(a)
        if inner is not None:
            return inner, True
        if t.is_const(a) and not isinstance(t.value[a], bool) and t.value[a] < 0:
            return t.const(-t.value[a]), True
        return a, False

    def _signed(self, dt, op, a, b):
        """A product or quotient with the signs carried out (rounding is symmetric in sign);
        a product's operands in one order (it commutes), a quotient of one value by itself 1."""
        t = self.t
        (a, sa), (b, sb) = self._unsign(a), self._unsign(b)
        if op == "div" and a == b:
            return t.const(-1.0) if sa != sb else t.const(1.0)
        found = t.make((op, dt, min(a, b), max(a, b)) if op == "mul" else (op, dt, a, b))
        return self.neg(dt, found) if sa != sb else found

    def mul(self, dt, a, b):
        t = self.t
        if t.is_const(a, 0.0) or t.is_const(b, 0.0):
            return t.const(0.0)
        if t.is_const(a, 1.0):
            return b
        if t.is_const(b, 1.0):
            return a
        return self._signed(dt, "mul", a, b)

    def div(self, dt, a, b):
        t = self.t
        if t.is_const(b, 1.0):
            return a
        if t.is_const(a, 0.0):
            return t.const(0.0)
        if a == b:
            return t.const(1.0)
        return self._signed(dt, "div", a, b)

    def add(self, dt, a, b):
        t = self.t
        if t.is_const(a, 0.0):
            return b
        if t.is_const(b, 0.0):
            return a
        nb, na = t.negated(b), t.negated(a)
        if nb is not None:
            return self.sub(dt, a, nb)
        if na is not None:
            return self.sub(dt, b, na)
        return t.make(("add", dt, min(a, b), max(a, b)))

    def sub(self, dt, a, b):
        t = self.t
        if t.is_const(b, 0.0):
            return a
        if t.is_const(a, 0.0):
            return self.neg(dt, b)
        if a == b:
            return t.const(0.0)
        nb = t.negated(b)
        if nb is not None:
            return self.add(dt, a, nb)
        return t.make(("sub", dt, a, b))

    def extreme(self, dt, op, args):
        """Min / Max: an argument the bounds show can never be chosen is dropped."""
        t = self.t
        args = list(dict.fromkeys(args))
        if op == "Min":
            best = min(t.hi[a] for a in args)
            args = [a for a in args if t.lo[a] <= best]
        else:
            best = max(t.lo[a] for a in args)
            args = [a for a in args if t.hi[a] >= best]
        if len(args) == 1:
            return args[0]
        lo = (min if op == "Min" else max)(t.lo[a] for a in args)
        hi = (min if op == "Min" else max)(t.hi[a] for a in args)
        if lo == hi and np.isfinite(lo):  # every choice left is that one value
            return t.const(lo)
        return t.make((op, dt, tuple(sorted(args))), lo, hi)

    def abs(self, dt, a):
        t = self.t
        inner = t.negated(a)
        a = inner if inner is not None else a
        if t.keys[a][0] == "abs" or t.lo[a] >= 0:
            return a
        top = max(abs(t.lo[a]), abs(t.hi[a]))
        return t.make(("abs", dt, a), 0.0 if t.hi[a] > 0 else -t.hi[a], top)

    def compare(self, op, a, b):
        t = self.t
        if op == "Equal":
            if a == b:
                return t.const(True)
            if t.hi[a] < t.lo[b] or t.hi[b] < t.lo[a]:
                return t.const(False)
            return t.make(("Equal", min(a, b), max(a, b)), 0.0, 1.0)
        if op in ("Less", "LessOrEqual"):
            op, a, b = {"Less": "Greater", "LessOrEqual": "GreaterOrEqual"}[op], b, a
        strict = op == "Greater"
        if t.lo[a] > t.hi[b] or (not strict and t.lo[a] >= t.hi[b]):
            return t.const(True)
        if t.hi[a] < t.lo[b] or (strict and t.hi[a] <= t.lo[b]) or (strict and a == b):
            return t.const(False)
        if not strict and a == b:
            return t.const(True)
        return t.make((op, a, b), 0.0, 1.0)

    def where(self, c, a, b):
        t = self.t
        if t.is_const(c):
            return a if t.value[c] else b
        if a == b:
            return a
        return t.make(("Where", c, a, b), min(t.lo[a], t.lo[b]), max(t.hi[a], t.hi[b]))


def _feeds(ctx, leaves: list[str], rng, values=_SIZES) -> dict[str, np.ndarray] | None:
    """Data for the run-time leaves at probe dims (``values``, one per dim name), or None."""
    sizes: dict = {}
    feeds = {}
    for leaf in leaves:
        dims, elem = ctx.shape(leaf), ctx.dtype(leaf)
        if dims is None or elem is None:
            return None
        concrete = []
        for d in dims:
            if isinstance(d, int):
                concrete.append(d)
            else:
                key = d if isinstance(d, str) else ("unnamed", leaf, len(concrete))
                sizes.setdefault(key, values[len(sizes) % len(values)])
                concrete.append(sizes[key])
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem))
        if dtype.kind != "f":
            return None  # an integer input: indices or sizes this walk does not follow
        feeds[leaf] = rng.normal(0.0, 3.0, size=concrete).astype(dtype)
    return feeds


class _Walker:
    """The expressions of every value above one, at one probe's dims."""

    def __init__(self, ctx, values: dict):
        self.ctx, self.values = ctx, values
        self.t = _Table()
        self.ar = _Arith(self.t)
        self.exprs: dict[str, np.ndarray] = {}
        self.count = 0

    def leaf(self, name: str) -> np.ndarray:
        value = np.asarray(self.values[name])
        if value.size > MAX_ELEMENTS:
            raise SurgeonError("a leaf too large to follow")
        ids = np.empty(value.shape, object)
        for idx in np.ndindex(value.shape):
            ids[idx] = self.t.make(("data", name, idx))
        return ids

    def constant(self, name: str) -> np.ndarray:
        value = np.asarray(self.values[name])
        ids = np.empty(value.shape, object)
        for idx in np.ndindex(value.shape):
            ids[idx] = self.t.const(value[idx])
        return ids

    def unknown(self, node, k: int, shape) -> np.ndarray:
        ids = np.empty(shape, object)
        for idx in np.ndindex(shape):
            ids[idx] = self.t.make(("op", node.name or id(node), k, idx))
        return ids

    def run(self, node) -> None:
        outs = [o for o in node.outputs if o]
        ins = [self.exprs.get(i) if i else None for i in node.inputs]
        shapes = [np.shape(self.values[o]) for o in outs]
        self.count += sum(int(np.prod(s)) for s in shapes)
        if self.count > MAX_ELEMENTS:
            raise SurgeonError("too many elements above the cut")
        found = None
        if node.domain in ("", "ai.onnx") and all(x is not None for x, i in zip(ins, node.inputs) if i):
            try:
                found = self._rule(node, ins, shapes)
            except (ValueError, IndexError, TypeError, KeyError):
                found = None
        if found is None:
            found = [self.unknown(node, k, s) for k, s in enumerate(shapes)]
        for name, ids in zip(outs, found):
            ids = np.asarray(ids, object).reshape(np.shape(self.values[name]))
            self.exprs[name] = self._settle(name, ids)

    def _settle(self, name, ids):
        """An element every input of which was a constant is the value the graph computed."""
        value = np.asarray(self.values[name])
        if value.dtype.kind not in "biuf":
            return ids
        out = ids.copy()
        for idx in np.ndindex(ids.shape):
            i = ids[idx]
            if i is None:
                out[idx] = self.t.const(value[idx])
            elif self.t.is_const(i) and value.dtype.kind == "f" and np.isfinite(value[idx]) \
                    and float(value[idx]) != self.t.value[i]:
                raise SurgeonError(f"{name}: a fact contradicts the evaluation at {idx}")
        return out

    def _elementwise(self, fn, ins, shape):
        arrays = np.broadcast_arrays(*[np.asarray(x, object) for x in ins])
        out = np.empty(shape, object)
        for idx in np.ndindex(shape):
            args = [a[idx] for a in arrays]
            if all(self.t.is_const(a) for a in args):
                out[idx] = None  # the evaluation's value (_settle)
            else:
                out[idx] = fn(*args)
        return [out]

    def _rule(self, node, ins, shapes):
        op, ar, t = node.op_type, self.ar, self.t
        out_val = np.asarray(self.values[node.outputs[0]])
        dt = out_val.dtype.str
        concrete = [np.asarray(self.values[i]) if i else None for i in node.inputs]
        attr = node.attr
        if op in _PICKS and not all(self._fixed(x) for x in ins[1:] if x is not None):
            return None  # which elements it picks follows the dims (or the data): not followed
        if op == "Constant":
            return [np.full(shapes[0], None, object)]
        if op in ("Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Dropout"):
            return [ins[0].reshape(shapes[0])]
        if op == "Transpose":
            perm = attr("perm")
            return [np.transpose(ins[0], perm) if perm is not None else ins[0].T]
        if op == "Concat":
            return [np.concatenate([x for x in ins if x is not None], axis=attr("axis"))]
        if op == "Expand":
            return [np.broadcast_to(ins[0], shapes[0]).copy()]
        if op == "Tile":
            return [np.tile(ins[0], concrete[1].astype(int).tolist())]
        if op == "Gather":
            axis = attr("axis") or 0
            idx = concrete[1].astype(np.int64)
            idx = np.where(idx < 0, idx + ins[0].shape[axis], idx)
            return [np.take(ins[0], idx, axis=axis)]
        if op == "Slice":
            return [self._slice(node, ins[0], concrete)]
        if op == "Split":
            axis = attr("axis") or 0
            sizes = concrete[1] if len(concrete) > 1 and concrete[1] is not None else attr("split")
            if sizes is None:
                sizes = [s[axis] for s in shapes]
            return np.split(ins[0], np.cumsum(np.asarray(sizes, int))[:-1].tolist(), axis=axis)
        if op in ("Shape", "Size"):
            return self._shape(node, shapes[0])
        if op == "ConstantOfShape":
            return [np.full(shapes[0], None, object)]
        if op in ("Cast", "CastLike"):
            source = concrete[0].dtype
            if source == out_val.dtype or (source.kind == "f" and out_val.dtype.kind == "f"
                                           and out_val.dtype.itemsize >= source.itemsize):
                same = source == out_val.dtype
                return self._elementwise(lambda a: a if same else t.make(("cast", dt, a), t.lo[a], t.hi[a]),
                                         ins[:1], shapes[0])
            return self._elementwise(lambda a: t.make(("cast", dt, a)), ins[:1], shapes[0])
        binary = {"Add": ar.add, "Sub": ar.sub, "Mul": ar.mul, "Div": ar.div}
        if op in binary:
            return self._elementwise(lambda a, b: binary[op](dt, a, b), ins[:2], shapes[0])
        if op == "Neg":
            return self._elementwise(lambda a: ar.neg(dt, a), ins[:1], shapes[0])
        if op == "Abs":
            return self._elementwise(lambda a: ar.abs(dt, a), ins[:1], shapes[0])
        if op == "Reciprocal":
            return self._elementwise(lambda a: t.make(("recip", dt, a)), ins[:1], shapes[0])
        if op in ("Min", "Max"):
            return self._elementwise(lambda *a: ar.extreme(dt, op, a), ins, shapes[0])
        if op in ("Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"):
            return self._elementwise(lambda a, b: ar.compare(op, a, b), ins[:2], shapes[0])
        if op == "Where":
            return self._elementwise(ar.where, ins[:3], shapes[0])
        if op in ("Not", "And", "Or", "Xor", "IsNaN", "IsInf"):
            return self._elementwise(lambda *a: t.make((op,) + tuple(a), 0.0, 1.0), ins, shapes[0])
        if op in ("ReduceMax", "ReduceMin"):
            return [self._reduce(node, op, ins[0], concrete, shapes[0], dt)]
        if op == "MatMul":
            return [self._matmul(ins[0], ins[1], shapes[0], dt)]
        return None

    def _fixed(self, ids) -> bool:
        return all(self.t.is_const(i) for i in np.asarray(ids, object).reshape(-1))

    def _slice(self, node, x, concrete):
        if len(node.inputs) > 1:
            starts, ends = concrete[1].tolist(), concrete[2].tolist()
            axes = concrete[3].tolist() if len(concrete) > 3 and concrete[3] is not None else list(range(len(starts)))
            steps = concrete[4].tolist() if len(concrete) > 4 and concrete[4] is not None else [1] * len(starts)
        else:
            starts, ends = node.attr("starts"), node.attr("ends")
            axes = node.attr("axes") or list(range(len(starts)))
            steps = [1] * len(starts)
        index = [slice(None)] * x.ndim
        for s, e, a, st in zip(starts, ends, axes, steps):
            index[a % x.ndim] = slice(int(s), int(e), int(st))
        return x[tuple(index)]

    def _shape(self, node, shape):
        source = node.inputs[0]
        dims = self.ctx.shape(source)
        real = np.shape(self.values[source])
        if node.op_type == "Size":
            known = dims is not None and all(isinstance(d, int) for d in dims)
            return [np.array(None if known else self.t.make(("size", source), 0.0), object).reshape(shape)]
        start, end = node.attr("start") or 0, node.attr("end")
        picked = list(range(len(real)))[start:end]
        ids = [None if dims is not None and len(dims) == len(real) and isinstance(dims[a], int)
               else self.t.make(("dim", source, a), 0.0) for a in picked]
        return [np.array(ids, object).reshape(shape)]

    def _reduce(self, node, op, x, concrete, shape, dt):
        axes = node.attr("axes")
        if axes is None and len(concrete) > 1 and concrete[1] is not None:
            axes = concrete[1].astype(int).tolist()
        axes = tuple(a % x.ndim for a in (axes if axes else range(x.ndim)))
        keep = node.attr("keepdims")
        keep = 1 if keep is None else keep
        moved = np.moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim)))
        lead = moved.shape[:x.ndim - len(axes)]
        flat = moved.reshape(lead + (-1,))
        out = np.empty(lead, object)
        pick = {"ReduceMax": "Max", "ReduceMin": "Min"}[op]
        for idx in np.ndindex(lead):
            args = list(flat[idx])
            out[idx] = None if all(self.t.is_const(a) for a in args) else self.ar.extreme(dt, pick, args)
        return out.reshape(shape)

    def _matmul(self, a, b, shape, dt):
        if a.ndim == 1:
            a = a[None, :]
        if b.ndim == 1:
            b = b[:, None]
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = np.broadcast_to(a, batch + a.shape[-2:])
        b = np.broadcast_to(b, batch + b.shape[-2:])
        out = np.empty(batch + (a.shape[-2], b.shape[-1]), object)
        t = self.t
        for idx in np.ndindex(out.shape):
            *lead, i, j = idx
            row, col = a[tuple(lead) + (i,)], b[tuple(lead) + (slice(None), j)]
            if all(t.is_const(x) for x in itertools.chain(row, col)):
                out[idx] = None
                continue
            terms = [(x, y) for x, y in zip(row, col) if not (t.is_const(x, 0.0) or t.is_const(y, 0.0))]
            if not terms:
                out[idx] = t.const(0.0)
            elif len(terms) == 1:  # the others are exact zeros: this term, in any order or fused
                out[idx] = self.ar.mul(dt, *terms[0])
            else:
                out[idx] = t.make(("dot", dt, len(row), tuple(terms)))
        return out.reshape(shape)


def fixed_elements(ctx, value: str, item_dims: int = 2) -> dict[int, float]:
    """``{flat position within one item: value}`` for the elements of ``value`` every item holds
    exactly, whatever the graph's run-time data (finite) and dims; ``item_dims``: the trailing
    axes one item spans ([N, 3, 3]: 2). Empty when nothing is proved (a walk past ``MAX_NODES``,
    control flow, integer inputs, a region that does not run)."""
    walk, taken, leaves = BackWalk([value]), 0, {}
    for v in walk:
        node = ctx.producer(v)
        if node is None or node.is_op("Constant"):
            if node is not None:
                walk.take(node)
            elif ctx.constant(v) is None and not ctx.is_initializer(v):
                leaves[v] = None
            continue
        if node.domain not in ("", "ai.onnx") or node.op_type not in FOLLOWED:
            if ctx.constant(v) is None:
                leaves[v] = None  # its elements would be unknowns anyway: data, whatever computed it
                continue
        if node.subgraphs():
            return {}
        walk.take(node)
        taken += 1
        if taken > MAX_NODES:
            return {}
        walk.into([i for i in node.inputs if i])
    nodes = toposort(walk.nodes())  # a graph's list need not be in order (converters append casts)
    # at two sets of dims and data: an element's place could follow the dims through a
    # reshape of a dim-long axis, which one evaluation would not show
    first = _facts_at(ctx, nodes, list(leaves), value, item_dims, _SIZES, 7)
    if not first:
        return {}
    second = _facts_at(ctx, nodes, list(leaves), value, item_dims, _SIZES[1:] + _SIZES[:1], 8)
    return {pos: v for pos, v in first.items() if second.get(pos) == v}


def _facts_at(ctx, nodes, leaves: list[str], value: str, item_dims: int, sizes, seed: int) -> dict[int, float]:
    feeds = _feeds(ctx, leaves, np.random.default_rng(seed), sizes)
    if feeds is None:
        return {}
    wanted = [o for n in nodes for o in n.outputs if o]
    try:
        values = dict(zip(wanted, ctx.evaluate(wanted, feeds))) if wanted else {}
    except SurgeonError:
        return {}
    values.update(feeds)
    walker = _Walker(ctx, values)
    read = {i for n in nodes if n.op_type not in ("Shape", "Size") for i in n.inputs}
    try:
        for leaf in leaves:
            if leaf in read:  # a leaf only measured (Shape of the image) needs no elements
                walker.exprs[leaf] = walker.leaf(leaf)
        for node in nodes:
            for i in node.inputs:
                if not i or i in walker.exprs or (node.op_type in ("Shape", "Size") and i in values):
                    continue
                constant = ctx.constant(i) if ctx.producer(i) is None else None
                if constant is None:  # computed and not yet followed, or unknown: no facts from this walk
                    return {}
                values[i] = np.asarray(constant)
                walker.exprs[i] = walker.constant(i)
            walker.run(node)
    except SurgeonError:
        return {}
    ids = walker.exprs.get(value)
    if ids is None or ids.ndim < item_dims + 1:
        return {}
    items = ids.reshape((-1,) + ids.shape[ids.ndim - item_dims:])
    found = {}
    for pos, idx in enumerate(np.ndindex(items.shape[1:])):
        column = [items[(b,) + idx] for b in range(items.shape[0])]
        if all(walker.t.is_const(c) for c in column):
            first = walker.t.value[column[0]]
            if not isinstance(first, bool) and all(walker.t.value[c] == first for c in column):
                found[pos] = float(first)
    return found
