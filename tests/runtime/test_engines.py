"""What runs the custom ops: the plugins' onnxruntime op libraries (a user's own session), or
their reference kernels between onnxruntime stages; and saying which."""

import numpy as np
import onnxruntime as ort
import pytest
from click.testing import CliRunner

import surgeon
from surgeon import CustomOp, PluginSet
from surgeon.cli import cli
from surgeon.runtime import get_runner

from ..builders import stn_pair, warp_pair
from .conftest import PLUGINS


def test_auto_runs_the_custom_ops_in_onnxruntime_with_the_plugins_library():
    orig, rew = warp_pair(n=2, mode="bicubic", padding_mode="reflection")
    installed = PluginSet.installed()
    on_library = get_runner(rew, installed, engine="auto")
    assert on_library.engine.describe() == "onnxruntime + op library for custom.ops::FusedGridSample"
    assert on_library.plan().ort_stages and len(on_library.plan().steps) == 1  # one session, no Python step
    on_kernels = get_runner(rew, installed, engine="reference")
    assert on_kernels.engine.describe() == "onnxruntime + reference kernels for custom.ops::FusedGridSample"
    x = {"x": np.random.default_rng(1).uniform(-1, 1, (2, 3, 32, 32)).astype(np.float32),
         "theta": np.array([[[0.9, -0.5, 0.2], [0.4, 1.2, -0.1]]] * 2, np.float32)}
    np.testing.assert_array_equal(on_library.run(x)["y"], on_kernels.run(x)["y"])  # one kernel source
    report = surgeon.validate(orig, rew, x, plugins=installed)
    assert report.passed and report.engine == on_library.engine.describe()
    assert "engine: onnxruntime + op library" in report.summary()


def test_ort_insists_and_auto_falls_back_with_the_reason():
    _, rew = warp_pair()
    with pytest.raises(surgeon.SurgeonError, match="engine 'ort': no plugin brings an onnxruntime op library "
                                                   "for custom.ops::FusedGridSample"):
        get_runner(rew, PLUGINS, engine="ort")

    def unavailable(device):
        raise RuntimeError("no headers here\nsecond line")

    fused = PLUGINS.op("custom.ops", "FusedGridSample")
    broken = PLUGINS.with_ops(CustomOp("custom.ops", "FusedGridSample", kernel=fused.kernel, ort_library=unavailable))
    runner = get_runner(rew, broken, engine="auto")
    assert runner.engine.describe() == "onnxruntime + reference kernels for custom.ops::FusedGridSample"
    assert runner.engine.notes == ["custom.ops::FusedGridSample ran on its reference kernel: the op library is "
                                   "unavailable (no headers here)"]
    with pytest.raises(surgeon.SurgeonError, match="engine 'ort': no onnxruntime op library for "
                                                   "custom.ops::FusedGridSample: no headers here$"):
        get_runner(rew, broken, engine="ort")


def test_ort_lib_prints_a_library_a_plain_session_loads(tmp_path):
    result = CliRunner().invoke(cli, ["ort-lib"])
    assert result.exit_code == 0, result.output
    [path] = result.stdout.split()
    _, rew = stn_pair()
    options = ort.SessionOptions()
    options.register_custom_ops_library(path)
    session = ort.InferenceSession(rew.SerializeToString(), options, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).random((1, 3, 32, 32), np.float32)
    [out] = session.run(None, {"x": x})
    np.testing.assert_allclose(out, surgeon.run(rew, {"x": x}, plugins=PLUGINS)["out"], atol=1e-5)


def test_run_says_which_engine_ran(tmp_path):
    import onnx

    _, rew = warp_pair()
    onnx.save(rew, tmp_path / "rew.onnx")
    for engine, said in (("auto", "op library"), ("reference", "reference kernels")):
        result = CliRunner().invoke(cli, ["run", str(tmp_path / "rew.onnx"), "--engine", engine])
        assert result.exit_code == 0, result.output
        assert f"note: engine: onnxruntime + {said} for custom.ops::FusedGridSample" in result.stderr
