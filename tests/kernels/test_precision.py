"""Precision on a larger image against the numpy oracle in float64: no implementation may be
further from it than 1.5x torch's own float32 error."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import surgeon_ops.kernels as K  # noqa: E402
from surgeon_ops.kernels import oracle  # noqa: E402

from .cases import cpu_shared, torch_fused  # noqa: E402

SIZE = 256


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(42)
    # A smooth image with some texture: errors then come from coordinates, not noise.
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] / SIZE
    x = np.stack([np.sin(9 * xx + 4 * yy), np.cos(13 * yy) * xx, rng.random((SIZE, SIZE))])[None]
    x = x.astype(np.float32)
    theta = np.array([[[0.83, 0.31, 0.061], [-0.27, 0.91, -0.043]]], np.float32)
    size = (SIZE + 37, SIZE - 21)
    ref = oracle.fused_grid_sample(x.astype(np.float64), theta.astype(np.float64), size, "bilinear", "zeros", False)
    torch_err = np.abs(torch_fused(x, theta, size, "bilinear", "zeros", 0) - ref).max()
    assert 0 < torch_err < 1e-4
    return x, theta, size, ref, torch_err


@pytest.mark.parametrize("impl", ["numpy", "cpp", "cpp-shared", "cuda"])
def test_error_within_torchs(problem, impl):
    x, theta, size, ref, torch_err = problem
    if impl == "cuda":
        if not torch.cuda.is_available():
            pytest.skip("no CUDA device")
        got = K.fused_grid_sample(torch.from_numpy(x).cuda(), torch.from_numpy(theta).cuda(), size).cpu().numpy()
    elif impl == "cpp-shared":
        got = cpu_shared(lambda: K.fused_grid_sample(x, theta, size, backend="cpp"))
    else:
        got = K.fused_grid_sample(x, theta, size, backend=impl)
    err = np.abs(got - ref).max()
    assert err <= 1.5 * torch_err, f"{impl}: {err:.3g} vs torch {torch_err:.3g}"
