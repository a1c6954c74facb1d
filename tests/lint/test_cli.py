"""`surgeon lint`: a line per hazard, exit 0 clean / 1 with hazards, --report JSON."""

import json

import onnx
from click.testing import CliRunner

from surgeon.cli import cli

from ..builders import grid_sample_model, relu_model, twice_op_model


def run(tmp_path, model, *args):
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    return CliRunner().invoke(cli, ["lint", str(path), *args]), str(path)


def test_hazards_exit_1_one_line_each(tmp_path):
    done, path = run(tmp_path, grid_sample_model("linear", 20), "--target", "tensorrt")
    assert done.exit_code == 1
    lines = done.output.strip().splitlines()
    assert lines[0] == "tensorrt: 1 hazard(s)" and len(lines) == 2
    assert lines[1].startswith("n0 (GridSample)") or "(GridSample)" in lines[1]
    assert f"surgeon fuse {path}" in lines[1]


def test_clean_exits_0(tmp_path):
    done, _ = run(tmp_path, grid_sample_model("bilinear", 16), "--target", "tensorrt")
    assert done.exit_code == 0 and done.output.strip() == "tensorrt: no hazards"


def test_report_json(tmp_path):
    done, path = run(tmp_path, twice_op_model(), "--target", "onnxruntime", "--report", "-")
    assert done.exit_code == 1
    data = json.loads(done.output)
    assert data["target"] == "onnxruntime" and data["model"] == path and not data["clean"]
    assert data["hazards"][0]["rule"] == "ort-custom-op" and data["hazards"][0]["op_type"] == "Twice"
    report = tmp_path / "lint.json"
    done, _ = run(tmp_path, twice_op_model(), "--target", "onnxruntime", "--report", str(report))
    assert done.exit_code == 1 and json.loads(report.read_text())["hazards"] and "1 hazard(s)" in done.output


def test_usage_errors(tmp_path):
    done, _ = run(tmp_path, relu_model(17), "--target", "tvm")
    assert done.exit_code == 2
    done, _ = run(tmp_path, relu_model(17), "--target", "onnxruntime", "--ort-library", str(tmp_path / "none.so"))
    assert done.exit_code == 1 and "no such file" in done.output
