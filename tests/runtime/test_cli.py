"""surgeon run / surgeon validate: outputs, files, messages and exit codes."""

import json
import os

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import helper

from surgeon.cli import cli
from surgeon.runtime.outfiles import sanitise

from ..builders import TAMPERED_WARPS, scale_node, scale_ops_model, stn_pair, value_info, warp_feeds, warp_pair

PLUGIN = "tests.runtime.kernel_plugin:TorchKernels"


@pytest.fixture
def models(tmp_path):
    orig, rew = warp_pair()
    paths = {"orig": tmp_path / "orig.onnx", "rew": tmp_path / "rew.onnx", "bad": tmp_path / "bad.onnx"}
    onnx.save(orig, paths["orig"])
    onnx.save(rew, paths["rew"])
    onnx.save(TAMPERED_WARPS["padding_mode"](), paths["bad"])
    f = warp_feeds()
    np.save(tmp_path / "x.npy", f["x"])
    np.save(tmp_path / "theta.npy", f["theta"])
    np.savez(tmp_path / "feeds.npz", **f)
    return {k: str(v) for k, v in paths.items()}


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_error_line(result, *needles):
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("error: ") and "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[-1], lines[-1]


def test_run_prints_each_output_and_writes_npy_files(models, tmp_path):
    out = tmp_path / "out" / "nested"
    r = invoke("run", models["rew"], "--input", f"x={tmp_path / 'x.npy'}", "--input",
               f"theta={tmp_path / 'theta.npy'}", "--output-dir", out)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("y: float32[1, 3, 32, 32] min ") and str(out / "y.npy") in r.stdout
    saved = np.load(out / "y.npy")
    r2 = invoke("run", models["orig"], "--inputs", tmp_path / "feeds.npz", "--output-dir", tmp_path / "o2")
    np.testing.assert_allclose(saved, np.load(tmp_path / "o2" / "y.npy"), atol=1e-5)
    assert not [p for p in os.listdir(out) if p.endswith(".tmp")]
    assert "random" not in r.stderr and "random" not in r2.stderr


def test_run_makes_random_inputs_and_says_so(models):
    r = invoke("run", models["rew"], "--input", "theta=" + models["rew"].replace("rew.onnx", "theta.npy"))
    assert r.exit_code == 0, r.output
    assert "note: random inputs (seed 0, floats signed, half in [-1, 1), half of magnitude 1-8): x float32[1, 3, 32, 32]" in r.stderr


def test_output_names_are_sanitised(tmp_path):
    m = scale_ops_model([scale_node("x", "out:0/../y", "s")], [value_info("x", [2])], [value_info("out:0/../y", [2])])
    onnx.save(m, tmp_path / "m.onnx")
    r = invoke("run", tmp_path / "m.onnx", "--output-dir", tmp_path / "o", "--plugin", PLUGIN)
    assert r.exit_code == 0, r.output
    (name,) = os.listdir(tmp_path / "o")
    assert name == sanitise("out:0/../y") + ".npy" and "/" not in name and name.startswith("out_0_.._y-")
    assert sanitise("y") == "y" and sanitise(".hidden").startswith("_.hidden")


@pytest.mark.parametrize("spec,needle", [
    ("x", "expected NAME=FILE.npy"),
    ("x=", "expected NAME=FILE.npy"),
    ("x=missing.npy", "no such file"),
    ("nope=X", "has no input 'nope'"),
    ("x=NOTNPY", "not a readable .npy file"),
])
def test_bad_input_specs_are_one_line_errors(models, tmp_path, spec, needle):
    (tmp_path / "junk.txt").write_text("not numpy")
    spec = spec.replace("=X", f"={tmp_path / 'x.npy'}").replace("NOTNPY", str(tmp_path / "junk.txt"))
    one_error_line(invoke("run", models["rew"], "--input", spec), needle)


def test_input_given_twice_and_wrong_dtype(models, tmp_path):
    x = str(tmp_path / "x.npy")
    one_error_line(invoke("run", models["rew"], "--input", f"x={x}", "--input", f"x={x}"), "given more than once")
    one_error_line(invoke("run", models["rew"], "--input", f"x={x}", "--inputs", tmp_path / "feeds.npz"),
                   "given both by --input and in")
    np.save(tmp_path / "x64.npy", np.zeros((1, 3, 32, 32)))
    one_error_line(invoke("run", models["rew"], "--input", f"x={tmp_path / 'x64.npy'}"),
                   "input 'x': the model expects float32, got float64")


def test_run_refuses_inputs_over_the_memory_limit(models, tmp_path):
    one_error_line(invoke("run", models["rew"], "--max-memory", "0.00001"), "more than the", "--max-memory")
    one_error_line(invoke("run", models["rew"], "--input", f"x={tmp_path / 'x.npy'}", "--max-memory", "0.00001"),
                   "the given inputs would need")
    one_error_line(invoke("run", models["rew"], "--max-memory", "0"), "--max-memory must be a positive")


def test_run_on_cuda_without_a_gpu_is_a_one_line_error(models):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    r = invoke("run", models["rew"], "--device", "cuda")
    one_error_line(r, "no CUDA GPU is available")
    assert len(r.stderr.strip().splitlines()) == 1


def test_missing_kernel_and_plugin_kernels(tmp_path):
    m = scale_ops_model([helper.make_node("Foo", ["x"], ["y"], name="n3", domain="test.ops")],
                    [value_info("x", [2])], [value_info("y", [2])])
    onnx.save(m, tmp_path / "m.onnx")
    one_error_line(invoke("run", tmp_path / "m.onnx"), "no reference kernel for test.ops::Foo (node 'n3')")
    one_error_line(invoke("run", tmp_path / "m.onnx", "--plugin", "no_such_module:X"), "--plugin no_such_module:X")


def test_plugin_kernels_are_used(tmp_path):
    m = scale_ops_model([helper.make_node("PluginOnly", ["x"], ["y"], name="p", domain="test.ops")],
                    [value_info("x", [2])], [value_info("y", [2])])
    onnx.save(m, tmp_path / "m.onnx")
    np.save(tmp_path / "x.npy", np.array([1.0, -2.0], np.float32))
    r = invoke("run", tmp_path / "m.onnx", "--input", f"x={tmp_path / 'x.npy'}", "--plugin", PLUGIN,
               "--output-dir", tmp_path / "o")
    assert r.exit_code == 0, r.output
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "y.npy"), [3.0, -6.0])


def test_validate_passes_with_exit_0_and_writes_a_report(models, tmp_path):
    report = tmp_path / "check.json"
    r = invoke("validate", models["orig"], models["rew"], "--inputs", tmp_path / "feeds.npz", "--report", report)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("validation PASSED") and "inputs (file): x float32[1, 3, 32, 32]" in r.stdout
    data = json.loads(report.read_text())
    assert data["passed"] is True and [n["name"] for n in data["rewrites"][0]["nodes"]] == ["affine-grid/FusedGridSample"]
    assert data["rewrites"][0]["nodes"][0]["op_type"] == "FusedGridSample" and data["kind"] == "validate"


def test_validate_fails_with_exit_1_and_names_the_rewrite(models, tmp_path):
    r = invoke("validate", models["orig"], models["bad"], "--inputs", tmp_path / "feeds.npz")
    assert r.exit_code == 1
    assert "FAIL rewrite 'affine-grid/FusedGridSample' (custom.ops::FusedGridSample, pattern affine-grid)" in r.stdout
    assert r.stderr.strip().splitlines()[-1].startswith(
        "error: validation failed: rewrite 'affine-grid/FusedGridSample'")


def test_validate_tolerance_options(models, tmp_path):
    feeds = ["--inputs", tmp_path / "feeds.npz"]
    assert invoke("validate", models["orig"], models["bad"], *feeds, "--atol", "10").exit_code == 0
    one_error_line(invoke("validate", models["orig"], models["rew"], *feeds, "--atol", "-1"), "atol must be >= 0")
    if not _has_gpu():
        one_error_line(invoke("validate", models["orig"], models["rew"], "--device", "cuda"), "no CUDA GPU")


def test_validate_with_random_inputs_and_stn(tmp_path):
    orig, rew = stn_pair()
    onnx.save(orig, tmp_path / "o.onnx")
    onnx.save(rew, tmp_path / "r.onnx")
    r = invoke("validate", tmp_path / "o.onnx", tmp_path / "r.onnx")
    assert r.exit_code == 0, r.output
    assert "note: random inputs (seed 0" in r.stderr


def test_help_has_examples():
    for command in ("run", "validate"):
        r = invoke(command, "--help")
        assert r.exit_code == 0 and "Example:" in r.output and f"surgeon {command} " in r.output


def test_a_bad_model_file_is_a_one_line_error(tmp_path):
    (tmp_path / "junk.onnx").write_bytes(b"\x00garbage")
    one_error_line(invoke("run", tmp_path / "junk.onnx"), "junk.onnx")
    one_error_line(invoke("validate", tmp_path / "nope.onnx", tmp_path / "junk.onnx"), "no such file")


def _has_gpu():
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False
