"""Bad models and bad feeds give onnxruntime an error status with a clear message: attribute
errors when the session is created, input errors when it runs; never a crash."""

import numpy as np
import pytest

from ..builders import F16, F32, affine_grid_model, fused_grid_sample_model, with_empty_size_input
from .conftest import new_session
from .contract_cases import ATTRIBUTE_ERRORS


def x4(n=2, c=3, h=8, w=7, dtype=np.float32):
    return np.random.default_rng(0).random((n, c, h, w)).astype(dtype)


def theta2(n=2, dtype=np.float32):
    return np.tile(np.eye(2, 3, dtype=dtype), (n, 1, 1))


def run(model, **feeds):
    return new_session(model).run(None, feeds)


@pytest.mark.parametrize("attrs,message", ATTRIBUTE_ERRORS)
def test_attribute_errors_fail_the_session(attrs, message):
    with pytest.raises(Exception, match="custom.ops::FusedGridSample node 'fgs': " + message):
        new_session(fused_grid_sample_model(**attrs))


def test_both_output_size_and_size_input():
    with pytest.raises(Exception, match="has both an output_size attribute and a size input"):
        new_session(fused_grid_sample_model(size_input=True, output_size=[4, 4]))


def test_float16_x_with_float32_theta():
    with pytest.raises(Exception, match=r"theta is float32 but X is float16; "
                                        r"theta must have X's element type \(ops/OPS.md\)"):
        new_session(fused_grid_sample_model(x_type=F16, theta_type=F32, output_size=[4, 4]))


def test_affine_grid_attribute_errors():
    with pytest.raises(Exception, match="custom.ops::AffineGrid node 'ag': align_corners must be 0 or 1"):
        new_session(affine_grid_model(align_corners=5, output_size=[4, 4]))
    with pytest.raises(Exception, match="AffineGrid node 'ag': has neither an output_size attribute nor a size"):
        new_session(affine_grid_model())


@pytest.mark.parametrize("feeds,message", [
    (dict(x=np.zeros((2, 3, 8), np.float32), theta=theta2()), r"X must be 4-D \[N, C, H, W\] or 5-D"),
    (dict(x=x4(), theta=np.zeros((2, 3, 3), np.float32)), r"theta must have shape \[N, 2, 3\] for 2-D sampling, "
                                                          r"got \[2, 3, 3\]"),
    (dict(x=x4(), theta=np.zeros((2, 2), np.float32)), r"theta must have shape \[N, 2, 3\]"),
    (dict(x=x4(n=2), theta=theta2(n=3)), "theta has batch 3, X has 2"),
])
def test_input_errors_fail_the_run(feeds, message):
    model = fused_grid_sample_model(rank=len(feeds["x"].shape), output_size=[5, 6])
    with pytest.raises(Exception, match="custom.ops::FusedGridSample node 'fgs': " + message):
        run(model, **feeds)


def test_output_size_must_match_the_input_rank():
    x = np.zeros((1, 1, 3, 4, 5), np.float32)
    theta = np.tile(np.eye(3, 4, dtype=np.float32), (1, 1, 1))
    with pytest.raises(Exception, match=r"output_size has 2 values but the input is 3-D \(it needs 3\)"):
        run(fused_grid_sample_model(rank=5, output_size=[4, 4]), x=x, theta=theta)


def test_bicubic_refuses_a_volume():
    x = np.zeros((1, 1, 3, 4, 5), np.float32)
    theta = np.tile(np.eye(3, 4, dtype=np.float32), (1, 1, 1))
    model = fused_grid_sample_model(rank=5, size_input=True, mode="bicubic")
    with pytest.raises(Exception, match="bicubic mode is 2-D only"):
        run(model, x=x, theta=theta, size=np.array([1, 1, 2, 2, 2], np.int64))


@pytest.mark.parametrize("size,message", [
    ([3, 3, 4, 4], r"size \[3, 3, 4, 4\] has batch 3, the inputs have 2"),
    ([2, 5, 4, 4], r"size \[2, 5, 4, 4\] has 5 channels, X has 3"),
    ([2, 3, 4], r"size must be an int64 tensor of 4 values \[N, C, H_out, W_out\], got shape \[3\]"),
    ([2, 3, -4, 4], "has a negative dimension"),
])
def test_a_size_input_that_disagrees(size, message):
    model = fused_grid_sample_model(size_input=True)
    with pytest.raises(Exception, match=message):
        run(model, x=x4(), theta=theta2(), size=np.array(size, np.int64))


def test_affine_grid_input_errors():
    model = affine_grid_model(size_input=True)
    with pytest.raises(Exception, match=r"AffineGrid node 'ag': theta must have shape \[N, 2, 3\] or \[N, 3, 4\]"):
        run(model, theta=np.zeros((2, 4, 4), np.float32), size=np.array([2, 1, 3, 3], np.int64))
    with pytest.raises(Exception, match=r"size \[3, 1, 3, 3\] has batch 3, the inputs have 2"):
        run(model, theta=theta2(), size=np.array([3, 1, 3, 3], np.int64))
    with pytest.raises(Exception, match="size must be an int64 tensor of 5 values"):
        run(model, theta=np.zeros((2, 3, 4), np.float32), size=np.array([2, 1, 3, 3], np.int64))


def test_an_empty_name_for_the_optional_size_input_is_no_size_input():
    model = with_empty_size_input(fused_grid_sample_model(output_size=[5, 6]))
    (y,) = run(model, x=x4(), theta=theta2())
    assert y.shape == (2, 3, 5, 6)


def test_a_failed_run_leaves_the_session_usable():
    sess = new_session(fused_grid_sample_model(output_size=[5, 6]))
    with pytest.raises(Exception, match="theta has batch 3"):
        sess.run(None, dict(x=x4(), theta=theta2(n=3)))
    assert sess.run(None, dict(x=x4(), theta=theta2()))[0].shape == (2, 3, 5, 6)
