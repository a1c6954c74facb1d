"""Each engine with only itself installed: with OpenVINO, TensorRT and torch unimportable (as in a
TensorRT or onnxruntime user's venv), fuse, lint and run for TensorRT's and onnxruntime's
targets, validate and unfuse all work; what needs OpenVINO stops with one line naming what to
install; a --target no engine or pattern knows is a usage error. (.ci/engine_matrix.sh does the
same with the wheel in real venvs.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import onnx
import pytest

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "samples" / "models"

# Runs each command line in one interpreter where the optional engines cannot be imported, and
# prints [exit code, stdout, stderr] for each.
ALONE = textwrap.dedent("""
    import importlib.abc, json, sys

    class Absent(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("openvino", "tensorrt", "torch"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Absent())
    from click.testing import CliRunner
    from surgeon.cli import cli

    results = []
    for args in json.loads(sys.argv[1]):
        done = CliRunner().invoke(cli, args)
        results.append([done.exit_code, done.stdout, done.stderr])
    assert not [m for m in sys.modules if m.split(".")[0] in ("openvino", "tensorrt", "torch")]
    print(json.dumps(results))
""")


@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    folder = tmp_path_factory.mktemp("alone")
    stn, affine = str(MODELS / "stn_ts_opset20_2d.onnx"), str(MODELS / "affine_ts_opset20_2d_static.onnx")
    at = lambda name: str(folder / name)  # noqa: E731
    commands = {
        "fuse tensorrt": ["fuse", stn, at("trt.onnx"), "--target", "tensorrt", "--input-shape", "x:1,1,28,28"],
        "lint tensorrt": ["lint", at("trt.onnx"), "--target", "tensorrt"],
        "fuse onnxruntime": ["fuse", stn, at("ort.onnx"), "--target", "onnxruntime"],
        "lint onnxruntime": ["lint", at("ort.onnx"), "--target", "onnxruntime", "--ort-library", "surgeon"],
        "run": ["run", at("ort.onnx"), "-q"],
        "validate": ["validate", stn, at("ort.onnx"), "-q"],
        "unfuse 16": ["unfuse", at("ort.onnx"), at("std16.onnx"), "--opset", "16"],
        "fuse openvino": ["fuse", affine, at("ov.onnx"), "--target", "openvino"],
        "lint openvino": ["lint", at("ort.onnx"), "--target", "openvino"],
        "lint openvino extension": ["lint", at("ort.onnx"), "--target", "openvino", "--ov-extension", "surgeon"],
        "run openvino": ["run", at("ort.onnx"), "--engine", "openvino"],
        "fuse misspelt": ["fuse", stn, at("x.onnx"), "--target", "tensorrtt"],
        "inspect misspelt": ["inspect", stn, "--target", "onnx-runtime"],
        "lint misspelt": ["lint", stn, "--target", "openvin"],
        "lint extension for tensorrt": ["lint", at("trt.onnx"), "--target", "tensorrt", "--ov-extension", "surgeon"],
    }
    done = subprocess.run([sys.executable, "-c", ALONE, json.dumps(list(commands.values()))], capture_output=True,
                          text=True, cwd=folder, timeout=600, env={**os.environ, "SURGEON_DEBUG": ""})
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    return folder, dict(zip(commands, results))


@pytest.mark.parametrize("name", ["fuse tensorrt", "lint tensorrt", "fuse onnxruntime", "lint onnxruntime", "run",
                                  "validate", "unfuse 16"])
def test_what_needs_no_optional_engine_works(alone, name):
    code, out, err = alone[1][name]
    assert code == 0, (out, err)
    assert "Traceback" not in err


def test_the_tensorrt_and_onnxruntime_outputs_hold_the_custom_node(alone):
    folder, results = alone
    for name in ("trt.onnx", "ort.onnx"):
        custom = [n.op_type for n in onnx.load(folder / name).graph.node if n.domain == "custom.ops"]
        assert custom == ["FusedGridSample"]
    assert "tensorrt: no hazards" in results["lint tensorrt"][1]
    assert "validation PASSED" in results["validate"][1]
    assert not [n for n in onnx.load(folder / "std16.onnx").graph.node if n.domain]


@pytest.mark.parametrize("name", ["fuse openvino", "lint openvino", "lint openvino extension", "run openvino"])
def test_what_needs_openvino_says_what_to_install_in_one_line(alone, name):
    code, out, err = alone[1][name]
    assert code == 1
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    assert "pip install openvino" in err
    if name != "lint openvino":  # the extension names the release it was built against
        assert "pip install openvino==" in err or "reinstall surgeon" in err
    assert not (alone[0] / "ov.onnx").exists()


@pytest.mark.parametrize("name", ["fuse misspelt", "inspect misspelt", "lint misspelt", "lint extension for tensorrt"])
def test_a_target_no_engine_knows_is_a_usage_error(alone, name):
    code, out, err = alone[1][name]
    assert code == 2, (out, err)
    assert "Traceback" not in err
    if name != "lint extension for tensorrt":
        assert "Invalid value for '--target'" in err and "'tensorrt'" in err
    else:
        assert "--ov-extension is for --target openvino" in err
    assert not (alone[0] / "x.onnx").exists()
