"""surgeon_ops.openvino as installed: where the extension is, what it exports, and the one-line
errors when it is missing or built for another OpenVINO release."""

import subprocess
from pathlib import Path

import numpy as np
import openvino as ov
import pytest

import surgeon_ops.openvino as sov
from surgeon_ops.kernels import installed


def test_library_is_installed_beside_the_package_for_this_openvino():
    path = Path(sov.library_path())
    assert path.name == "libsurgeon_openvino.so" and path.parent.name == "openvino"
    assert path.parent.parent.name == "surgeon_ops"
    assert sov.built_for() == ov.__version__.split("-")[0]


def test_the_library_exports_create_extensions_alone():
    out = subprocess.run(["nm", "-D", "--defined-only", sov.library_path()], capture_output=True, text=True,
                         check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.split()[1] in "TWDBR"}
    assert exported == {"create_extensions"}


def test_core_adds_it():
    core = sov.core()
    assert isinstance(core, ov.Core)
    assert "CPU" in core.available_devices


def test_another_openvino_release_is_one_line(monkeypatch):
    monkeypatch.setattr(ov, "__version__", "2099.1.0-1-abc")
    with pytest.raises(sov.ExtensionUnavailable) as err:
        sov.library_path()
    text = str(err.value)
    assert "\n" not in text
    assert f"built against OpenVINO {sov.built_for()}, this is 2099.1.0" in text and "pip install" in text


def test_not_installed_is_one_line(monkeypatch):
    def missing(package, stem, hint):
        raise installed.LibraryNotInstalled(f"lib{stem}.so is not installed in {package} (here); {hint}")

    monkeypatch.setattr(installed, "find", missing)
    with pytest.raises(sov.ExtensionUnavailable) as err:
        sov.core()
    assert "\n" not in str(err.value) and "pip install openvino" in str(err.value)


def test_a_fused_file_reads_only_with_it(tmp_path):
    """Without the extension OpenVINO's ONNX frontend has no conversion for the custom nodes
    (and the error's first lines blame a downstream Conv); with it the file compiles and runs."""
    import surgeon

    fused = tmp_path / "stn.fused.onnx"
    surgeon.fuse("samples/models/stn_ts_opset20_2d.onnx", fused)
    with pytest.raises(RuntimeError, match="No conversion rule found for operations: custom.ops.FusedGridSample"):
        ov.Core().read_model(fused)
    core = sov.core()
    compiled = core.compile_model(core.read_model(fused), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    y = compiled({"x": np.zeros((1, 1, 28, 28), np.float32)})[0]
    assert y.shape == (1, 10) and np.isfinite(y).all()
