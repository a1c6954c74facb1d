"""surgeon.run: models with custom nodes give what the original gives in onnxruntime."""

import numpy as np
import onnx
import pytest
from onnx import helper

import surgeon
from surgeon import CustomOp
from surgeon.errors import SurgeonError
from surgeon.io.load import load_model
from surgeon.runtime import random_inputs

from ..builders import if_warp_model, scale_node, scale_ops_model, stn_pair, value_info, warp_pair
from ..error_bounds import assert_warp_outputs
from .conftest import PLUGINS


def feeds(n=1, c=3, h=32, w=32, seed=0):
    rng = np.random.default_rng(seed)
    theta = np.array([[[0.9, 0.3, 0.4], [-0.2, 1.1, -0.3]]], np.float32).repeat(n, 0)
    return {"x": rng.random((n, c, h, w), dtype=np.float32), "theta": theta}


@pytest.mark.parametrize("ac,mode,pad", [
    (0, "bilinear", "zeros"), (1, "bilinear", "border"), (0, "nearest", "reflection"), (1, "bicubic", "zeros"),
])
def test_custom_model_matches_the_original_in_onnxruntime(ac, mode, pad):
    orig, rew = warp_pair(n=2, h=24, w=20, out=(16, 12), align_corners=ac, mode=mode, padding_mode=pad)
    f = feeds(n=2, h=24, w=20)
    want = surgeon.run(orig, f, plugins=PLUGINS)["y"]
    got = surgeon.run(rew, f, plugins=PLUGINS)["y"]
    assert got.shape == (2, 3, 16, 12)
    assert_warp_outputs(got, want, f, mode=mode, padding=pad, align_corners=bool(ac))


def test_stn_outputs_and_intermediates():
    orig, rew = stn_pair()
    x = {"x": np.random.default_rng(1).random((1, 3, 32, 32), dtype=np.float32)}
    a = surgeon.run(orig, x, outputs=["theta", "warped", "out"], plugins=PLUGINS)
    b = surgeon.run(rew, x, outputs=["theta", "warped", "out", "x", "w1"], plugins=PLUGINS)
    assert list(b) == ["theta", "warped", "out", "x", "w1"]
    for name in ("theta", "warped", "out"):
        np.testing.assert_allclose(b[name], a[name], atol=1e-5)
    assert b["theta"].shape == (1, 2, 3)
    np.testing.assert_array_equal(b["x"], x["x"])


def test_unknown_output_name_is_an_error():
    _, rew = stn_pair()
    with pytest.raises(SurgeonError, match="no value named 'nope'"):
        surgeon.run(rew, None, outputs=["nope"], plugins=PLUGINS)


def test_random_inputs_are_seeded_and_fill_dynamic_dims():
    m = scale_ops_model([scale_node("x", "y", "s")], [value_info("x", ["N", 3, "H", 5]), value_info("z", ["N", 2])], [value_info("y", None)])
    f1, notes = random_inputs(m, {"x": [4, 3, 7, 5]})
    f2, _ = random_inputs(m, {"x": [4, 3, 7, 5]})
    np.testing.assert_array_equal(f1["x"], f2["x"])
    assert f1["x"].shape == (4, 3, 7, 5) and f1["x"].dtype == np.float32
    assert f1["z"].shape == (4, 2)  # the named dim N follows the override given on x
    assert -8 <= f1["x"].min() < -1 < 0 < 1 < f1["x"].max() < 8  # signed, and several units
    assert np.mean(np.abs(f1["x"]) < 1) == pytest.approx(0.5, abs=0.1)  # half of them small
    _, notes = random_inputs(m)
    assert any("set to 1" in n for n in notes)


def test_inputs_over_the_memory_limit_are_refused_before_allocating():
    m = scale_ops_model([scale_node("x", "y", "s")], [value_info("x", ["N", 3, "H", "W"])], [value_info("y", None)])
    with pytest.raises(SurgeonError, match=r"12\.0 GiB, more than the 4\.0 GiB limit.*--max-memory"):
        surgeon.run(m, input_shapes={"x": [64, 3, 4096, 4096]}, plugins=PLUGINS)
    with pytest.raises(SurgeonError, match="limit"):
        surgeon.run(m, input_shapes={"x": [1, 3, 8, 8]}, max_bytes=100, plugins=PLUGINS)
    small = surgeon.run(m, input_shapes={"x": [1, 3, 8, 8]}, max_bytes=1000, plugins=PLUGINS)  # 768 bytes: under the limit
    assert small["y"].shape == (1, 3, 8, 8)


@pytest.mark.parametrize("bad,message", [
    ({"x": np.zeros((1, 3, 32, 32), np.float64)}, "expects float32, got float64"),
    ({"x": np.zeros((1, 3, 16, 32), np.float32)}, "dim 2 must be 32"),
    ({"x": np.zeros((3, 32, 32), np.float32)}, "expects rank 4"),
    ({}, "no value given for input"),
    ({"x": np.zeros((1, 3, 32, 32), np.float32), "y": np.zeros(1)}, "has no input 'y'"),
])
def test_feed_mismatches_are_clear_errors(bad, message):
    _, rew = stn_pair()
    with pytest.raises(SurgeonError, match=message):
        surgeon.run(rew, bad, plugins=PLUGINS)


def test_external_data_model_runs_from_its_path(tmp_path):
    orig, rew = stn_pair()
    path = tmp_path / "rew.onnx"
    onnx.save(rew, path, save_as_external_data=True, location="rew.data", size_threshold=0)
    loaded = load_model(path)
    assert loaded.external  # the weights really are outside
    x = {"x": np.random.default_rng(2).random((1, 3, 32, 32), dtype=np.float32)}
    np.testing.assert_allclose(surgeon.run(str(path), x, plugins=PLUGINS)["out"], surgeon.run(orig, x, plugins=PLUGINS)["out"], atol=1e-5)
    np.testing.assert_allclose(surgeon.run(loaded, x, plugins=PLUGINS)["out"], surgeon.run(orig, x, plugins=PLUGINS)["out"], atol=1e-5)


@pytest.mark.parametrize("cond", [True, False])
def test_if_with_custom_branches_runs_in_python(cond):
    f = feeds(h=16, w=16)
    f["cond"] = np.array(cond)
    want = surgeon.run(if_warp_model(False), f, plugins=PLUGINS)["y"]
    got = surgeon.run(if_warp_model(True), f, plugins=PLUGINS)["y"]
    assert_warp_outputs(got, want, f)


def test_custom_node_in_a_loop_body_is_refused():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), scale_node("v_in", "v_out", "inner")], "body",
        [value_info("i", [], onnx.TensorProto.INT64), value_info("cond_in", [], onnx.TensorProto.BOOL), value_info("v_in", None)],
        [value_info("cond_out", [], onnx.TensorProto.BOOL), value_info("v_out", None)])
    loop = helper.make_node("Loop", ["n", "", "x"], ["y"], name="loop", body=body)
    m = scale_ops_model([loop], [value_info("n", [], onnx.TensorProto.INT64), value_info("x", [2])], [value_info("y", None)])
    with pytest.raises(SurgeonError, match=r"'loop' \(Loop\).*custom node test.ops::Scale.*not supported"):
        surgeon.run(m, {"n": np.array(2), "x": np.ones(2, np.float32)}, plugins=PLUGINS)


def test_missing_kernel_names_op_domain_and_node():
    m = scale_ops_model([helper.make_node("Foo", ["x"], ["y"], name="n3", domain="custom.ops")],
                    [value_info("x", [2])], [value_info("y", None)])
    with pytest.raises(SurgeonError, match=r"no reference kernel for custom.ops::Foo \(node 'n3'\): install or "
                                           r"--plugin the plugin whose pattern writes it"):
        surgeon.run(m, plugins=PLUGINS)
    m.graph.node[0].metadata_props.add(key="surgeon.pattern", value="foo")
    with pytest.raises(SurgeonError, match=r"pattern 'foo' wrote it: install or --plugin the plugin that gives"):
        surgeon.run(m, plugins=PLUGINS)


def test_a_failing_kernel_is_named():
    def broken(inputs, attrs, device="cpu"):
        raise ValueError("bad\nsecond line")

    m = scale_ops_model([scale_node("x", "y", "s7")], [value_info("x", [2])], [value_info("y", None)])
    with pytest.raises(SurgeonError, match=r"^reference kernel for test.ops::Scale \(node 's7'\) failed: "
                                           r"ValueError: bad$"):
        surgeon.run(m, plugins=PLUGINS.with_ops(CustomOp("test.ops", "Scale", kernel=broken)))


def test_kernels_receive_decoded_attributes_and_the_device():
    seen = {}

    def spy(inputs, attrs, device="cpu"):
        seen.update(attrs=attrs, device=device, n=len(inputs))
        return [inputs[0]]

    node = helper.make_node("Spy", ["x", ""], ["y"], domain="test.ops", mode="bilinear", sizes=[2, 3], f=0.5)
    m = scale_ops_model([node], [value_info("x", [2])], [value_info("y", None)])
    surgeon.run(m, plugins=PLUGINS.with_ops(CustomOp("test.ops", "Spy", kernel=spy)))
    assert seen == {"attrs": {"mode": "bilinear", "sizes": [2, 3], "f": 0.5}, "device": "cpu", "n": 2}


def test_cuda_without_a_gpu_is_a_clear_error():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    _, rew = stn_pair()
    with pytest.raises(SurgeonError, match=r"device 'cuda' asked for, but no CUDA GPU is available"):
        surgeon.run(rew, device="cuda", plugins=PLUGINS)
    with pytest.raises(SurgeonError, match="unknown device 'tpu'"):
        surgeon.run(rew, device="tpu", plugins=PLUGINS)
