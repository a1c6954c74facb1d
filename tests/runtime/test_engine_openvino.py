"""--engine openvino: the whole model in OpenVINO (CPU, float32), custom ops on the plugins'
extensions; run and validate through it, and its one-line errors."""

import numpy as np
import pytest
from click.testing import CliRunner

import surgeon
from surgeon import CustomOp, PluginSet
from surgeon.cli import cli
from surgeon.runtime import get_runner

from ..builders import TAMPERED_WARPS, stn_pair, warp_feeds, warp_pair

INSTALLED = PluginSet.installed()


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_runs_in_openvino_with_the_extension_and_says_so():
    _, rew = warp_pair(n=2, mode="bicubic", padding_mode="reflection")
    runner = get_runner(rew, INSTALLED, engine="openvino")
    assert runner.engine.describe() == "OpenVINO CPU (float32 precision) + extension for custom.ops::FusedGridSample"
    feeds = {"x": np.random.default_rng(1).uniform(-1, 1, (2, 3, 32, 32)).astype(np.float32),
             "theta": np.array([[[0.9, -0.5, 0.2], [0.4, 1.2, -0.1]]] * 2, np.float32)}
    on_ort = get_runner(rew, INSTALLED, engine="ort").run(feeds)["y"]
    np.testing.assert_array_equal(runner.run(feeds)["y"], on_ort)  # one kernel source


def test_validate_holds_a_rewrite_to_the_original_in_openvino():
    orig, rew = warp_pair()
    report = surgeon.validate(orig, rew, warp_feeds(), plugins=INSTALLED, engine="openvino")
    assert report.passed, report.summary()
    assert report.rewrites[0].outputs[0].max_abs < 1e-5 and "engine: OpenVINO CPU" in report.summary()


@pytest.mark.parametrize("name", ["padding_mode", "theta_rows_swapped"])
def test_validate_in_openvino_catches_a_wrong_rewrite(name):
    orig, _ = warp_pair()
    report = surgeon.validate(orig, TAMPERED_WARPS[name](), warp_feeds(), plugins=INSTALLED, engine="openvino")
    assert not report.passed and report.rewrites[0].nodes == ["affine-grid/FusedGridSample"]


def test_cli_run_and_validate(tmp_path):
    import onnx

    orig, rew = stn_pair()
    onnx.save(orig, tmp_path / "orig.onnx")
    onnx.save(rew, tmp_path / "rew.onnx")
    done = invoke("run", tmp_path / "rew.onnx", "--engine", "openvino")
    assert done.exit_code == 0, done.output
    assert "note: engine: OpenVINO CPU (float32 precision) + extension for custom.ops::FusedGridSample" in done.stderr
    done = invoke("validate", tmp_path / "orig.onnx", tmp_path / "rew.onnx", "--engine", "openvino")
    assert done.exit_code == 0 and "validation PASSED" in done.stdout, done.output


def one_line(result, text):
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) >= 1 and lines[-1].startswith("error: ") and "Traceback" not in result.output
    assert text in lines[-1], lines[-1]


def test_bad_feeds_are_one_line(tmp_path):
    import onnx

    _, rew = warp_pair(n=2)
    rew.graph.input[1].type.tensor_type.shape.dim[0].dim_param = "N"  # theta's batch left open
    onnx.save(rew, tmp_path / "rew.onnx")
    np.save(tmp_path / "x.npy", np.zeros((2, 3, 32, 32), np.float32))
    np.save(tmp_path / "theta.npy", np.zeros((1, 2, 3), np.float32))
    done = invoke("run", tmp_path / "rew.onnx", "--engine", "openvino", "--input", f"x={tmp_path / 'x.npy'}",
                  "--input", f"theta={tmp_path / 'theta.npy'}")
    one_line(done, "OpenVINO failed running")
    assert "custom.ops::FusedGridSample node 'affine-grid/FusedGridSample': theta has batch 1, X has 2" in done.stderr


def test_ops_without_an_extension_and_other_devices(tmp_path):
    one_line(invoke("run", "samples/models/aten_fallback_opset15.onnx", "--engine", "openvino"),
             "engine 'openvino': no plugin brings an OpenVINO extension for org.pytorch.aten::ATen")
    _, rew = warp_pair()
    with pytest.raises(surgeon.SurgeonError, match="engine 'openvino' runs on the CPU"):
        get_runner(rew, INSTALLED, device="cuda", engine="openvino")


def test_an_extension_that_cannot_be_had_is_one_line():
    def unavailable():
        raise RuntimeError("built against OpenVINO 1.0, this is 2.0\nsecond line")

    fused = INSTALLED.op("custom.ops", "FusedGridSample")
    broken = INSTALLED.with_ops(CustomOp("custom.ops", "FusedGridSample", kernel=fused.kernel,
                                         openvino_extension=unavailable))
    _, rew = warp_pair()
    with pytest.raises(surgeon.SurgeonError, match="engine 'openvino': no OpenVINO extension for "
                                                   "custom.ops::FusedGridSample: built against OpenVINO 1.0, this "
                                                   "is 2.0$"):
        get_runner(rew, broken, engine="openvino")


def test_function_bodies_are_not_used_the_extension_is(tmp_path):
    """OpenVINO does not use model-local functions: a --functions file runs on the extension."""
    fn = tmp_path / "stn.fn.onnx"
    surgeon.fuse("samples/models/stn_ts_opset20_2d.onnx", fn, functions=True)
    runner = get_runner(str(fn), INSTALLED, engine="openvino")
    assert runner.engine.served == {("custom.ops", "FusedGridSample"): runner.engine.libraries[0]}
    x = {"x": np.random.default_rng(0).random((1, 1, 28, 28), dtype=np.float32)}
    np.testing.assert_allclose(runner.run(x)["y"], get_runner(str(fn), INSTALLED, engine="ort").run(x)["y"],
                               atol=1e-5)


def test_external_data_from_the_file_and_in_memory(tmp_path):
    """A model keeping its weights in a .data file runs from its path (OpenVINO finds the file)
    and as a LoadedModel without one (its tensors read in first)."""
    from surgeon.io.load import LoadedModel, load_model

    out = tmp_path / "stn.onnx"
    surgeon.fuse("samples/models/stn_ts_opset20_2d.onnx", out, external_data=True)
    loaded = load_model(out)
    assert loaded.external and (tmp_path / "stn.onnx.data").exists()
    x = {"x": np.random.default_rng(0).random((1, 1, 28, 28), dtype=np.float32)}
    want = get_runner(str(out), INSTALLED, engine="ort").run(x)["y"]
    from_path = get_runner(str(out), INSTALLED, engine="openvino").run(x)["y"]
    in_memory = get_runner(LoadedModel(loaded.proto, None, dict(loaded.external)), INSTALLED,
                           engine="openvino").run(x)["y"]
    np.testing.assert_allclose(from_path, want, atol=1e-5)
    np.testing.assert_array_equal(in_memory, from_path)
