"""surgeon.validate: correct rewrites pass, every tampering fails and is named."""

import json

import numpy as np
import pytest
from onnx import helper, numpy_helper

from surgeon.errors import SurgeonError
from surgeon.io.load import LoadedModel
from surgeon import CustomOp
from surgeon.validate.compare import compare
from surgeon.validate.check import validate

from ..builders import (TAMPERED_WARPS, WARP_THETA, fused_grid_sample_node, if_warp_model, stn_pair, swap_theta_rows,
                          value_info, warp_feeds, warp_model, warp_pair)
from .conftest import PLUGINS

def test_a_correct_rewrite_passes():
    orig, rew = warp_pair()
    report = validate(orig, rew, warp_feeds(), plugins=PLUGINS)
    assert report.passed, report.summary()
    (check,) = report.rewrites
    assert check.nodes == ["affine-grid/FusedGridSample"] and check.patterns == ["affine-grid"]
    assert [c.name for c in check.outputs] == ["y"] and check.outputs[0].max_abs < 1e-5
    assert [o.name for o in report.outputs] == ["y"]


@pytest.mark.parametrize("name", sorted(TAMPERED_WARPS))
def test_every_tampering_fails_and_names_the_rewrite(name):
    orig, _ = warp_pair()
    report = validate(orig, TAMPERED_WARPS[name](), warp_feeds(), plugins=PLUGINS)
    assert not report.passed
    (check,) = report.rewrites
    assert not check.passed
    failures = report.failures()
    assert failures[0].startswith("rewrite 'affine-grid/FusedGridSample' (custom.ops::FusedGridSample, "
                                  "pattern affine-grid)")
    if name == "output_size":
        assert "shape differs: original [1, 3, 32, 32], rewritten [1, 3, 16, 16]" in failures[0]
    else:
        assert check.outputs[0].required_atol > 0.05  # far beyond the default 1e-3
    assert not report.outputs[0].passed


def test_tampering_is_caught_with_random_inputs_too():
    orig, _ = warp_pair()
    for name in ("align_corners", "padding_mode", "theta_rows_swapped"):
        assert not validate(orig, TAMPERED_WARPS[name](), plugins=PLUGINS).passed, name


def test_stn_correct_passes_and_tampered_fails_on_random_inputs():
    orig, rew = stn_pair()
    assert validate(orig, rew, plugins=PLUGINS).passed
    for kwargs in ({"align_corners": 1}, {"padding_mode": "reflection"}, {"mode": "nearest"}):
        report = validate(orig, stn_pair(**kwargs)[1], plugins=PLUGINS)
        assert not report.passed and not report.rewrites[0].passed, kwargs


def test_the_default_tolerance_passes_a_correct_1024_warp_and_fails_a_wrong_one():
    orig, rew = warp_pair(h=1024, w=1024)
    report = validate(orig, rew, plugins=PLUGINS)  # random inputs: x and theta uniform in [0, 1)
    assert report.passed, report.summary()
    assert report.outputs[0].max_abs > 1e-5  # the two implementations do differ at this size
    _, wrong = warp_pair(h=1024, w=1024, align_corners=1)
    assert not validate(orig, wrong, plugins=PLUGINS).passed


def _homogeneous_pair(swap=False):
    """The original takes a [1,3,3] matrix and slices theta from it; the rewrite slices it anew
    with constants of its own (fresh names), so its region holds a Slice and the custom node."""
    def consts(prefix):
        return [numpy_helper.from_array(np.array(v, np.int64), f"{prefix}_{k}")
                for k, v in (("starts", [0]), ("ends", [2]), ("axes", [1]))]

    size = numpy_helper.from_array(np.array([1, 3, 32, 32], np.int64), "size")
    inputs = [value_info("x", [1, 3, 32, 32]), value_info("m", [1, 3, 3])]
    orig = warp_model([helper.make_node("Slice", ["m", "o_starts", "o_ends", "o_axes"], ["theta"], name="slice"),
                  helper.make_node("AffineGrid", ["theta", "size"], ["grid"], name="ag"),
                  helper.make_node("GridSample", ["x", "grid"], ["y"], name="gs", mode="linear")],
                 inputs, [value_info("y", None)], consts("o") + [size], custom=False)
    nodes = [helper.make_node("Slice", ["m", "r_starts", "r_ends", "r_axes"], ["theta_r"], name="rslice")]
    extra = []
    if swap:
        nodes.append(helper.make_node("Gather", ["theta_r", "perm"], ["theta_s"], name="swap", axis=1))
        extra.append(numpy_helper.from_array(np.array([1, 0], np.int64), "perm"))
    nodes.append(fused_grid_sample_node("x", "theta_s" if swap else "theta_r", "y", "fgs", (32, 32), pattern="homogeneous"))
    return orig, warp_model(nodes, inputs, [value_info("y", None)], consts("r") + extra)


def test_nodes_a_rewrite_adds_are_part_of_its_region():
    orig, rew = _homogeneous_pair()
    m = np.concatenate([WARP_THETA, [[[0, 0, 1]]]], axis=1).astype(np.float32)
    feeds = {"x": warp_feeds()["x"], "m": m}
    report = validate(orig, rew, feeds, plugins=PLUGINS)
    assert report.passed, report.summary()
    assert report.rewrites[0].patterns == ["homogeneous"]
    _, bad = _homogeneous_pair(swap=True)
    report = validate(orig, bad, feeds, plugins=PLUGINS)
    assert not report.passed and "rewrite 'fgs'" in report.failures()[0]


def test_a_custom_affine_grid_is_checked_on_its_grid():
    size = numpy_helper.from_array(np.array([1, 3, 32, 32], np.int64), "size")
    inputs = [value_info("x", [1, 3, 32, 32]), value_info("theta", [1, 2, 3])]
    gs = helper.make_node("GridSample", ["x", "grid"], ["y"], name="gs", mode="linear")
    orig = warp_model([helper.make_node("AffineGrid", ["theta", "size"], ["grid"], name="ag"), gs],
                 inputs, [value_info("y", None)], [size], custom=False)

    def rewritten(ac):
        node = helper.make_node("AffineGrid", ["theta"], ["grid"], name="ag_custom", domain="custom.ops",
                                align_corners=ac, output_size=[32, 32])
        node.metadata_props.add(key="surgeon.pattern", value="affine-grid")
        return warp_model([node, gs], inputs, [value_info("y", None)])

    good = validate(orig, rewritten(0), warp_feeds(), plugins=PLUGINS)
    assert good.passed and [c.name for c in good.rewrites[0].outputs] == ["grid"]
    bad = validate(orig, rewritten(1), warp_feeds(), plugins=PLUGINS)
    assert not bad.passed and bad.rewrites[0].ops == ["custom.ops::AffineGrid"]


def test_models_in_memory_are_not_reread_or_modified():
    orig, rew = warp_pair()
    before = rew.SerializeToString()
    report = validate(LoadedModel(orig), rew, warp_feeds(), plugins=PLUGINS)
    assert report.passed and rew.SerializeToString() == before


def test_report_summary_and_json():
    orig, _ = warp_pair()
    report = validate(orig, TAMPERED_WARPS["align_corners"](), warp_feeds(), plugins=PLUGINS)
    text = report.summary()
    assert text.startswith("validation FAILED") and len(text.splitlines()) < 25
    assert "FAIL rewrite 'affine-grid/FusedGridSample'" in text
    data = json.loads(report.to_json())
    assert data["passed"] is False and data["rewrites"][0]["passed"] is False
    assert data["outputs"][0]["name"] == "y" and data["failures"]


def test_input_problems_are_errors():
    orig, rew = warp_pair()
    with pytest.raises(SurgeonError, match="no value given for input"):
        validate(orig, rew, {"x": warp_feeds()["x"]}, plugins=PLUGINS)
    other = warp_pair()[1]
    other.graph.input[1].name = "theta2"
    other.graph.node[0].input[1] = "theta2"
    with pytest.raises(SurgeonError, match="different inputs; only the original has theta; "
                                           "only the rewritten has theta2"):
        validate(orig, other, plugins=PLUGINS)
    with pytest.raises(SurgeonError, match="max_mismatch"):
        validate(orig, rew, max_mismatch=2, plugins=PLUGINS)


def test_compare_statistics():
    a = np.array([1.0, 2.0, 0.0, 4.0], np.float32)
    b = np.array([1.0, 2.01, 0.0005, 4.0], np.float32)
    c = compare("v", a, b, atol=1e-3, rtol=1e-3)
    assert not c.passed and c.mismatched == 1 and c.worst_index == [1]
    assert c.max_abs == pytest.approx(0.01, rel=1e-3)
    assert c.required_atol == pytest.approx(0.01 - 2e-3, rel=1e-2)
    assert compare("v", a, b, atol=c.required_atol * 1.001, rtol=1e-3).passed
    assert c.max_rel == pytest.approx(0.005, rel=1e-2)  # the 0 in the original does not count
    assert compare("v", a, b, atol=1e-3, rtol=1e-3, max_mismatch=0.25).passed


def test_compare_nan_inf_shape_and_dtype():
    a = np.array([np.nan, np.inf, 1.0], np.float32)
    same = compare("v", a, a.copy())
    assert same.passed and same.nonfinite_original == 2 and same.nonfinite_rewritten == 2
    worse = compare("v", a, np.array([np.nan, 1.0, 1.0], np.float32))
    assert not worse.passed and "NaN/Inf differ" in worse.notes[0]
    assert "shape differs" in compare("v", a, a[:2]).message
    assert "dtype differs" in compare("v", a, a.astype(np.float64)).message
    assert compare("i", np.array([1, 2]), np.array([1, 2])).passed
    assert not compare("i", np.array([1, 2]), np.array([1, 3])).passed


def test_a_custom_node_inside_if_is_checked_with_its_if():
    feeds = {"cond": np.array(True), **warp_feeds(16, 16)}
    report = validate(if_warp_model(False), if_warp_model(True), feeds, plugins=PLUGINS)
    assert report.passed, report.summary()
    assert report.rewrites[0].nodes == ["warp"] and any("inside If" in n for n in report.notes)
    tampered = if_warp_model(True)
    then_branch = next(a.g for a in tampered.graph.node[0].attribute if a.name == "then_branch")
    for a in then_branch.node[0].attribute:
        if a.name == "align_corners":
            a.i = 1
    report = validate(if_warp_model(False), tampered, feeds, plugins=PLUGINS)
    assert not report.passed and "rewrite 'warp'" in report.failures()[0]


def test_a_kernel_that_fails_is_reported_against_its_rewrite():
    def broken(inputs, attrs, device="cpu"):
        raise RuntimeError("out of cheese")

    orig, rew = warp_pair()
    report = validate(orig, rew, warp_feeds(), plugins=PLUGINS.with_ops(CustomOp("custom.ops", "FusedGridSample",
                                                                                   kernel=broken)))
    assert not report.passed
    assert "failed: RuntimeError: out of cheese" in report.rewrites[0].error
    assert report.failures()[0].startswith("rewrite 'affine-grid/FusedGridSample'")
    assert "out of cheese" in report.error  # and end to end could not run either


def test_random_inputs_fit_dims_the_rewrite_fixed():
    orig, rew = warp_pair(n=2)
    for vi_ in orig.graph.input:  # batch dynamic in the original only (as after fuse --input-shape)
        vi_.type.tensor_type.shape.dim[0].dim_param = "N"
    report = validate(orig, rew, plugins=PLUGINS)
    assert report.passed, report.summary()
    assert [i["shape"][0] for i in report.inputs] == [2, 2]


def test_a_rewrite_declaring_its_tolerance_is_held_to_it_and_no_less():
    fused = PLUGINS.op("custom.ops", "FusedGridSample").kernel

    def off_by_5e3(inputs, attrs, device="cpu"):
        return [fused(inputs, attrs, device)[0] + np.float32(5e-3)]

    plugins = PLUGINS.with_ops(CustomOp("custom.ops", "FusedGridSample", kernel=off_by_5e3))
    orig, rew = warp_pair()
    assert not validate(orig, rew, warp_feeds(), plugins=plugins).passed  # the defaults: 1e-3
    entry = rew.graph.node[0].metadata_props.add()
    entry.key, entry.value = "surgeon.atol", "0.02"
    report = validate(orig, rew, warp_feeds(), plugins=plugins)
    assert report.passed and report.rewrites[0].outputs[0].atol == 0.02 and report.outputs[0].atol == 0.02
    assert "declare they are exact only to atol 0.02" in report.notes[-1]
    assert not validate(orig, rew, warp_feeds(), atol=1e-3, plugins=plugins).passed  # the user's word wins


def _with_dead_branch(m, custom):
    """A branch no output reads, dividing a shape by zero: never run, so never computed."""
    zeros = numpy_helper.from_array(np.zeros(4, np.int64), "zeros")
    m.graph.initializer.append(zeros)
    m.graph.node.extend([helper.make_node("Shape", ["x"], ["x_shape"], name="dead_shape"),
                         helper.make_node("Div", ["x_shape", "zeros"], ["dead_size"], name="dead_div")])
    if custom:
        m.graph.node.append(fused_grid_sample_node("x", "theta", "dead_y", "dead/FusedGridSample", None, size="dead_size"))
    else:
        m.graph.node.append(helper.make_node("AffineGrid", ["theta", "dead_size"], ["dead_grid"], name="dead_ag"))
    return m


def test_a_custom_node_no_output_reads_is_not_run():
    orig, rew = warp_pair()
    report = validate(_with_dead_branch(orig, False), _with_dead_branch(rew, True), warp_feeds(), plugins=PLUGINS)
    assert report.passed, report.summary()
    assert [c.nodes for c in report.rewrites] == [["affine-grid/FusedGridSample"]]
    assert "1 rewritten node(s) feed no output: never run, not checked" in report.notes


def _nearest_pair(h=24, w=24, **kwargs):
    return warp_pair(n=1, c=2, h=h, w=w, mode="nearest", **kwargs)


# A zoom out by 2 puts every sampling coordinate on a pixel boundary (x.5): which neighbour
# nearest sampling takes there is decided by the last bit of each implementation's coordinate.
TIE_THETA = np.array([[[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]]], np.float32)


def test_nearest_rounding_ties_pass_and_say_what_happened():
    orig, rew = _nearest_pair()
    feeds = {"x": np.random.default_rng(0).random((1, 2, 24, 24), dtype=np.float32), "theta": TIE_THETA}
    report = validate(orig, rew, feeds, plugins=PLUGINS)
    assert report.passed, report.summary()
    for c in (report.rewrites[0].outputs[0], report.outputs[0]):
        assert c.max_abs > 0.5 and c.explained > 10 and c.jumps and c.mismatched == 0
    notes = report.rounding_notes()
    assert len(notes) == 2 and notes[0].startswith("rewrite 'affine-grid/FusedGridSample'")
    assert "only where the original itself moves as far when its values move by a few ulps: rounding ties" in notes[0]
    assert "rounding ties" in report.summary()


def test_a_wrong_nearest_rewrite_still_fails_at_ties_and_on_random_draws():
    orig, _ = _nearest_pair()
    feeds = {"x": np.random.default_rng(0).random((1, 2, 24, 24), dtype=np.float32), "theta": TIE_THETA}
    for wrong in (_nearest_pair(padding_mode="border")[1], swap_theta_rows(_nearest_pair()[1])):
        report = validate(orig, wrong, feeds, plugins=PLUGINS)
        assert not report.passed and not report.rewrites[0].passed
    # (at this theta align_corners changes no coordinate: x.5 either way; random draws show it)
    assert not validate(orig, _nearest_pair(align_corners=1)[1], plugins=PLUGINS).passed
    fused = PLUGINS.op("custom.ops", "FusedGridSample").kernel

    def shifted(inputs, attrs, device="cpu"):  # a twentieth of a pixel off: wrong, but only near boundaries
        theta = inputs[1].copy()
        theta[:, :, 2] += 0.1 / inputs[0].shape[-1]
        return fused([inputs[0], theta, *inputs[2:]], attrs, device)

    def rotations(shape, dtype, rng):
        """rotations and scales"""
        angle, scale = rng.uniform(-np.pi, np.pi, shape[0]), rng.uniform(0.5, 2.0, shape[0])
        c, s = scale * np.cos(angle), scale * np.sin(angle)
        return np.stack([np.stack([c, -s, 0 * c], -1), np.stack([s, c, 0 * c], -1)], 1).astype(dtype)

    plugins = PLUGINS.with_ops(CustomOp("custom.ops", "FusedGridSample", kernel=shifted, draw_inputs={1: rotations}))
    orig, rew = _nearest_pair(h=64, w=64)
    report = validate(orig, rew, plugins=plugins)  # random images and thetas
    assert not report.passed
    c = report.rewrites[0].outputs[0]
    assert 0 < c.mismatched < c.total / 10  # a few percent of elements, and none of them explained away


def test_bilinear_rounding_at_large_coordinates_is_explained_not_failed():
    orig, rew = warp_pair(h=256, w=256)
    report = validate(orig, rew, plugins=PLUGINS)
    assert report.passed, report.summary()
    c = report.rewrites[0].outputs[0]
    assert c.max_abs > c.atol and c.explained and not c.jumps  # beyond exact float math; rounding drift
