"""surgeon lint --target openvino: each rule trips on its model and is clean on the counterpart;
the conversion rules ask the installed OpenVINO, the precision rule measures on this CPU."""

import os
import shlex
import subprocess
import sys

import numpy as np
import onnx
import openvino as ov
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper

import surgeon
from surgeon.cli import cli
from surgeon.lint import lint

from ..builders import FLOAT, grid_sample_model, onnx_model, relu_model, twice_op_model

SAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "samples",
                       "models")
LOW = next((p for p, cap in (("bf16", "BF16"), ("f16", "FP16"))
            if cap in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")), None)


def rules(model, **kwargs):
    return [h.rule for h in lint(model, "openvino", **kwargs).hazards]


def ms_grid_sample():
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], domain="com.microsoft")
    model = onnx_model([node], [("x", FLOAT, [1, 1, 4, 4]), ("grid", FLOAT, [1, 3, 3, 2])], [("y", FLOAT, [1, 1, 3, 3])],
                    opset=16)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return model


@pytest.mark.parametrize("rule,trip,clean", [
    ("ov-custom-op", twice_op_model, lambda: relu_model(17)),
    ("ov-local-function", lambda: twice_op_model(with_function=True), lambda: relu_model(17)),
    ("ov-cannot-convert", lambda: grid_sample_model("linear", 20, rank=5), lambda: grid_sample_model("linear", 20)),
    ("ov-cannot-convert", lambda: grid_sample_model("bilinear", 20), lambda: grid_sample_model("linear", 20)),
    ("ov-cannot-convert", ms_grid_sample, lambda: grid_sample_model("bilinear", 16)),
])
def test_rule_trips_and_its_counterpart_is_clean(rule, trip, clean):
    assert rule in rules(trip())
    assert rules(clean()) == []


def test_lines_say_what_openvino_does_and_the_fix():
    (five_d,) = lint(grid_sample_model("linear", 20, rank=5), "openvino").hazards
    assert f"OpenVINO {ov.__version__.split('-')[0]} cannot convert it" in five_d.what
    assert "GridSample is only supported for 4D input tensors. Got rank: 5" in five_d.what
    (ms,) = lint(ms_grid_sample(), "openvino").hazards
    assert ms.what.endswith("OpenVINO has no conversion for com.microsoft.GridSample")
    (fn,) = lint(twice_op_model(with_function=True), "openvino").hazards
    assert "does not use model-local functions" in fn.what


def test_surgeons_extension_clears_its_custom_ops_and_is_named_in_the_fix(tmp_path):
    fused = tmp_path / "stn.fused.onnx"
    surgeon.fuse(os.path.join(SAMPLES, "stn_ts_opset20_2d.onnx"), fused)
    hazards = lint(str(fused), "openvino").hazards
    custom = [h for h in hazards if h.rule == "ov-custom-op"]
    assert [h.node for h in custom] == ["affine-grid-sample/FusedGridSample"]
    assert "--ov-extension surgeon" in custom[0].fix and "surgeon unfuse" in custom[0].fix
    assert "ov-custom-op" not in rules(str(fused), ov_extensions=["surgeon"])
    other = lint(twice_op_model(), "openvino").hazards[0]
    assert "--ov-extension PATH" in other.fix and "surgeon_ops.openvino" not in other.fix


def test_the_unfuse_fix_runs_as_printed(tmp_path):
    fused = tmp_path / "stn.fused.onnx"
    surgeon.fuse(os.path.join(SAMPLES, "stn_ts_opset20_2d.onnx"), fused)
    (hazard,) = [h for h in lint(str(fused), "openvino").hazards if h.rule == "ov-custom-op"]
    command = next(c for c in hazard.fix.split("`")[1::2] if c.startswith("surgeon unfuse "))
    assert command.startswith("surgeon unfuse ")
    argv = shlex.split(command)
    done = subprocess.run([sys.executable, "-m", "surgeon", *argv[1:]], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not [r for r in rules(argv[-1]) if r in ("ov-custom-op", "ov-cannot-convert")]


def test_aten_fallbacks_have_no_conversion():
    (hazard,) = [h for h in lint(os.path.join(SAMPLES, "aten_fallback_opset15.onnx"), "openvino").hazards
                 if h.rule == "ov-custom-op"]
    assert hazard.op_type == "ATen" and "read_model fails" in hazard.what and "surgeon fuse" in hazard.fix


# (sample, fused?) -> whether bf16 moves what places its samples: measured on the outputs below.
PRECISION = [("affine_ts_opset20_2d_static.onnx", False, True),  # AffineGrid: a MatMul in OpenVINO
             ("affine_ts_opset20_2d_static.onnx", True, False),  # theta straight from the input
             ("affine_dynamo_opset18_2d.onnx", False, False),  # Mul + ReduceSum: float32 kept
             ("lib_matmul_ts_opset17.onnx", False, False),  # a MatMul the plugin keeps in float32
             ("stn_ts_opset20_2d.onnx", False, True),
             ("stn_ts_opset20_2d.onnx", True, True),  # theta from Gemm/Conv: fusing does not help
             ("monai_resample_ts_opset17.onnx", True, True)]


@pytest.mark.parametrize("name,fused,flagged", PRECISION)
def test_precision_hazards_match_what_bf16_does_to_the_outputs(tmp_path, name, fused, flagged):
    """The rule flags exactly the samples whose outputs move under the CPU's reduced precision."""
    if LOW is None:
        pytest.skip("this CPU has neither bf16 nor f16: OpenVINO keeps float32 here")
    path = os.path.join(SAMPLES, name)
    if fused:
        path = str(tmp_path / "fused.onnx")
        surgeon.fuse(os.path.join(SAMPLES, name), path)
    hazards = [h for h in lint(path, "openvino", ov_extensions=["surgeon"]).hazards if h.rule == "ov-grid-precision"]
    assert bool(hazards) == flagged, [h.line() for h in hazards]
    if hazards:
        assert f"({LOW} on this CPU)" in hazards[0].what and "INFERENCE_PRECISION_HINT" in hazards[0].fix
    import surgeon_ops.openvino

    core = surgeon_ops.openvino.core()
    model = onnx.load(path)
    rng = np.random.default_rng(0)
    feeds = {}
    for vi in model.graph.input:
        dims = [d.dim_value or 1 for d in vi.type.tensor_type.shape.dim]
        feeds[vi.name] = (np.eye(dims[-2], dims[-1]) * 0.9 + rng.normal(0, 0.1, dims) if "theta" in vi.name
                          else rng.uniform(-1, 1, dims)).astype(np.float32)
    outs = []
    for hint in (LOW, "f32"):
        compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": hint})
        outs.append(compiled(feeds)[0].astype(np.float64))
    want = surgeon.run(os.path.join(SAMPLES, name), feeds=feeds)[model.graph.output[0].name]
    assert all(o.shape == want.shape for o in outs)
    low, exact = (float(np.abs(o - want).max()) for o in outs)
    assert (low > 10 * exact + 1e-5) == flagged, (low, exact)


def test_static_rule_where_nothing_can_be_measured():
    """Without OpenVINO converting the model (no extension given for a fused file), the ops the
    positions come through are named instead."""
    fused = surgeon.fuse(os.path.join(SAMPLES, "stn_ts_opset20_2d.onnx")).model
    report = lint(fused, "openvino")
    (hazard,) = [h for h in report.hazards if h.rule == "ov-grid-precision"]
    assert "computed in bf16 by /fc_loc/fc_loc.2/Gemm" in hazard.what
    assert any("not measured" in n for n in report.notes)


def test_cli(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(twice_op_model(), path)
    done = CliRunner().invoke(cli, ["lint", str(path), "--target", "openvino"])
    assert done.exit_code == 1 and done.output.splitlines()[0] == "openvino: 1 hazard(s)"
    done = CliRunner().invoke(cli, ["lint", str(path), "--target", "openvino", "--ov-extension", str(tmp_path / "x")])
    assert done.exit_code == 1 and "--ov-extension" in done.output and "no such file" in done.output
    not_one = tmp_path / "not.so"
    not_one.write_bytes(b"\x7fELF nothing")
    done = CliRunner().invoke(cli, ["lint", str(path), "--target", "openvino", "--ov-extension", str(not_one)])
    assert done.exit_code == 1 and "OpenVINO cannot load the extension" in done.output
    assert "Traceback" not in done.output and TensorProto


def test_fuse_target_openvino_writes_the_fused_form_and_lints_it_with_the_extension(tmp_path):
    """fuse --target openvino: the contract's ops (the pattern's default form), checked with the
    plugins' extension; a precision hazard refuses the write like any engine hazard."""
    out = tmp_path / "a.onnx"
    result = surgeon.fuse(os.path.join(SAMPLES, "affine_ts_opset20_2d_static.onnx"), out, target="openvino")
    assert result.hazards == [] and out.exists()
    assert [n.op_type for n in onnx.load(out).graph.node] == ["FusedGridSample"]
    with pytest.raises(surgeon.SurgeonError, match=r"the openvino output has a hazard, nothing written .* "
                                                   r"\[ov-grid-precision\]"):
        surgeon.fuse(os.path.join(SAMPLES, "stn_ts_opset20_2d.onnx"), tmp_path / "stn.onnx", target="openvino")
    assert not (tmp_path / "stn.onnx").exists()


def test_a_shape_openvino_infers_otherwise_is_named_once():
    """OpenVINO 2026.4 gives a standard AffineGrid with a unit-size dim and align_corners=1 two
    rows; the sampler after it inherits the wrong shape, and only the cause is named."""
    path = os.path.join(SAMPLES, "size_one_rows_ts_opset20.onnx")
    (hazard,) = [h for h in lint(path, "openvino").hazards if h.rule == "ov-shape"]
    assert hazard.node == "/AffineGrid" and "ONNX says ['?', 1, 12, 2]" in hazard.what
    core = ov.Core()
    shape = core.read_model(path).outputs[0].partial_shape
    assert shape[2].get_length() == 2  # what the line says OpenVINO does (else the rule is out of date)
    assert [h.rule for h in lint(grid_sample_model("linear", 20), "openvino").hazards] == []
