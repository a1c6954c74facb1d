"""surgeon.recognise.exact: elements a graph computes exactly whatever its run-time data, each
fact beside a graph where it does not hold (a run-time row, a row scaled by data, a pick that
follows the dims, a sum the kernel may round its own way, nodes listed out of order)."""

import numpy as np
import pytest

import surgeon
from surgeon import Pattern
from surgeon.recognise import fixed_elements

from ..builders import GraphBuilder, inverse3
from ..builders.graph import FLOAT


def facts(model, value: str) -> dict:
    """``fixed_elements`` of ``value`` in ``model``, from a match context as a pattern gets one."""
    found = {}

    class Ask(Pattern):
        name = "ask-facts"
        anchor_ops = ("Identity",)

        def match(self, ctx, node):
            found.update(fixed_elements(ctx, value))
            return None

        def rewrite(self, ctx, match):
            raise AssertionError("never matches")

    surgeon.fuse(model, plugins=surgeon.PluginSet.of([Ask]))
    return found


def _model(build):
    """A model whose output ``t`` is ``build(g, m, batch)``; M is a run-time [N, 2, 3]."""
    g = GraphBuilder()
    m = g.input("M", ["N", 2, 3])
    batch = g.op("Shape", m, start=0, end=1)
    g.op("Identity", build(g, m, batch), out="t")
    g.output("t")
    return g.model(18)


def _constant_row(g, batch, row=(0.0, 0.0, 1.0)):
    return g.op("Expand", g.const(np.array([[row]], np.float32)), g.op("Concat", batch, g.ints([1, 3]), axis=0))


LAST_ROW = {6: 0.0, 7: 0.0, 8: 1.0}


def test_the_inverse_of_a_matrix_with_a_constant_last_row_keeps_it_exactly():
    """Cofactors of a row of exact zeros are exact zeros; C33 / det is one value over itself."""
    model = _model(lambda g, m, b: inverse3(g, g.op("Concat", m, _constant_row(g, b), axis=1)))
    assert facts(model, "t") == LAST_ROW


def test_a_run_time_row_is_no_fact():
    def build(g, m, b):
        return inverse3(g, g.op("Concat", m, g.input("R", ["N", 1, 3]), axis=1))
    assert facts(_model(build), "t") == {}


def test_a_row_scaled_by_data_keeps_its_zeros_only():
    """[M; 0 0 s]: the inverse's last row is (0, 0, 1/s), its zeros exact, its corner data."""
    def build(g, m, b):
        s = g.input("S", ["N", 1, 1])
        zeros = g.op("Expand", g.const(np.zeros((1, 1, 2), np.float32)), g.op("Concat", b, g.ints([1, 2]), axis=0))
        return inverse3(g, g.op("Concat", m, g.op("Concat", zeros, s, axis=2), axis=1))
    assert facts(_model(build), "t") == {6: 0.0, 7: 0.0}


def test_a_determinant_summed_by_another_kernel_is_not_the_cofactor():
    """A MatMul may order or fuse its sum as it likes: its result is not the Sub's, so C33 / det
    is no fact, while the exact zeros stay."""
    model = _model(lambda g, m, b: inverse3(g, g.op("Concat", m, _constant_row(g, b), axis=1), det_by_matmul=True))
    assert facts(model, "t") == {6: 0.0, 7: 0.0}


def test_bounds_settle_a_normaliser_by_the_largest_and_smallest_entries():
    """kornia's: H / where(m > 0 and finite, max(min(max|H|, 1), min of |H|'s non-zeros), 1).
    A set holding a 1 has its largest at least 1 and its smallest non-zero at most 1: the
    divisor is 1 for every M, and H's last row stays (0, 0, 1)."""
    def build(g, m, b):
        h = g.op("Concat", m, _constant_row(g, b), axis=1)
        a = g.op("Abs", h)
        axes = g.ints([1, 2])
        top = g.op("Min", g.op("ReduceMax", a, axes, keepdims=1), g.const(np.float32(1)))
        masked = g.op("Where", g.op("Equal", a, g.const(np.float32(0))), g.const(np.float32(np.inf)), a)
        low = g.op("Max", top, g.op("ReduceMin", masked, axes, keepdims=1))
        finite = g.op("Not", g.op("Or", g.op("IsInf", low), g.op("IsNaN", low)))
        ok = g.op("And", g.op("Greater", low, g.const(np.float32(0))), finite)
        return g.op("Div", h, g.op("Where", ok, low, g.const(np.float32(1))))
    assert facts(_model(build), "t") == LAST_ROW


def test_a_pick_that_follows_the_dims_is_no_fact():
    """A row of a constant table picked at an index computed from a dim: (0, 0, 1) at the
    probe's small sizes, (0.5, 0, 1) past 12. Which element is read follows the dims: no fact."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    m = g.input("M", ["N", 2, 3])
    batch = g.op("Shape", m, start=0, end=1)
    table = g.const(np.array([[0.0, 0.0, 1.0], [0.5, 0.0, 1.0]], np.float32))
    at = g.op("Min", g.op("Max", g.op("Sub", g.op("Shape", x, start=3, end=4), g.ints([12])), g.ints([0])), g.ints([1]))
    row = g.op("Expand", g.op("Unsqueeze", g.op("Gather", table, at, axis=0), g.ints([0])),
               g.op("Concat", batch, g.ints([1, 3]), axis=0))
    g.op("Identity", g.op("Concat", m, row, axis=1), out="t")
    g.output("t")
    assert facts(g.model(18), "t") == {}


def test_nodes_listed_out_of_order_keep_data_data():
    """float16 converters append their casts at the end of the node list: a walk in list order
    would read the cast's output before it is computed and take its value at the probe for a
    constant. Here the last row's corner is the largest of all of M: data, the same in every item."""
    def build(g, m, b):
        largest = g.op("ReduceMax", g.op("Cast", m, to=FLOAT), g.ints([0, 1, 2]), keepdims=1)  # [1, 1, 1]
        corner = g.op("Expand", largest, g.op("Concat", b, g.ints([1, 1]), axis=0))
        zeros = g.op("Expand", g.const(np.zeros((1, 1, 2), np.float32)), g.op("Concat", b, g.ints([1, 2]), axis=0))
        return g.op("Concat", m, g.op("Concat", zeros, corner, axis=2), axis=1)
    model = _model(build)
    nodes = list(model.graph.node)
    cast = next(n for n in nodes if n.op_type == "Cast")
    del model.graph.node[:]
    model.graph.node.extend([n for n in nodes if n is not cast] + [cast])  # after its reader
    assert [n.op_type for n in model.graph.node][-1] == "Cast"
    assert facts(model, "t") == {6: 0.0, 7: 0.0}


@pytest.mark.parametrize("op, expected", [("Mul", {6: 0.0, 7: 0.0}), ("MatMul", LAST_ROW)])
def test_exact_zeros_survive_products_and_sums(op, expected):
    """[M; 0 0 1] times [M; R] elementwise: (0 * r, 0 * r, 1 * r): zeros, and data. As a matrix
    product with [M; 0 0 1]: its last row's terms but one have an exact zero factor, so it is
    that term (1 * 1), whatever order or fusing the kernel sums in."""
    def build(g, m, b):
        h = g.op("Concat", m, _constant_row(g, b), axis=1)
        other = g.op("Concat", m, g.input("R", ["N", 1, 3]) if op == "Mul" else _constant_row(g, b), axis=1)
        return g.op(op, h, other)
    assert facts(_model(build), "t") == expected


def test_a_matrix_a_network_computes_is_data_and_the_walk_stops_there():
    """[M; 0 0 1] with M from a convolution and a mean: ops without a rule are data to the walk
    (it does not evaluate the network above them), and the constant row is still a fact."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 224, 224])
    weight = g.const(np.random.default_rng(0).standard_normal((6, 3, 3, 3)).astype(np.float32), "w")
    features = g.op("ReduceMean", g.op("Conv", x, weight, pads=[1, 1, 1, 1]), g.ints([2, 3]), keepdims=0)
    m = g.op("Reshape", features, g.ints([-1, 2, 3]))
    batch = g.op("Shape", x, start=0, end=1)
    g.op("Identity", g.op("Concat", m, _constant_row(g, batch), axis=1), out="t")
    g.output("t")
    assert facts(g.model(18), "t") == LAST_ROW
