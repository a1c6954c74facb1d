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


class HalfDownTenths(Pattern):
    """Round half up written with a comparison (``Less`` gives a bool) -> round half down: equal
    but at the ties, where the comparison flips under its inputs' own ulps."""

    name = "half-down-tenths"

    @staticmethod
    def template(op, x):
        scaled = op.Mul(x, 10.0)
        whole = op.Floor(scaled)
        return op.Div(op.Where(op.Less(op.Sub(scaled, whole), 0.5), whole, op.Add(whole, 1.0)), 10.0)

    @staticmethod
    def replacement(op, x):
        return op.Div(op.Ceil(op.Sub(op.Mul(x, 10.0), 0.5)), 10.0)


def _half_up_model():
    inits = [helper.make_tensor(n, TensorProto.FLOAT, [], [v]) for n, v in (("ten", 10.0), ("half", 0.5), ("one", 1.0))]
    nodes = [helper.make_node("Mul", ["x", "ten"], ["s"]), helper.make_node("Floor", ["s"], ["f"]),
             helper.make_node("Sub", ["s", "f"], ["frac"]), helper.make_node("Less", ["frac", "half"], ["below"]),
             helper.make_node("Add", ["f", "one"], ["up"]), helper.make_node("Where", ["below", "f", "up"], ["r"]),
             helper.make_node("Div", ["r", "ten"], ["y"])]
    graph = helper.make_graph(nodes, "half_up", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 10
    return model


def test_a_comparison_pinned_as_bool_still_lets_the_probe_run():
    """onnxruntime's Where has no bool kernel: the probe pins a comparison's bool result in a type
    it has (a probe that cannot run judges the ties by tolerance alone, and fails them)."""
    plugins = surgeon.PluginSet.of([HalfDownTenths])
    fused = surgeon.fuse(_half_up_model(), plugins=plugins)
    assert [r.pattern for r in fused.report.rewrites] == ["half-down-tenths"]
    report = surgeon.validate(_half_up_model(), fused.model, {"x": np.concatenate([TIES, PLAIN])}, plugins=plugins)
    assert report.passed, report.summary()
    c = report.rewrites[0].outputs[0]
    assert c.max_abs == pytest.approx(0.1, rel=1e-5) and c.explained >= 24 and c.jumps
    assert not any("could not run" in n for n in report.notes)


def test_a_sampler_moves_by_its_image_extent_times_its_pixel_steps():
    """Bilinear sampling rounds its coordinate at ulps of the image's extent: an output near 0
    between a +1e4 and a -1e4 pixel moves by that times 2e4, not by ulps of 0 or of the mean."""
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode="linear", padding_mode="reflection")
    x = np.zeros((2, 1, 4, 6), np.float32)
    x[0, 0, :, 0::2], x[0, 0, :, 1::2] = 1e4, -1e4  # item 0: steps of 2e4 between neighbours
    x[1, 0] = np.linspace(0.0, 1.0, 24, dtype=np.float32).reshape(4, 6)  # item 1: a gentle ramp
    y = np.full((2, 1, 3, 5), 0.37, np.float32)
    found = steps([node], ["y"], {"x": x, "y": y, "grid": np.zeros((2, 3, 5, 2), np.float32)}, 8)["y"]
    assert found[0].min() >= 8 * EPS * 6 * 2 * 2e4 * 0.99  # extent 6, twice the largest step
    assert found[1].max() <= 8 * EPS * (0.37 + 6 * 2 * 6 / 23) * 1.01  # the ramp steps 6/23 from row to row
