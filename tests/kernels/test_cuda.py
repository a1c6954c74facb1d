"""The CUDA kernels, on a GPU: against the C++ build's shared per-location code (the same
source) and against torch on the GPU."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

import surgeon_ops.kernels as K  # noqa: E402

from .cases import COMBOS, assert_equals_torch, cases, cpu_shared  # noqa: E402


def cuda(a):
    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS)
def test_cuda_matches_cpu_and_torch(nsp, mode, padding, ac):
    for x, theta, size in cases(nsp, seed=21):
        got = K.fused_grid_sample(cuda(x), cuda(theta), size, mode, padding, ac)
        assert got.is_cuda and got.dtype == torch.float32
        got = got.cpu().numpy()
        ref = cpu_shared(lambda: K.fused_grid_sample(x, theta, size, mode, padding, ac))
        if mode == "nearest":
            np.testing.assert_array_equal(got, ref)  # the same taps chosen
        else:
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-6)
        assert_equals_torch(got, x, theta, size, mode, padding, ac)


@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS[::3])
def test_cuda_grid_sample_and_float16(nsp, mode, padding, ac):
    rng = np.random.default_rng(4)
    for x, theta, size in cases(nsp, seed=8)[:4]:
        grid = rng.uniform(-1.4, 1.4, (x.shape[0],) + tuple(size) + (nsp,)).astype(np.float32)
        got = K.grid_sample(cuda(x), cuda(grid), mode, padding, ac).cpu().numpy()
        ref = K.grid_sample(x, grid, mode, padding, ac)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-6)
        xh, th = x.astype(np.float16), theta.astype(np.float16)
        got = K.fused_grid_sample(cuda(xh), cuda(th), size, mode, padding, ac).cpu().numpy()
        ref = K.fused_grid_sample(xh, th, size, mode, padding, ac)
        assert got.dtype == np.float16
        assert np.abs(got.astype(np.float32) - ref.astype(np.float32)).max() <= 2e-3


@pytest.mark.parametrize("nsp", (2, 3))
def test_cuda_affine_grid_equals_cpu(nsp):
    theta = np.random.default_rng(0).normal(0, 1, (3, nsp, nsp + 1)).astype(np.float32)
    size = (4, 17, 33)[3 - nsp:]
    for ac in (0, 1):
        got = K.affine_grid(cuda(theta), size, ac).cpu().numpy()
        np.testing.assert_array_equal(got, K.affine_grid(theta, size, ac))


def test_cuda_runs_on_the_current_stream_and_many_rows():
    x = np.random.default_rng(1).random((1, 2, 5, 5)).astype(np.float32)
    theta = np.array([[[0.9, 0.1, 0.0], [0.2, 1.1, 0.05]]], np.float32)
    size = (600_000, 2)  # more rows than one launch grid covers: the grid-stride loop
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        got = K.fused_grid_sample(cuda(x), cuda(theta), size)
    stream.synchronize()
    ref = K.fused_grid_sample(x, theta, size)
    np.testing.assert_allclose(got.cpu().numpy(), ref, rtol=0, atol=1e-6)
