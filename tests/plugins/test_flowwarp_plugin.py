"""The example third-party plugin (samples/plugin-example), installed by pip: listed, fusing
both torch exports of a flow warp and the other spellings, its kernel matching onnxruntime on
the original model, and `surgeon validate` passing on the result."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import pytest
from click.testing import CliRunner

import surgeon
from surgeon import PluginSet
from surgeon.cli import cli

from .running import (PLUGIN_MODELS, SAMPLE_MODELS, attributes, custom_nodes, feeds_for, plugin_manifest, run_original,
                      run_with_kernels)

TORCH_EXPORTS = ["flow_warp_ts_opset17.onnx", "flow_warp_dynamo_opset18.onnx"]
SHAPES = {"x": [2, 3, 16, 12], "flow": [2, 2, 16, 12]}
ALT_SHAPES = {"x": [3, 3, 16, 12], "flow": [3, 2, 16, 12]}
MANIFEST = plugin_manifest()
FUSED = [f for f, e in MANIFEST.items() if e["rewrites"]]
REFUSED = [f for f, e in MANIFEST.items() if not e["rewrites"]]


@pytest.fixture(scope="module")
def kernels(plugin_site):
    from surgeon_flowwarp import FlowWarp

    return FlowWarp()


def _sample(name):
    path = SAMPLE_MODELS / name
    assert path.exists(), f"{path} is missing (samples/export_samples.py writes it)"
    return path


def _flow_warp():
    return PluginSet.installed(only=["flow-warp"])


def _fuse(path, **kw):
    return surgeon.fuse(str(path), plugins=_flow_warp(), **kw)


def _assert_numbers(path, fused, shape_sets, kernels, atol=1e-5):
    for shapes in shape_sets:
        feeds = feeds_for(shapes)
        expected = run_original(path, feeds)
        got = run_with_kernels(fused, feeds, kernels)
        for e, g in zip(expected, got):
            assert e.shape == g.shape
            np.testing.assert_allclose(g, e, atol=atol, rtol=0, err_msg=f"{path.name} at {shapes}")


# -- installed and listed ---------------------------------------------------------------------------


def test_listed_by_surgeon_patterns(plugin_site):
    result = CliRunner().invoke(cli, ["patterns"])
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith("flow-warp"))
    assert row.split()[:4] == ["flow-warp", "surgeon-flowwarp", "0.1.0", "yes"]
    assert "affine" in result.output  # the built-ins come through the same group


def test_listed_by_the_installed_command_in_a_fresh_process(plugin_env):
    result = subprocess.run([sys.executable, "-m", "surgeon", "patterns", "--skip", "flow-warp"],
                            capture_output=True, text=True, env=plugin_env, timeout=120)
    assert result.returncode == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("flow-warp"))
    assert row.split()[:4] == ["flow-warp", "surgeon-flowwarp", "0.1.0", "no"]


# -- the two torch exports (the template's spelling) -------------------------------------------------


@pytest.mark.parametrize("name", TORCH_EXPORTS)
def test_fuses_both_torch_exports(name, kernels):
    path = _sample(name)
    result = _fuse(path)
    model = result.model
    assert [n.op_type for n in model.graph.node] == ["FlowWarp"]
    [node] = custom_nodes(model)
    assert node.domain == "custom.ops" and list(node.input) == ["x", "flow"]
    assert list(node.output) == [o.name for o in model.graph.output]  # output names kept
    assert attributes(node) == {"align_corners": 0, "mode": "bilinear", "padding_mode": "zeros",
                                "flow_units": "normalized"}
    assert ("custom.ops", 1) in [(o.domain, o.version) for o in model.opset_import]
    assert {(p.key, p.value) for p in node.metadata_props} >= {("surgeon.pattern", "flow-warp")}
    dims = [d.dim_param or d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    assert dims == ["N", 3, 16, 12]
    assert [i.name for i in model.graph.initializer] == []  # the base grid went too
    assert result.report.rewrites[0].replaced == ["Transpose", "Add", "GridSample"]
    onnx.checker.check_model(model)
    _assert_numbers(path, model, [SHAPES, ALT_SHAPES], kernels)


@pytest.mark.parametrize("name", TORCH_EXPORTS)
def test_fused_model_is_a_fixpoint(name, plugin_site):
    once = _fuse(_sample(name)).model
    again = surgeon.fuse(once, plugins=_flow_warp())
    assert again.report.rewrites == [] and again.report.refusals == []


# -- other spellings (the match() hook that evaluates the grid) ------------------------------------


@pytest.mark.parametrize("name", FUSED)
def test_fuses_other_spellings(name, kernels):
    entry = MANIFEST[name]
    path = PLUGIN_MODELS / name
    result = _fuse(path)
    nodes = custom_nodes(result.model)
    assert len(nodes) == entry["rewrites"] == len(result.report.rewrites)
    assert "GridSample" not in [n.op_type for n in result.model.graph.node]
    expect = {"mode": "bilinear", "padding_mode": "zeros", **entry["expect"]}
    for node in nodes:
        assert node.op_type == "FlowWarp"
        assert attributes(node) == expect
    onnx.checker.check_model(result.model)
    _assert_numbers(path, result.model, [entry["inputs"], entry["alt_inputs"]], kernels)


@pytest.mark.parametrize("name", REFUSED)
def test_near_misses_are_refused_with_a_reason(name, plugin_site):
    result = _fuse(PLUGIN_MODELS / name)
    assert result.report.rewrites == []
    [refusal] = result.report.refusals
    assert refusal.pattern == "flow-warp" and MANIFEST[name]["expect"]["refusal"] in refusal.reason


@pytest.mark.parametrize("name", ["affine_ts_opset20_2d_static.onnx", "affine_dynamo_opset18_2d.onnx",
                                  "stn_ts_opset20_2d.onnx", "neg_random_grid.onnx"])
def test_leaves_other_grid_samplers_alone(name, plugin_site):
    result = _fuse(_sample(name))
    assert result.report.rewrites == [] and result.report.refusals == []


# -- validate --------------------------------------------------------------------------------------


def test_surgeon_fuse_and_validate_in_a_fresh_process(plugin_env, tmp_path):
    """What a user types: the installed plugin is found by both commands, kernel included."""
    path = _sample("flow_warp_dynamo_opset18.onnx")
    out = tmp_path / "fused.onnx"
    fused = subprocess.run([sys.executable, "-m", "surgeon", "fuse", str(path), str(out)],
                           capture_output=True, text=True, env=plugin_env, timeout=120)
    assert fused.returncode == 0 and "flow-warp: 1" in fused.stdout, fused.stdout + fused.stderr
    checked = subprocess.run([sys.executable, "-m", "surgeon", "validate", str(path), str(out)],
                             capture_output=True, text=True, env=plugin_env, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("name", TORCH_EXPORTS + FUSED)
def test_validate_library_uses_the_plugin_kernel(name, plugin_site):
    path = PLUGIN_MODELS / name if name in MANIFEST else _sample(name)
    shapes = MANIFEST[name]["inputs"] if name in MANIFEST else SHAPES
    plugins = _flow_warp()
    fused = surgeon.fuse(str(path), plugins=plugins).model
    report = surgeon.validate(str(path), fused, feeds=feeds_for(shapes), atol=1e-5, rtol=0, plugins=plugins)
    assert report.passed, report.summary()
    assert len(report.rewrites) == (MANIFEST[name]["rewrites"] if name in MANIFEST else 1)


# -- the kernel itself ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_kernel_matches_torch(mode, padding_mode, align_corners, plugin_site):
    import torch
    from surgeon_flowwarp.kernel import base_grid, flow_scale, flow_warp

    rng = np.random.default_rng(3)
    x = rng.random((2, 3, 7, 9)).astype(np.float32)
    flow = (rng.standard_normal((2, 2, 5, 6)) * 2).astype(np.float32)
    for units in ("normalized", "pixels"):
        scale = np.array(flow_scale(units, (7, 9), bool(align_corners)), np.float32)
        grid = base_grid(5, 6, bool(align_corners))[None] + np.moveaxis(flow, 1, -1) * scale
        expected = torch.nn.functional.grid_sample(torch.from_numpy(x), torch.from_numpy(grid.astype(np.float32)),
                                                   mode=mode, padding_mode=padding_mode,
                                                   align_corners=bool(align_corners)).numpy()
        got = flow_warp(x, flow, align_corners, mode, padding_mode, units)
        assert got.dtype == np.float32
        if mode == "nearest":  # a coordinate on a rounding boundary may go either way
            assert np.mean(np.abs(got - expected) > 1e-5) < 0.02
        else:
            np.testing.assert_allclose(got, expected, atol=1e-5, rtol=0)


# -- look-alikes that are not flow warps ----------------------------------------------------------------


def _lookalike(grid_nodes, ac=0):
    """x, flow -> grid_nodes (ending in value 'grid') -> GridSample; base is the identity grid."""
    from onnx import helper, numpy_helper

    from ..builders import onnx_model

    h, w = 6, 5
    xs = (2 * np.arange(w) + 1) / w - 1 if not ac else np.linspace(-1, 1, w)
    ys = (2 * np.arange(h) + 1) / h - 1 if not ac else np.linspace(-1, 1, h)
    base = np.stack(np.meshgrid(xs, ys), -1)[None].astype(np.float32)
    inits = [numpy_helper.from_array(base, "base"), numpy_helper.from_array(np.array(-0.5, np.float32), "lo"),
             numpy_helper.from_array(np.array([1, 0], np.int64), "swap")]
    nodes = grid_nodes + [helper.make_node("GridSample", ["x", "grid"], ["y"], align_corners=ac)]
    return onnx_model(nodes, [("x", [1, 3, 7, 8]), ("flow", [1, 2, h, w])], [("y", None)], inits, opset=17)


def test_the_plain_spelling_built_by_hand_matches(plugin_site):
    from onnx import helper

    model = _lookalike([helper.make_node("Transpose", ["flow"], ["t"], perm=[0, 2, 3, 1]),
                        helper.make_node("Add", ["t", "base"], ["grid"])])
    assert len(surgeon.fuse(model, plugins=_flow_warp()).report.rewrites) == 1


@pytest.mark.parametrize("case", ["clamped", "swapped channels", "not the identity base"])
def test_look_alikes_are_left_alone(case, plugin_site):
    from onnx import helper

    t = helper.make_node("Transpose", ["flow"], ["t"], perm=[0, 2, 3, 1])
    if case == "clamped":  # Max is on the walk, but the grid is not affine in the flow
        nodes = [t, helper.make_node("Max", ["t", "lo"], ["m"]), helper.make_node("Add", ["base", "m"], ["grid"])]
    elif case == "swapped channels":  # grid[..., [1, 0]]: the y displacement moves along x
        nodes = [t, helper.make_node("Add", ["base", "t"], ["g"]), helper.make_node("Gather", ["g", "swap"], ["grid"], axis=3)]
    else:  # base shifted by half a cell
        nodes = [t, helper.make_node("Add", ["t", "lo"], ["t2"]), helper.make_node("Add", ["base", "t2"], ["grid"])]
    result = surgeon.fuse(_lookalike(nodes), plugins=_flow_warp())
    assert result.report.rewrites == [], case


def test_a_flow_computed_before_the_permute_is_the_cut(plugin_site):
    from onnx import helper

    # flow[:, [1, 0]] then the usual warp: the swapped tensor is the flow FlowWarp reads
    nodes = [helper.make_node("Gather", ["flow", "swap"], ["f"], axis=1),
             helper.make_node("Transpose", ["f"], ["t"], perm=[0, 2, 3, 1]), helper.make_node("Add", ["base", "t"], ["grid"])]
    result = surgeon.fuse(_lookalike(nodes), plugins=_flow_warp())
    assert len(result.report.rewrites) == 1
    warp = [n for n in result.model.graph.node if n.op_type == "FlowWarp"][0]
    assert list(warp.input) == ["x", "f"]
    assert [n.op_type for n in result.model.graph.node] == ["Gather", "FlowWarp"]
