"""Every implementation against torch's F.affine_grid + F.grid_sample, on small cases."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import surgeon_ops.kernels as K  # noqa: E402
from surgeon_ops.kernels import oracle  # noqa: E402

from ..error_bounds import affine_grid_bound, assert_within, sampled_grid_bound  # noqa: E402
from .cases import COMBOS, MODES_2D, PADDINGS, assert_equals_torch, cases, shared_path, torch_fused  # noqa: E402

# "cpp-shared" runs the C++ build with its fast paths off: every location then takes
# csrc/locations.h, the code one CUDA thread runs.
BACKENDS = ("numpy", "cpp", "cpp-shared")


@pytest.fixture
def backend_name(request):
    name = request.param
    if name == "cpp-shared":
        with shared_path():
            yield "cpp"
    else:
        yield name


@pytest.mark.parametrize("backend_name", BACKENDS, indirect=True)
@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS)
def test_fused_matches_torch(backend_name, nsp, mode, padding, ac):
    for x, theta, size in cases(nsp, seed=nsp * 100 + ac):
        got = K.fused_grid_sample(x, theta, size, mode, padding, ac, backend=backend_name)
        assert got.dtype == np.float32
        assert_equals_torch(got, x, theta, size, mode, padding, ac)


@pytest.mark.parametrize("backend_name", BACKENDS, indirect=True)
@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS)
def test_grid_sample_matches_torch(backend_name, nsp, mode, padding, ac):
    rng = np.random.default_rng(7)
    for x, _, size in cases(nsp, seed=3):
        grid = rng.uniform(-1.6, 1.6, (x.shape[0],) + tuple(size) + (nsp,)).astype(np.float32)
        grid.reshape(-1)[:: 7] = np.round(grid.reshape(-1)[:: 7] * 4) / 4  # exact tap positions too
        want = F.grid_sample(torch.from_numpy(x), torch.from_numpy(grid), mode=mode, padding_mode=padding,
                             align_corners=bool(ac)).numpy()
        got = K.grid_sample(x, grid, mode, padding, ac, backend=backend_name)
        assert_within(got, want, sampled_grid_bound(x, grid, mode, padding, ac), f"{x.shape}->{size}")


@pytest.mark.parametrize("backend_name", BACKENDS, indirect=True)
@pytest.mark.parametrize("nsp", (2, 3))
@pytest.mark.parametrize("ac", (0, 1))
def test_affine_grid_matches_torch(backend_name, nsp, ac):
    # torch switches to BLAS for larger grids, which on FMA/AVX-512 hosts fuses x*t0 + y*t1
    # and lands an ulp away (measured: 0 of 35 values differ at 5x7, 15% at 17x33), so torch
    # gets the bound of two computations of theta @ base.  The order the kernels promise
    # (torch's unfused one) is held bit for bit against the numpy oracle's float32 evaluation:
    # a contracted multiply-add shows there.
    rng = np.random.default_rng(1)
    for size in [(1, 1, 1), (5, 1, 7), (3, 17, 33), (2, 64, 40)]:
        size = size[3 - nsp:]
        theta = (rng.normal(0, 1, (3, nsp, nsp + 1))).astype(np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = F.affine_grid(torch.from_numpy(theta), (3, 1) + size, align_corners=bool(ac)).numpy()
        got = K.affine_grid(theta, size, ac, backend=backend_name)
        assert got.shape == want.shape
        assert_within(got, want, affine_grid_bound(theta).reshape(3, *[1] * nsp, nsp), f"{size}")
        np.testing.assert_array_equal(got, oracle.affine_grid(theta, size, bool(ac)))


@pytest.mark.parametrize("backend_name", BACKENDS, indirect=True)
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("ac", (0, 1))
def test_nearest_ties_round_like_torch(backend_name, padding, ac):
    # Identity theta downsampling by 2 puts every coordinate on or next to a .5 tie.  Whether
    # torch's own grid lands on the tie or an ulp past it depends on its CPU path
    # (ATEN_CPU_CAPABILITY), so the rounding rule is held on torch's grid itself, and the fused
    # kernel bit for bit against the oracle's float32 evaluation of the unfused order.
    x = np.arange(2 * 16 * 20, dtype=np.float32).reshape(1, 2, 16, 20)
    theta = np.array([[[1, 0, 0], [0, 1, 0]]], np.float32)
    for size in [(8, 10), (5, 7), (32, 40)]:
        grid = F.affine_grid(torch.from_numpy(theta), (1, 2) + size, align_corners=bool(ac))
        want = F.grid_sample(torch.from_numpy(x), grid, mode="nearest", padding_mode=padding,
                             align_corners=bool(ac)).numpy()
        got = K.grid_sample(x, grid.numpy(), "nearest", padding, ac, backend=backend_name)
        np.testing.assert_array_equal(got, want)
        fused = K.fused_grid_sample(x, theta, size, "nearest", padding, ac, backend=backend_name)
        np.testing.assert_array_equal(fused, oracle.fused_grid_sample(x, theta, size, "nearest", padding, bool(ac)))


@pytest.mark.parametrize("backend_name", ("numpy", "cpp"), indirect=True)
@pytest.mark.parametrize("nsp,mode,padding,ac", [c for c in COMBOS if True])
def test_float16_computes_in_float32(backend_name, nsp, mode, padding, ac):
    # Reference: torch in float32 on the float16 values; only the output's rounding differs.
    for x, theta, size in cases(nsp, seed=11)[:4]:
        xh, th = x.astype(np.float16), theta.astype(np.float16)
        got = K.fused_grid_sample(xh, th, size, mode, padding, ac, backend=backend_name)
        assert got.dtype == np.float16
        assert_equals_torch(got, xh, th, size, mode, padding, ac)
        grid = K.affine_grid(th, size, ac, backend=backend_name)
        ref = K.affine_grid(th.astype(np.float32), size, ac, backend="cpp")
        np.testing.assert_array_equal(grid, ref.astype(np.float16))  # float32 math, one rounding


def test_oracle_in_float64_matches_torch_in_float64():
    for nsp, mode, padding, ac in COMBOS:
        for x, theta, size in cases(nsp, seed=5)[:3]:
            want = torch_fused(x.astype(np.float64), theta.astype(np.float64), size, mode, padding, ac)
            got = K.fused_grid_sample(x.astype(np.float64), theta.astype(np.float64), size, mode, padding, ac)
            assert got.dtype == np.float64
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-10, err_msg=f"{nsp} {mode} {padding} {ac}")


@pytest.mark.parametrize("backend_name", BACKENDS, indirect=True)
@pytest.mark.parametrize("mode", MODES_2D)
@pytest.mark.parametrize("padding", PADDINGS)
def test_huge_coordinates(backend_name, mode, padding):
    # Finite but far outside: as torch's CUDA kernels (torch's CPU ones disagree), with zero
    # padding they sample nothing (0); padding that clips puts them on the border, as torch.
    x = np.random.default_rng(0).random((1, 2, 5, 6)).astype(np.float32)
    big = [1e30, -3e9, 1e7, -2.5e6]
    if padding == "reflection":  # torch's vectorised fold rounds otherwise for huge x: many folds
        big = [40.3, -77.7, 1000.1]
    grid = np.array([[[[v, 0.1] for v in big] + [[0.1, v] for v in big] + [[0.3, -0.2]]]], np.float32)
    got = K.grid_sample(x, grid, mode, padding, False, backend=backend_name)
    want = F.grid_sample(torch.from_numpy(x), torch.from_numpy(grid), mode=mode, padding_mode=padding,
                         align_corners=False).numpy()
    if padding == "zeros" and mode != "bicubic":
        want = np.where(np.isnan(want), 0, want)
    # a coordinate past the image reads no tap (zeros) or exactly the border one: the bound of
    # one two pixels out holds it (the bound of the huge coordinate itself would hold nothing)
    near = grid if padding == "reflection" else np.clip(grid, -2, 2)
    assert_within(got, want, sampled_grid_bound(x, near, mode, padding, False))


@pytest.mark.parametrize("backend_name", BACKENDS, indirect=True)
@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS)
def test_non_finite_coordinates_read_as_minus_one(backend_name, nsp, mode, padding, ac):
    # Decided (csrc/surgeon_kernels.h): NaN and +-Inf normalised coordinates are read as -1,
    # as onnxruntime does (tests/ort/test_non_finite.py); the point's other coordinates stand.
    rng = np.random.default_rng(nsp + ac)
    x, _, size = cases(nsp, seed=2)[0]
    grid = rng.uniform(-1.2, 1.2, (x.shape[0],) + tuple(size) + (nsp,)).astype(np.float32)
    flat = grid.reshape(-1)
    flat[rng.choice(flat.size, flat.size // 3, replace=False)] = rng.choice([np.nan, np.inf, -np.inf], flat.size // 3)
    got = K.grid_sample(x, grid, mode, padding, ac, backend=backend_name)
    want = K.grid_sample(x, np.where(np.isfinite(grid), grid, -1).astype(np.float32), mode, padding, ac,
                         backend=backend_name)
    np.testing.assert_array_equal(got, want)
    assert np.isfinite(got).all()
    theta = np.array([[[np.nan, 0.1, 0.2], [0.3, 1.0, -0.1]], [[0.9, 0.1, 0.0], [0.0, np.inf, -np.inf]]], np.float32)
    theta = theta if nsp == 2 else np.concatenate([theta, np.zeros_like(theta[:, :, :1])], 2)[:, [0, 1, 1]]
    got = K.fused_grid_sample(x, theta, size, mode, padding, ac, backend=backend_name)
    grid = K.affine_grid(theta, size, ac, backend="numpy")
    want = K.grid_sample(x, np.where(np.isfinite(grid), grid, -1).astype(np.float32), mode, padding, ac,
                         backend=backend_name)
    np.testing.assert_array_equal(got, want)
