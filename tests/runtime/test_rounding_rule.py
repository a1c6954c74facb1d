"""Issue 41, the tie rule: an element differing beyond tolerance is a rounding tie only where a
discontinuous op on its path flips when its own inputs move by their own ulps; rounding moves a
value by ulps of itself and of the terms that computed it, never of its tensor's magnitude."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import surgeon
from surgeon import Pattern
from surgeon.validate.discontinuous import deciding_inputs
from surgeon.validate.ulps import steps

EPS = float(np.finfo(np.float32).eps)


def test_a_small_row_moves_by_ulps_of_its_own_size_not_of_its_tensor():
    """A mean square of 1e-8 beside one of 1: rounding moves it by ulps of 1e-8."""
    node = helper.make_node("ReduceMean", ["sq"], ["ms"], axes=[-1], keepdims=1)
    sq = np.array([[1e-8, 1e-8], [1.0, 1.0]], np.float32)
    ms = np.array([[1e-8], [1.0]], np.float32) * np.float32(1.0000001)  # not whole: movable
    found = steps([node], ["ms"], {"sq": sq, "ms": ms}, 8)["ms"]
    assert found[0, 0] < 1e-13 and found[1, 0] == pytest.approx(8 * EPS * 2 * ms[1, 0], rel=1e-3)


def test_a_sum_near_zero_moves_by_ulps_of_its_terms():
    """1.0000001 - 1.0: rounding leaves the difference off by ulps of 1, not of itself."""
    node = helper.make_node("Sub", ["a", "b"], ["d"])
    a, b = np.float32([1.0000001, 3.5]), np.float32([1.0, 0.5])
    d = a - b
    found = steps([node], ["d", "a"], {"a": a, "b": b, "d": d}, 8)
    assert found["d"][0] == pytest.approx(8 * EPS * (d[0] + 2.0000001), rel=1e-5)
    assert found["a"][0] == pytest.approx(8 * EPS * a[0], rel=1e-5)  # no producer: a rounding of itself


@pytest.mark.parametrize("node, deciding", [
    (helper.make_node("GridSample", ["x", "grid"], ["y"], mode="nearest"), ["grid"]),
    (helper.make_node("GridSample", ["x", "grid"], ["y"], mode="linear"), []),
    (helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT64), ["x"]),
    (helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT16), []),
    (helper.make_node("Less", ["a", "b"], ["y"]), ["a", "b"]),
    (helper.make_node("Round", ["x"], ["y"]), ["x"]),
    (helper.make_node("Sqrt", ["x"], ["y"]), []),
])
def test_only_discontinuous_ops_have_inputs_that_decide_a_tie(node, deciding):
    assert deciding_inputs(node) == deciding


class RoundTenths(Pattern):
    """Round(x * 10) / 10 -> Floor(x * 10 + 0.5) / 10: equal but at the ties (x * 10 = k + 0.5),
    where Round goes to even and the rewrite up."""

    name = "round-tenths"

    @staticmethod
    def template(op, x):
        return op.Div(op.Round(op.Mul(x, 10.0)), 10.0)

    @staticmethod
    def replacement(op, x):
        return op.Div(op.Floor(op.Add(op.Mul(x, 10.0), 0.5)), 10.0)


class FloorTenths(RoundTenths):
    """Wrong: Floor(x * 10) / 10 truncates."""

    name = "floor-tenths"

    @staticmethod
    def replacement(op, x):
        return op.Div(op.Floor(op.Mul(x, 10.0)), 10.0)


def _round_model():
    inits = [helper.make_tensor("ten", TensorProto.FLOAT, [], [10.0])]
    nodes = [helper.make_node("Mul", ["x", "ten"], ["scaled"], name="mul"),
             helper.make_node("Round", ["scaled"], ["rounded"], name="round"),
             helper.make_node("Div", ["rounded", "ten"], ["y"], name="div")]
    graph = helper.make_graph(nodes, "round", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 10
    return model


def _validate(pattern, x):
    plugins = surgeon.PluginSet.of([pattern])
    fused = surgeon.fuse(_round_model(), plugins=plugins)
    assert fused.report.rewrites
    return surgeon.validate(_round_model(), fused.model, {"x": x}, plugins=plugins)


TIES = np.float32([0.25, 1.25, -0.25, 2.25] * 8)  # x * 10 = 2.5, 12.5, -2.5, 22.5: Round goes to even
PLAIN = np.random.default_rng(0).uniform(-3, 3, 32).astype(np.float32)


def test_a_rounding_at_its_ties_is_a_tie():
    report = _validate(RoundTenths, np.concatenate([TIES, PLAIN]))
    assert report.passed, report.summary()
    c = report.rewrites[0].outputs[0]
    assert c.max_abs == pytest.approx(0.1, rel=1e-6) and c.explained == 24 and c.jumps  # (-2.5 goes to -2 both ways)
    assert "a discontinuous op of the original flips there" in report.rounding_notes()[0]


def test_a_wrong_rounding_fails_where_no_op_flips_though_its_ties_are_explained():
    report = _validate(FloorTenths, np.concatenate([TIES, PLAIN]))
    c = report.rewrites[0].outputs[0]
    scaled = PLAIN * np.float32(10)
    truncated = int(np.sum(np.round(scaled) != np.floor(scaled)))  # off by a tenth, Round far from a tie
    assert not c.passed and truncated > 10 and c.mismatched == truncated
