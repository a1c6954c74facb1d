"""surgeon.recognise.symbolic: one element of a region as an exact expression of the dims and its
position, each rule beside a graph where its assumption fails and it must say NotExact (a
slice bound at a probe's length, a floor, a clamp, a sum along a dim-long axis, a table read
at a computed index, a scatter with a reduction), and the algebra that compares two of them."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, numpy_helper

from surgeon.graph.node import Node
from surgeon.recognise import (
    NotExact,
    Poly,
    Ratio,
    Sym,
    differs,
    dim_symbol,
    evaluate_exactly,
)
from surgeon.recognise.algebra import Bound, positive

from ..builders import GraphBuilder

H, W = dim_symbol("d0"), dim_symbol("d1")


class _Context:
    def __init__(self, consts):
        self.consts = consts

    def constant(self, name):
        return self.consts.get(name)


def _unreadable(index):
    raise NotExact("data read")


def element(build, probe=(5, 7)):
    """The generic element of ``y = build(g, x)``, x a run-time [H, W] float tensor."""
    g = GraphBuilder()
    x = g.input("x", ["H", "W"])
    g.op("Identity", build(g, x), out="y")
    g.output("y")
    model = g.model(18)
    names = [o for n in model.graph.node for o in n.output]
    del model.graph.output[:]
    model.graph.output.extend([__import__("onnx").helper.make_empty_tensor_value_info(o) for o in names])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    values = dict(zip(names, session.run(names, {"x": np.zeros(probe, np.float32)})))
    consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    nodes = [Node(n, i) for i, n in enumerate(model.graph.node)]
    return evaluate_exactly(_Context(consts), nodes, values, {"x": Sym((H, W), _unreadable)}, "y")


def _w(g, x, to=TensorProto.FLOAT):
    return g.op("Cast", g.op("Gather", g.op("Shape", x), g.ints(1), axis=0), to=to)


def _columns(g, x):
    return g.op("Cast", g.op("Range", g.ints(0), g.op("Gather", g.op("Shape", x), g.ints(1), axis=0), g.ints(1)),
                to=TensorProto.FLOAT)


def _flattened_back(g, x):
    """i * W + j over [H, W], flattened and reshaped back to x's shape, then transposed twice."""
    shape = g.op("Shape", x)
    rows = g.op("Cast", g.op("Range", g.ints(0), g.op("Gather", shape, g.ints(0), axis=0), g.ints(1)),
                to=TensorProto.FLOAT)
    grid = g.op("Add", g.op("Mul", g.op("Unsqueeze", rows, g.ints([1])), _w(g, x)),
                g.op("Unsqueeze", _columns(g, x), g.ints([0])))
    flat = g.op("Reshape", grid, g.ints([-1]))
    return g.op("Transpose", g.op("Transpose", g.op("Reshape", flat, shape), perm=[1, 0]), perm=[1, 0])


def _normalised(g, x):
    """(2 j + 1) / W - 1, expanded over the rows: a "constant" row whose length follows W."""
    coord = g.op("Sub", g.op("Div", g.op("Add", g.op("Mul", _columns(g, x), g.const(np.float32(2.0))),
                                         g.const(np.float32(1.0))), _w(g, x)), g.const(np.float32(1.0)))
    return g.op("Expand", g.op("Unsqueeze", coord, g.ints([0])), g.op("Shape", x))


def _last_100(g, x):
    """The last 100 columns of the normalised column: all of them below 100 columns."""
    return g.op("Slice", _normalised(g, x), g.ints([-100]), g.ints([2 ** 62]), g.ints([1]))


def _last_column(g, x):
    """The normalised coordinate of the last column, (W - 1) / W, expanded over x."""
    return g.op("Expand", g.op("Slice", _normalised(g, x), g.ints([-1]), g.ints([2 ** 62]), g.ints([1])),
                g.op("Shape", x))


def _guarded(threshold):
    """Where(W > threshold, j / (W - 1), 0): dynamo's linspace guard when the threshold is 1."""
    def build(g, x):
        w = _w(g, x)
        step = g.op("Div", _columns(g, x), g.op("Sub", w, g.const(np.float32(1.0))))
        chosen = g.op("Where", g.op("Greater", w, g.const(np.float32(threshold))), step,
                      g.op("Mul", step, g.const(np.float32(0.0))))
        return g.op("Expand", g.op("Unsqueeze", chosen, g.ints([0])), g.op("Shape", x))
    return build


def _extreme(op, bound, bound_first=False):
    def build(g, x):
        pair = (g.const(np.float32(bound)), _w(g, x))
        w = g.op(op, *(pair if bound_first else pair[::-1]))
        return g.op("Expand", g.op("Reshape", g.op("Mul", _columns(g, x), w), g.ints([1, -1])), g.op("Shape", x))
    return build


def _signed(op, shift, **attrs):
    """columns * op(W + shift): Abs, Relu, Sign or Clip of a size, settled where its sign is."""
    def build(g, x):
        w = g.op("Add", _w(g, x), g.const(np.float32(shift)))
        bounds = [g.const(np.float32(b)) if b is not None else "" for b in attrs.pop("bounds", ())]
        value = g.op(op, w, *bounds, **attrs)
        return g.op("Expand", g.op("Reshape", g.op("Mul", _columns(g, x), value), g.ints([1, -1])), g.op("Shape", x))
    return build


def _tied(g, x):
    """columns + a [20, 1] table of zeros: runs only where H is 20, which the evaluation assumes."""
    return g.op("Add", g.op("Expand", g.op("Unsqueeze", _columns(g, x), g.ints([0])), g.op("Shape", x)),
                g.const(np.zeros((20, 1), np.float32)))


def _ratio(num, den=1):
    from surgeon.recognise import to_ratio
    return Ratio(to_ratio(num).num, to_ratio(den).num)


P0, P1 = dim_symbol("p0"), dim_symbol("p1")

EXACT = [
    ("flattened and back", _flattened_back, _ratio(P0 * W + P1)),
    ("normalised column", _normalised, _ratio(2 * P1 + 1 - W, W)),
    ("a guard settled for W >= 2", _guarded(1.0), _ratio(P1, W - 1)),
    ("Max(W, 1) is W", _extreme("Max", 1.0), _ratio(P1 * W)),
    ("Min(W, 1) is 1", _extreme("Min", 1.0), _ratio(P1)),
    ("Max(1, W) is W", _extreme("Max", 1.0, bound_first=True), _ratio(P1 * W)),
    ("the last column", _last_column, _ratio(W - 1, W)),
    ("Abs(W - 1) is W - 1", _signed("Abs", -1.0), _ratio(P1 * (W - 1))),
    ("Abs(W) is W", _signed("Abs", 0.0), _ratio(P1 * W)),
    ("Relu(1 - W) is 0", lambda g, x: g.op("Mul", _signed("Relu", -1.0)(g, x), g.const(np.float32(-1.0))),
     _ratio(-P1 * (W - 1))),
    ("Sign(W) is 1", _signed("Sign", 0.0), _ratio(P1)),
    ("Clip(W, 1) is W", _signed("Clip", 0.0, bounds=(1.0,)), _ratio(P1 * W)),
    ("an arange table read at W", lambda g, x: _table_at_w(g, x, np.arange(64, dtype=np.float32) * 0.5 + 3),
     _ratio(W / 2 + 3)),
]


@pytest.mark.parametrize("label, build, expected", EXACT, ids=[e[0] for e in EXACT])
def test_each_rule_gives_the_exact_element(label, build, expected):
    found = element(build)
    assert differs(found.values[()], expected, 1e-12) is None, (found.values[()], expected)


def _slice_at_100(g, x):
    return g.op("Slice", x, g.ints([0]), g.ints([100]), g.ints([1]))



def _floor_div(g, x):
    w = _w(g, x, TensorProto.INT64)
    q = g.op("Cast", g.op("Div", w, g.ints(128)), to=TensorProto.FLOAT)
    return g.op("Add", g.op("Expand", g.op("Unsqueeze", _columns(g, x), g.ints([0])), g.op("Shape", x)), q)


def _truncated(g, x):
    w = g.op("Cast", g.op("Mul", _w(g, x), g.const(np.float32(0.3))), to=TensorProto.INT64)
    return g.op("Expand", g.op("Cast", w, to=TensorProto.FLOAT), g.op("Shape", x))


def _summed_along_w(g, x):
    ones = g.op("Expand", g.const(np.ones((1, 1), np.float32)), g.op("Shape", x))
    total = g.op("ReduceSum", ones, g.ints([1]), keepdims=1)
    return g.op("Add", g.op("Mul", x, g.const(np.float32(0.0))), g.op("Min", total, g.const(np.float32(128.0))))


def _table_at_w(g, x, values=np.arange(64, dtype=np.float32) ** 2 * 0.5):
    table = g.const(values)
    picked = g.op("Gather", table, g.op("Gather", g.op("Shape", x), g.ints(1), axis=0), axis=0)
    return g.op("Expand", picked, g.op("Shape", x))


def _table_at_w_minus(g, x):
    """arange(64)[W - 70]: below 70 columns the index is negative and wraps to W - 6."""
    table = g.const(np.arange(64, dtype=np.float32))
    w = g.op("Gather", g.op("Shape", x), g.ints(1), axis=0)
    picked = g.op("Gather", table, g.op("Sub", w, g.ints(70)), axis=0)
    return g.op("Expand", picked, g.op("Shape", x))


def _scatter_max(g, x):
    coords = _normalised(g, x)
    updates = g.op("Slice", coords, g.ints([0]), g.ints([1]), g.ints([0]))
    return g.op("ScatterND", coords, g.const(np.zeros((1, 1), np.int64)), updates, reduction="max")


def _cumsum(g, x):
    return g.op("CumSum", _normalised(g, x), g.ints(1), exclusive=1)


NOT_EXACT = [
    ("a slice bound at the probe's length", _slice_at_100, "slice bound 100"),
    ("a slice from the end past the probe's length", _last_100, "slice bound -100"),
    ("W // 128", _floor_div, "integer division"),
    ("int(0.3 W)", _truncated, "truncates"),
    ("a guard that goes either way past 2", _guarded(3.0), "goes either way"),
    ("Min(W, 64)", _extreme("Min", 64.0), "goes either way"),
    ("a sum along W", _summed_along_w, "axis that follows the dims"),
    ("a table of squares read at W", _table_at_w, "constant table"),
    ("an arange table read at W - 70 (it wraps)", _table_at_w_minus, "may be negative"),
    ("a scatter that takes a maximum", _scatter_max, "reduction"),
    ("CumSum (no exact rule)", _cumsum, "no exact rule for CumSum"),
    ("Clip(W, 0, 64): either way", _signed("Clip", 0.0, bounds=(0.0, 64.0)), "either way"),
]


@pytest.mark.parametrize("label, build, words", NOT_EXACT, ids=[e[0] for e in NOT_EXACT])
def test_each_rule_says_not_exact_where_its_assumption_fails(label, build, words):
    with pytest.raises(NotExact, match=words):
        element(build)


def _poly(expr):
    from surgeon.recognise import to_ratio
    return to_ratio(expr)


DOMAIN = {"d1": Bound(least=2), "p1": Bound(least=0, position=True, of="d1")}


def test_differs_weighs_a_term_by_what_it_reaches_at_every_size():
    coordinate = _ratio(2 * P1 + 1 - W, W)
    hidden = coordinate + Ratio.of(_poly(P1).num.scale(1e-8))  # 1e-8 x the column
    under = coordinate + Ratio.of(_poly(P1).num.scale(1e-17))  # below float32's rounding at 65,536
    assert differs(coordinate, coordinate, 1e-5, DOMAIN, 1e-7) is None
    assert differs(under, coordinate, 1e-5, DOMAIN, 1e-7) is None
    found = differs(hidden, coordinate, 1e-5, DOMAIN, 1e-7)
    assert found is not None and found[3]["d1"] == 65536 and abs(found[1]) > 1e-4
    # without a domain every term is weighed alone: both are terms the other side lacks
    assert differs(under, coordinate, 1e-5) is not None


def test_positive_for_every_dim_at_least_two():
    w = Poly.symbol("d1")
    assert positive(w - Poly.const(1.0), {"d1": 2})
    assert not positive(w - Poly.const(3.0), {"d1": 2})
    assert not positive(w * w - w.scale(3.0), {"d1": 2})  # 2 - 6 < 0 at d1 = 2


def _tied_to_w_minus_one(g, x):
    """columns + [W - 1, 1] zeros: W - 1 is 1 at W = 2, where it broadcasts; no tie to assume."""
    rows = g.op("Concat", g.op("Sub", g.op("Shape", x, start=1, end=2), g.ints([1])), g.ints([1]), axis=0)
    return g.op("Add", g.op("Expand", g.op("Unsqueeze", _columns(g, x), g.ints([0])), g.op("Shape", x)),
                g.op("Expand", g.const(np.zeros((1, 1), np.float32)), rows))


def test_a_broadcast_against_an_extent_that_may_be_one_is_no_tie():
    with pytest.raises(NotExact, match="broadcast only at some sizes"):
        element(_tied_to_w_minus_one, probe=(6, 7))


def test_a_broadcast_that_runs_at_one_size_is_assumed_there():
    found = element(_tied, probe=(20, 7))
    assert found.shape[0] == 20, found.shape  # H held at 20: no run of the region has it otherwise
    assert differs(found.values[()], _ratio(P1), 1e-12) is None, found.values[()]


@pytest.mark.parametrize("difference, solved", [
    (H * W - 20 * H, (W, 20)),  # [H * W] against [20 * H]: W = 20 (H = 0 is no size)
    (W - H, (H, W)),  # two dims one
    (H * H - 20, None),  # no integer size
    (H - 1, None),  # a size of 1 is the small-dims proof's, not an assumption
])
def test_a_tie_is_solved_for_one_dim(difference, solved):
    from surgeon.recognise.symbolic import _solve
    assert _solve(difference) == solved
