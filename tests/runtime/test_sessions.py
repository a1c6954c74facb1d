"""Stages and session reuse: one onnxruntime session per stage, built once, kept across calls."""

import numpy as np
import pytest

import surgeon
from surgeon.runtime import clear_cache, get_runner, sessions_created
from surgeon.validate.check import validate

from ..builders import relu_scale_chain_model, relu_scale_fanout_model, stn_pair
from .conftest import PLUGINS


def x23():
    return {"x": np.arange(-3, 3, dtype=np.float32).reshape(2, 3)}


@pytest.mark.parametrize("k", [1, 3, 5])
def test_a_chain_of_k_custom_nodes_builds_k_plus_1_sessions_once(k):
    runner = get_runner(relu_scale_chain_model(k), plugins=PLUGINS)
    y = runner.run(x23())["y"]
    factor = np.prod([i + 2.0 for i in range(k)])
    np.testing.assert_allclose(y, np.maximum(x23()["x"], 0) * factor)
    assert len(runner.plan().ort_stages) == k + 1
    assert runner.sessions_created == k + 1
    before = sessions_created()
    for _ in range(3):
        runner.run(x23())
        surgeon.run(relu_scale_chain_model(k), x23(), plugins=PLUGINS)  # same model, new proto: the cached runner is found
    assert sessions_created() == before


def test_independent_custom_nodes_share_their_stages():
    runner = get_runner(relu_scale_fanout_model(4), plugins=PLUGINS)
    y = runner.run(x23())["y"]
    np.testing.assert_allclose(y, -np.maximum(x23()["x"], 0) * (2 + 3 + 4 + 5))
    assert len(runner.plan().ort_stages) == 2 and runner.sessions_created == 2
    kinds = [line.split(": ")[-1] for line in runner.plan().describe()]
    assert kinds == ["onnxruntime"] + ["reference kernel"] * 4 + ["onnxruntime"]


def test_a_model_without_custom_nodes_is_one_session():
    orig, _ = stn_pair()
    runner = get_runner(orig, plugins=PLUGINS)
    runner.run({"x": np.zeros((1, 3, 32, 32), np.float32)})
    assert runner.sessions_created == 1


def test_only_what_the_outputs_need_is_planned():
    runner = get_runner(relu_scale_chain_model(3), plugins=PLUGINS)
    plan = runner.plan(["r1"])  # before the second Scale
    assert len(plan.steps) == 3  # stage (relu0), scale0, stage (relu1)
    np.testing.assert_allclose(runner.run(x23(), ["r1"])["r1"], np.maximum(x23()["x"], 0) * 2)


def test_validating_twice_builds_no_new_session():
    clear_cache()  # runners other tests left for these models would hold their sessions too
    orig, rew = stn_pair()
    first = validate(orig, rew, plugins=PLUGINS)
    assert first.passed
    # both run as written: the rewritten model in 2 stages around its custom node; the original
    # once, and once more when the rounding probe needs the values of the rewrite's part
    counts = (get_runner(orig, plugins=PLUGINS, optimize=False).sessions_created,
              get_runner(rew, plugins=PLUGINS, optimize=False).sessions_created)
    assert counts[0] in (1, 2) and counts[1] == 2
    second = validate(orig, rew, plugins=PLUGINS)
    assert second.passed and second.to_dict() == {**first.to_dict(), "timings": second.timings}
    assert (get_runner(orig, plugins=PLUGINS, optimize=False).sessions_created,
            get_runner(rew, plugins=PLUGINS, optimize=False).sessions_created) == counts


def test_intermediate_values_are_freed_after_their_last_use():
    runner = get_runner(relu_scale_chain_model(3), plugins=PLUGINS)
    plan = runner.plan()
    dropped = [name for names in plan.drops for name in names]
    assert "y" not in dropped and {"r0", "s0", "s1"} <= set(dropped)
