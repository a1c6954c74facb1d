"""csrc/cuda_kernels.cu compiled by g++ against a host stand-in for the CUDA runtime
(cuda_on_host/cuda_runtime.h) and run on the CPU, one block and thread after another.

This checks, without a GPU, what the GPU tests (test_cuda.py) cannot reach on this machine:
the launchers' argument checks and dispatch, the launch shape, each thread's row / column
arithmetic and the grid-stride loop -- every output written once, nothing outside it.  The
per-thread results must equal the CPU library's shared per-location path bit for bit (same
source, same compiler flags).  CUDA's own intrinsics (half conversions, -fmad=false) are
left to test_cuda.py on a GPU.
"""

import ctypes
import subprocess
from pathlib import Path

import numpy as np
import pytest

import surgeon_ops.kernels as K
from surgeon_ops.kernels import native
from surgeon_ops.kernels._args import MODE_NAMES, PADDING_NAMES
from surgeon_ops.kernels._frames import DTYPE_CODES

from .. import toolchain
from .cases import COMBOS, cases, cpu_shared

SHIM = Path(__file__).parent / "cuda_on_host"
BLOCK = (32, 8)  # the kernels' block shape (cuda_kernels.cu)
MAX_GRID_Y = 65535


@pytest.fixture(scope="module")
def on_host_library(tmp_path_factory):
    path = tmp_path_factory.mktemp("cuda_on_host") / "libsurgeon_cuda_on_host.so"
    cmd = [toolchain.find_cxx(), "-x", "c++", *toolchain.CXX_FLAGS, "-O2", "-shared",
           "-DSURGEON_CUDA_ON_HOST", "-I", str(SHIM), "-I", str(toolchain.CSRC), "-o", str(path),
           str(toolchain.CSRC / "cuda_kernels.cu")]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    lib = native._load("cuda", path)
    for name in ("surgeon_on_host_threads_run", "surgeon_on_host_launches"):
        getattr(lib, name).restype = ctypes.c_int64
    return lib


@pytest.fixture
def gpu(on_host_library, monkeypatch):
    """native's "cuda" library is the host-run build for the length of one test."""
    monkeypatch.setitem(native._loaded, "cuda", on_host_library)
    return on_host_library


GUARD = 37  # elements past the output's end that no thread may touch


def guarded_empty(shape, dtype):
    """An output buffer of NaN with a NaN tail: returns (the whole buffer, the output view)."""
    size = int(np.prod(shape))
    whole = np.full(size + GUARD, np.nan, dtype)
    return whole, whole[:size].reshape(shape)


def run_sample(x, coords, size, mode, padding, ac, from_theta=True):
    """One launch through native's "cuda" entry points, on numpy buffers."""
    nsp = x.ndim - 2
    whole, y = guarded_empty(x.shape[:2] + tuple(size), x.dtype)
    native.sample("cuda", from_theta, DTYPE_CODES[x.dtype], nsp, x.ctypes.data, coords.ctypes.data,
                  y.ctypes.data, x.shape[0], x.shape[1], x.shape[2:], size, coords.shape[0],
                  MODE_NAMES.index(mode), PADDING_NAMES.index(padding), ac, None)
    assert np.isnan(whole[y.size:]).all(), "a thread wrote past the output"
    return y


def expected_threads(rows, width):
    grid_y = min(-(-rows // BLOCK[1]), MAX_GRID_Y)
    return -(-width // BLOCK[0]) * grid_y * BLOCK[0] * BLOCK[1]


@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS)
def test_fused_kernels_equal_the_cpu_per_location_code(gpu, nsp, mode, padding, ac):
    for x, theta, size in cases(nsp, seed=21):
        got = run_sample(x, theta, size, mode, padding, ac)
        want = cpu_shared(lambda: K.fused_grid_sample(x, theta, size, mode, padding, ac))
        np.testing.assert_array_equal(got, want)  # NaN left anywhere (a row not written) fails too


@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS[::2])
def test_grid_and_float16_kernels_equal_the_cpu(gpu, nsp, mode, padding, ac):
    rng = np.random.default_rng(4)
    for x, theta, size in cases(nsp, seed=8)[:4]:
        grid = rng.uniform(-1.4, 1.4, (x.shape[0],) + tuple(size) + (nsp,)).astype(np.float32)
        flat = grid.reshape(-1)
        flat[::7] = np.resize(np.array([np.nan, np.inf, -np.inf], np.float32), flat[::7].size)  # read as -1
        got = run_sample(x, grid, size, mode, padding, ac, from_theta=False)
        np.testing.assert_array_equal(got, cpu_shared(lambda: K.grid_sample(x, grid, mode, padding, ac)))
        xh, th = x.astype(np.float16), theta.astype(np.float16)
        got = run_sample(xh, th, size, mode, padding, ac)
        want = cpu_shared(lambda: K.fused_grid_sample(xh, th, size, mode, padding, ac))
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("nsp", (2, 3))
@pytest.mark.parametrize("dtype", (np.float32, np.float16))
def test_affine_grid_kernel_equals_the_cpu(gpu, nsp, dtype):
    theta = np.random.default_rng(0).normal(0, 1, (3, nsp, nsp + 1)).astype(dtype)
    size = (4, 17, 33)[3 - nsp:]
    for ac in (0, 1):
        whole, grid = guarded_empty((3,) + size + (nsp,), dtype)
        native.affine_grid("cuda", DTYPE_CODES[np.dtype(dtype)], nsp, theta.ctypes.data, grid.ctypes.data, 3, size,
                           ac, None)
        assert np.isnan(whole[grid.size:]).all()
        np.testing.assert_array_equal(grid, K.affine_grid(theta, size, ac))


def test_rows_past_one_launch_grid_take_the_grid_stride_loop(gpu):
    # 70,000 x 2 rows of 40 columns: the grid's y extent stops at 65,535 blocks of 8 rows,
    # so each thread runs about 2 rows; width 40 leaves 24 idle columns per row of blocks.
    x = np.random.default_rng(1).random((2, 2, 5, 5)).astype(np.float32)
    theta = np.array([[[0.9, 0.1, 0.0], [0.2, 1.1, 0.05]]], np.float32)
    size = (70_000 * 4, 40)
    before = gpu.surgeon_on_host_threads_run()
    got = run_sample(x, theta, size, "bilinear", "border", 0)
    assert gpu.surgeon_on_host_threads_run() - before == expected_threads(2 * size[0], size[1])
    assert -(-2 * size[0] // BLOCK[1]) > MAX_GRID_Y  # the case really needs the stride loop
    np.testing.assert_array_equal(got, cpu_shared(lambda: K.fused_grid_sample(x, theta, size, "bilinear", "border")))


def test_bad_arguments_are_refused_before_any_launch(gpu):
    x = np.zeros((1, 1, 4, 4), np.float32)
    theta = np.zeros((1, 3, 4), np.float32)
    launches = gpu.surgeon_on_host_launches()
    with pytest.raises(RuntimeError, match=r"fused_grid_sample kernel \(cuda\) failed: unsupported combination"):
        native.sample("cuda", True, 0, 3, x.ctypes.data, theta.ctypes.data, x.ctypes.data, 1, 1, (1, 4, 4), (1, 4, 4),
                      1, 2, 0, 0, None)  # bicubic in 3-D
    with pytest.raises(RuntimeError, match=r"grid_sample kernel \(cuda\) failed: invalid argument"):
        native.sample("cuda", False, 0, 2, x.ctypes.data, theta.ctypes.data, x.ctypes.data, 1, 1, (4, 4), (4, 0),
                      1, 0, 0, 0, None)  # an empty output size
    with pytest.raises(RuntimeError, match=r"affine_grid kernel \(cuda\) failed: invalid argument"):
        native.affine_grid("cuda", 0, 2, 0, x.ctypes.data, 1, (4, 4), 0, None)  # a null theta
    assert gpu.surgeon_on_host_launches() == launches


def test_a_cuda_error_code_reaches_the_caller_with_cudas_message(gpu):
    # Codes from 1000 up carry a cudaError_t; native turns them into CUDA's own words.
    with pytest.raises(RuntimeError, match=r"^surgeon grid_sample kernel \(cuda\) failed: invalid configuration"):
        native._check(gpu, "cuda", 1000 + 9, "grid_sample")
    assert gpu.surgeon_cuda_error_string(1).decode().startswith("invalid argument")
