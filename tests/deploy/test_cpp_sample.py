"""samples/cpp: the C++ program builds against the onnxruntime wheel's own library, registers
the op library the install built, and prints what Python gets from the same model and input."""

import subprocess
from pathlib import Path

import numpy as np
import pytest

import surgeon
import surgeon_ops.ort

from .. import toolchain

SAMPLES = toolchain.ROOT / "samples"


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cpp")
    build = subprocess.run(["bash", str(SAMPLES / "cpp" / "build.sh"), str(out)], capture_output=True, text=True,
                           timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    links = {p.name for p in out.iterdir() if p.is_symlink()}
    assert links == {"libonnxruntime.so", "libonnxruntime.so.1"}  # made here, not in site-packages
    return out / "run_fused"


def test_the_cpp_sample_prints_what_python_gets(tmp_path, program):
    fused = tmp_path / "stn.fused.onnx"
    surgeon.fuse(str(SAMPLES / "models" / "stn_ts_opset20_2d.onnx"), str(fused))
    done = subprocess.run([str(program), str(fused), surgeon_ops.ort.library_path()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    x = ((np.arange(784) % 17) / 16 - 0.5).astype(np.float32).reshape(1, 1, 28, 28)
    y = surgeon_ops.ort.session(str(fused)).run(None, {"x": x})[0]
    assert y.shape == (1, 10) and np.abs(y).max() > 0.1  # a real output, not zeros
    assert done.stdout.split() == [f"{v:.6f}" for v in y.ravel()]


def test_the_cpp_sample_says_what_is_wrong_in_one_line(tmp_path, program):
    done = subprocess.run([str(program), str(SAMPLES / "models" / "stn_ts_opset20_2d.onnx"),
                           str(Path(tmp_path / "no-such-library.so"))], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stderr.startswith("error: ") and "no-such-library.so" in done.stderr
