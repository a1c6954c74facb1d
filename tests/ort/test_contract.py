"""The op library against ops/OPS.md: every attribute, both arities, float32 and float16, 2-D and
3-D.  It runs the kernels' own code, so it must give surgeon_ops.kernels' bits exactly (which the
kernel tests compare with torch)."""

import os
import threading

import numpy as np
import pytest

import surgeon_ops.kernels as K

from ..builders import F16, fused_grid_sample_case_model, fused_grid_sample_model
from ..kernels.cases import COMBOS, cases
from .conftest import new_session
from .contract_cases import affine_grid_cases


@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS)
@pytest.mark.parametrize("size_input", [False, True], ids=["output_size", "size_input"])
def test_fused_grid_sample_gives_the_kernels_bits(nsp, mode, padding, ac, size_input):
    for x, theta, out in cases(nsp)[:4]:
        theta = np.ascontiguousarray(np.broadcast_to(theta, (x.shape[0],) + theta.shape[1:]))
        sess = new_session(fused_grid_sample_case_model(nsp, mode, padding, ac, size_input, out))
        feeds = dict(x=x, theta=theta)
        if size_input:
            feeds["size"] = np.array(x.shape[:2] + tuple(out), np.int64)
        (y,) = sess.run(None, feeds)
        np.testing.assert_array_equal(y, K.fused_grid_sample(x, theta, out, mode, padding, ac))


@pytest.mark.parametrize("nsp", [2, 3])
def test_float16(nsp):
    x, theta, out = cases(nsp, seed=3)[0]
    x, theta = x.astype(np.float16), theta.astype(np.float16)
    for mode in ("bilinear", "nearest") + (("bicubic",) if nsp == 2 else ()):
        model = fused_grid_sample_case_model(nsp, mode, "border", 0, False, out, F16)
        (y,) = new_session(model).run(None, dict(x=x, theta=theta))
        assert y.dtype == np.float16
        np.testing.assert_array_equal(y, K.fused_grid_sample(x, theta, out, mode, "border", 0))


@pytest.mark.parametrize("nsp", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("size_input", [False, True], ids=["output_size", "size_input"])
def test_affine_grid_gives_the_kernels_bits(nsp, dtype, size_input):
    for model, feeds, want in affine_grid_cases(nsp, dtype, size_input):
        (grid,) = new_session(model).run(None, feeds)
        np.testing.assert_array_equal(grid, want)


def test_empty_outputs():
    x, theta = np.ones((2, 3, 4, 4), np.float32), np.tile(np.eye(2, 3, dtype=np.float32), (2, 1, 1))
    (y,) = new_session(fused_grid_sample_model(output_size=[0, 5])).run(None, dict(x=x, theta=theta))
    assert y.shape == (2, 3, 0, 5)
    (y,) = new_session(fused_grid_sample_model(output_size=[3, 5])).run(None, dict(x=x[:0], theta=theta[:0]))
    assert y.shape == (0, 3, 3, 5)


def test_many_sessions_in_one_process(library):
    x, theta, out = cases(2)[0]
    want = K.fused_grid_sample(x, theta, out)
    sessions = [new_session(fused_grid_sample_model(output_size=list(out))) for _ in range(20)]
    for sess in sessions:
        np.testing.assert_array_equal(sess.run(None, dict(x=x, theta=theta))[0], want)
    del sessions
    results = [None] * 8

    def work(i):  # sessions made and run from several threads at once
        results[i] = new_session(fused_grid_sample_model(output_size=list(out)), threads=2).run(None, dict(x=x, theta=theta))[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(results))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for y in results:
        np.testing.assert_array_equal(y, want)


def native_threads() -> set[str]:
    """The process's threads' ids (ones that end meanwhile, another test's, do not matter)."""
    return set(os.listdir("/proc/self/task"))


def test_threads_are_onnxruntimes():
    """The kernels run on the session's intra-op threads: with one, no thread is added; with
    more, the bits are the same."""
    if not os.path.isdir("/proc/self/task"):
        pytest.skip("counting a process's threads needs Linux's /proc")
    rng = np.random.default_rng(0)
    x = rng.random((4, 3, 256, 256), dtype=np.float32)
    theta = np.tile(np.array([[0.9, 0.2, 0.05], [-0.15, 0.95, -0.1]], np.float32), (4, 1, 1))
    model = fused_grid_sample_model(output_size=[256, 256])
    one = new_session(model, threads=1)
    before = native_threads()
    (y1,) = one.run(None, dict(x=x, theta=theta))
    assert native_threads() <= before  # none started
    (y2,) = new_session(model, threads=2).run(None, dict(x=x, theta=theta))
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(y1, K.fused_grid_sample(x, theta, (256, 256)))
