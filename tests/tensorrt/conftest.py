import subprocess
from pathlib import Path

import pytest

from surgeon_ops.kernels import native
from surgeon_ops.tensorrt import launch, plugin

from .. import toolchain
from .stand_in import Stand_in

SHIM = Path(__file__).resolve().parents[1] / "kernels" / "cuda_on_host"


@pytest.fixture
def trt():
    """The plugins registered with a fresh TensorRT stand-in."""
    found = Stand_in()
    found.ids = plugin.define(found.trt, found.trtp, "surgeon")
    return found


@pytest.fixture(scope="session")
def host_cuda_library(tmp_path_factory):
    """cuda_kernels.cu compiled by g++ against the host stand-in for the CUDA runtime: the
    plugins' enqueue runs the project's CUDA source on the CPU (host pointers, every thread)."""
    try:
        cxx = toolchain.find_cxx()
    except toolchain.ToolMissing as exc:
        pytest.skip(str(exc))
    path = tmp_path_factory.mktemp("trt_cuda_on_host") / "libsurgeon_cuda_on_host.so"
    cmd = [cxx, "-x", "c++", *toolchain.CXX_FLAGS, "-O0", "-shared", "-DSURGEON_CUDA_ON_HOST", "-I", str(SHIM),
           "-I", str(toolchain.CSRC), "-o", str(path), str(toolchain.CSRC / "cuda_kernels.cu")]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return native._load("cuda", path)


@pytest.fixture
def host_cuda(host_cuda_library, monkeypatch):
    monkeypatch.setattr(launch, "_library", [host_cuda_library])
    return host_cuda_library
