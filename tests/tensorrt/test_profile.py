"""`surgeon fuse --target tensorrt`: what it writes is what TensorRT's parser hands to the plugins
(lookup keys, static sizes, no size tensor), lint-clean, and still runs and validates in surgeon."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

import surgeon
from surgeon.lint import lint
from surgeon_ops.tensorrt import profile

from ..builders import custom_affine_grid_read_twice_model
from .stand_in import TensorDesc

MODELS = Path(__file__).resolve().parents[2] / "samples" / "models"
MANIFEST = json.loads((MODELS / "manifest.json").read_text())
SIZE_AS_DATA = {"native_size_input_opset20.onnx", "seed_size_input_opset16.onnx"}  # sizes given as input values
SAMPLES_2D = [n for n, e in MANIFEST.items() if e.get("dims") == 2 and e.get("expected") == "fuse"]


def fuse_trt(name, shapes=True):
    return surgeon.fuse(str(MODELS / name), target="tensorrt",
                        input_shapes=MANIFEST[name]["inputs"] if shapes else None)


def declared_dims(model, value):
    for vi in [*model.graph.value_info, *model.graph.output]:
        if vi.name == value:
            return tuple(d.dim_value if d.HasField("dim_value") else d.dim_param for d in vi.type.tensor_type.shape.dim)
    return None


def test_every_2d_sample_fuses_to_the_profile(trt):
    """Every custom node carries the lookup keys and a static output_size, reads no size tensor,
    and the plugin's shape function gives the dims the node declares; the output is lint-clean."""
    assert len(SAMPLES_2D) > 20
    for name in SAMPLES_2D:
        result = fuse_trt(name)
        if name in SIZE_AS_DATA:
            assert "values of 'size'" in result.report.refusals[0].reason, name
            continue
        report = lint(result.model, "tensorrt")
        assert report.clean, (name, report.lines())
        nodes = [n for n in result.model.graph.node if n.domain == "custom.ops"]
        for node in nodes:
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            assert attrs["plugin_namespace"] == profile.NAMESPACE.encode() and attrs["plugin_version"] == b"1", name
            plugin, fields = trt.parse(node)
            assert len(node.input) == len(plugin.tensors) and attrs["output_size"], name
            if node.op_type == "FusedGridSample":
                x_dims = declared_dims(result.model, node.input[0]) or MANIFEST[name]["inputs"]["x"]
                descs = [TensorDesc(x_dims, trt.trt.float32), TensorDesc((x_dims[0], 2, 3), trt.trt.float32)]
                spatial = slice(2, None)
            else:
                descs, spatial = [TensorDesc(("N", 2, 3), trt.trt.float32)], slice(1, None)
            out = plugin.register(*descs, **fields)
            assert out.shape_expr[spatial] == declared_dims(result.model, node.output[0])[spatial], name


@pytest.mark.parametrize("name", ["stn_ts_opset20_2d.onnx", "affine_dynamo_opset18_2d_auto.onnx", "multi_chain.onnx"])
def test_the_profile_validates_in_surgeon(name):
    result = surgeon.fuse(str(MODELS / name), target="tensorrt", input_shapes=MANIFEST[name]["inputs"], validate=True)
    assert result.validation.passed and result.report.rewrites


def test_a_run_time_size_is_refused_with_the_fix():
    result = fuse_trt("affine_ts_opset20_2d_dynamic.onnx", shapes=False)
    assert not result.report.rewrites
    assert "--input-shape" in result.report.refusals[0].reason


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "surgeon", *args], capture_output=True, text=True)


def test_cli_writes_nothing_with_a_hazard_and_fuses_with_input_shapes(tmp_path):
    src, out = str(MODELS / "affine_ts_opset20_2d_dynamic.onnx"), tmp_path / "m.trt.onnx"
    done = run_cli("fuse", src, str(out), "--target", "tensorrt")
    assert done.returncode == 1 and not out.exists()
    assert "--input-shape" in done.stderr and "[trt-mode-name]" in done.stderr
    done = run_cli("fuse", src, str(out), "--target", "tensorrt", "--input-shape", "x:2,3,16,12",
                   "--input-shape", "theta:2,2,3")
    assert done.returncode == 0, done.stderr
    assert run_cli("lint", str(out), "--target", "tensorrt").returncode == 0


def test_the_grid_form_writes_the_profiles_grid_op():
    original = custom_affine_grid_read_twice_model()
    result = surgeon.fuse(original, target="tensorrt", validate=True)
    ops = [(n.domain, n.op_type) for n in result.model.graph.node]
    assert ("custom.ops", profile.op_type("AffineGrid")) in ops and ("custom.ops", "AffineGrid") not in ops
    assert result.validation.passed
    # the summary names the op as written (it said custom.ops::AffineGrid)
    (warning,) = result.report.rewrites[0].warnings
    assert warning.endswith(f"wrote custom.ops::{profile.op_type('AffineGrid')} and kept the sampler"), warning
    assert "custom.ops::AffineGrid " not in result.report.summary()
    assert lint(result.model, "tensorrt").clean
    assert lint(original, "tensorrt").lines()[0].endswith("[trt-shadowed-op-type]")
    again = surgeon.fuse(result.model, target="tensorrt")
    assert not again.report.rewrites and not again.report.refusals  # already the profile's form
    theta = np.array([[[0.8, -0.2, 0.1], [0.3, 0.9, -0.4]]], np.float32)
    x = np.random.default_rng(0).uniform(-1, 1, (1, 2, 7, 8)).astype(np.float32)
    ran = surgeon.run(result.model, {"x": x, "theta": theta})
    want = surgeon.run(onnx.load_from_string(original.SerializeToString()), {"x": x, "theta": theta})
    np.testing.assert_allclose(ran["grid"], want["grid"], atol=1e-6)
