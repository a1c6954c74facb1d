"""surgeon.recognise's symbolic pipeline on graphs with no grid in them: the cut walk
(``cut_back``), every cut under every mode (``Cuts``, ``strategies``) and the exact fits
(``fit_map``, ``map_from_probes``, ``collapsed``), each beside the case where it must say no."""

import numpy as np
import pytest

import surgeon
from surgeon import Pattern, Refusal
from surgeon.recognise import AffineMap, Cuts, Region, Words, collapsed, cut_back, fit_map, map_from_probes, strategies

from ..builders import GraphBuilder

WORDS = Words("output", "pair-shaped")


def _pairs(ctx, value) -> bool:
    """The candidates of these tests: float tensors shaped [N, 2]."""
    dims = ctx.shape(value)
    return dims is not None and len(dims) == 2 and dims[1] == 2


def _ask(model, ask):
    """``ask(ctx)`` from a match context, as a pattern gets one (anchored on the Identity ``t``)."""
    found = []

    class Ask(Pattern):
        name = "ask-pipeline"
        anchor_ops = ("Identity",)

        def match(self, ctx, node):
            if node.outputs[0] == "t":
                found.append(ask(ctx))
            return None

        def rewrite(self, ctx, match):
            raise AssertionError("never matches")

    surgeon.fuse(model, plugins=surgeon.PluginSet.of([Ask]))
    return found[0]


def _cut(model, past=frozenset()):
    return _ask(model, lambda ctx: cut_back(ctx, "out", "x", _pairs, past=past, words=WORDS))


def _model(build):
    """``out = build(g, x, p)`` with x a run-time [N, 3] image and p a run-time [N, 2] pair."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3])
    p = g.input("p", ["N", 2])
    g.op("Identity", build(g, x, p), out="out")
    g.op("Identity", "out", out="t")
    g.output("t")
    return g.model(18)


def _up(g, v):
    """[N, 2] -> [N, 2, 1]: computing on it makes no more pair-shaped values."""
    return g.op("Unsqueeze", v, g.ints([2]))


def test_the_cut_is_the_one_candidate_and_shapes_are_leaves():
    region, through = _cut(_model(lambda g, x, p: g.op("Mul", _up(g, p), g.op("Cast", g.op("Shape", x), to=1))))
    assert isinstance(region, Region) and region.variable == "p" and through == []
    assert [n.op_type for n in region.shapes] == ["Shape"]  # x's dims, fed by a probe


def test_reading_the_anchors_values_is_refused():
    column = lambda g, x: _up(g, g.op("Slice", x, g.ints([0]), g.ints([1]), g.ints([1])))  # noqa: E731
    region, _ = _cut(_model(lambda g, x, p: g.op("Add", _up(g, p), column(g, x))))
    assert isinstance(region, Refusal) and "run-time data other than one pair-shaped tensor ('x')" in region.reason


def test_two_candidates_are_refused_with_the_ones_to_walk_through():
    region, through = _cut(_model(lambda g, x, p: g.op("Add", _up(g, p), _up(g, g.op("Neg", p)))))
    assert isinstance(region, Refusal) and "several pair-shaped tensors" in region.reason
    assert len(through) == 1 and through[0] != "p"  # a graph input is no value to walk past


def test_walking_past_a_candidate_takes_its_computation():
    model = _model(lambda g, x, p: g.op("Add", _up(g, p), _up(g, g.op("Neg", p))))
    region, _ = _cut(model, past=frozenset(_cut(model)[1]))
    assert isinstance(region, Region) and region.variable == "p"
    assert sorted(n.op_type for n in region.nodes).count("Neg") == 1


def test_a_widened_candidate_is_cut_at_the_narrower_one():
    model = _model(lambda g, x, p: g.op("Mul", _up(g, g.op("Cast", p, to=11)), g.const(np.float64(2.0))))
    region, _ = _cut(model)
    assert isinstance(region, Region) and region.variable == "p"
    assert [n.op_type for n in region.nodes].count("Cast") == 1  # the widening Cast is the region's


def test_a_narrowing_cast_is_no_widening():
    model = _model(lambda g, x, p: g.op("Mul", _up(g, g.op("Cast", p, to=10)), g.const(np.float16(2.0))))
    region, _ = _cut(model)
    assert isinstance(region, Region) and region.variable != "p"  # the half value is the cut, not p


def _cuts(model, modes, unfed, one):
    return _ask(model, lambda ctx: strategies(Cuts(ctx, lambda past: cut_back(ctx, "out", "x", _pairs, past=past,
                                                                          words=WORDS)), modes, unfed, one))


def _negated(g, x, p):
    return _up(g, g.op("Neg", p))


def test_strategies_try_every_mode_on_every_cut_and_say_the_nearest_refusal():
    tried = []

    def one(cut, mode):
        tried.append((cut.variable, mode))
        return Refusal(f"{mode} at {cut.variable}")

    found = _cuts(_model(_negated), ("first", "second"), (), one)
    assert [m for _, m in tried] == ["first", "first", "second", "second"]  # Neg's output, then p, per mode
    assert tried[0][0] != "p" and tried[1][0] == "p"
    assert isinstance(found, Refusal) and found.reason == f"first at {tried[0][0]}"


def test_an_unfed_mode_sees_only_cuts_without_a_run_time_variable():
    seen = []
    found = _cuts(_model(_negated), ("fed", "unfed"), ("unfed",),
                  lambda cut, mode: seen.append((mode, cut.variable)) or Refusal("no"))
    assert isinstance(found, Refusal) and [m for m, _ in seen] == ["fed", "fed"]


def test_the_first_answer_wins():
    found = _cuts(_model(_negated), ("a", "b"), (), lambda cut, mode: (cut.variable, mode))
    assert found[1] == "a" and found[0] != "p"


@pytest.mark.parametrize("noise, found", [(0.0, True), (1e-3, False)])
def test_a_map_explains_every_sample_or_there_is_none(noise, found):
    rng = np.random.default_rng(0)
    sources = rng.normal(size=(12, 3))
    weight, bias = rng.normal(size=(3, 2)), np.array([0.5, -2.0])
    targets = sources @ weight + bias
    targets[5, 1] += noise
    fitted = fit_map(sources, targets, (1e-7, 1e-7))
    assert (fitted is not None) == found
    if found:
        assert np.allclose(fitted.weight, weight) and np.allclose(fitted.bias, bias)
    assert fit_map(sources[:4], targets[:4], (1e-7, 1e-7)) is None  # too few samples to be a check


def test_a_map_from_probe_runs_takes_a_broadcast_run_only_when_its_items_agree():
    truth = AffineMap(np.array([[2.0], [0.0]]), np.array([1.0]))
    fit = lambda out: out  # noqa: E731  the outputs are the parameters themselves here
    runs = [(truth.apply(v), v) for v in np.random.default_rng(1).normal(size=(6, 1, 2))]
    found = map_from_probes(runs, fit, (1e-9, 1e-9))
    assert found is not None and np.allclose(found.weight[0], 2.0) and np.allclose(found.bias, 1.0)
    value = np.array([[1.0, 5.0]])
    agree = np.repeat(truth.apply(value), 3, axis=0)  # one fed value, three items out: all the same
    assert map_from_probes(runs + [(agree, value)], fit, (1e-9, 1e-9)) is not None
    differ = agree + np.array([[0.0], [0.5], [0.0]])
    assert map_from_probes(runs + [(differ, value)], fit, (1e-9, 1e-9)) is None


def test_items_collapse_to_one_only_when_all_are_the_same():
    same = np.ones((3, 2, 3))
    assert collapsed(same, (1e-9, 1e-9)).shape[0] == 1
    assert collapsed(same + np.arange(3.0)[:, None, None] * 1e-3, (1e-9, 1e-9)).shape[0] == 3
