"""Bad arguments raise torch-style errors (ValueError for values, RuntimeError for tensors that do
not go together, TypeError for wrong kinds), with a message naming the problem; never a crash."""

import pytest
import torch

import surgeon_ops.torch as st

from .cases import image, theta

X, T = image((2, 3, 6, 7)), theta(2, 2)
X3, T3 = image((2, 1, 3, 4, 5)), theta(2, 3)


@pytest.mark.parametrize("call,error,message", [
    (lambda: st.fused_grid_sample(X, theta(2, 3)), ValueError, r"shape Nx2x3, got theta of shape \[2, 3, 4\]"),
    (lambda: st.fused_grid_sample(X, T[:, :, :2]), ValueError, r"Nx2x3"),
    (lambda: st.fused_grid_sample(X, T[0]), ValueError, r"Nx2x3"),
    (lambda: st.affine_grid(torch.rand(2, 3, 3), [2, 1, 4, 4]), ValueError, r"affine matrices"),
    (lambda: st.fused_grid_sample(X3, T3, mode="bicubic"), RuntimeError, r"bicubic interpolation only supports 4D"),
    (lambda: st.fused_grid_sample(X, T.double()), RuntimeError, r"same dtype.*float32 and torch.float64"),
    (lambda: st.fused_grid_sample(X.half(), T), RuntimeError, r"same dtype"),
    (lambda: st.fused_grid_sample(X.int(), T.int()), RuntimeError, r"float32 or float16"),
    (lambda: st.fused_grid_sample(X, T.to("meta")), RuntimeError, r"same device, got cpu and meta"),
    (lambda: st.fused_grid_sample(X, theta(3, 2)), RuntimeError, r"same batch size.*got 3 and 2"),
    (lambda: st.fused_grid_sample(X, T, [3, 3, 4, 4]), RuntimeError, r"size\[0\] must equal theta's batch"),
    (lambda: st.fused_grid_sample(X, T, mode="cubic"), ValueError, r"mode to be 'bilinear', 'nearest' or 'bicubic'"),
    (lambda: st.fused_grid_sample(X, T, padding_mode="wrap"), ValueError, r"padding_mode"),
    (lambda: st.fused_grid_sample(X, T, align_corners="yes"), ValueError, r"align_corners"),
    (lambda: st.fused_grid_sample(X, T, [2, 3, 4]), ValueError, r"size must have 4 values"),
    (lambda: st.fused_grid_sample(X, T, [2, 3, 0, 4]), ValueError, r"positive output size"),
    (lambda: st.fused_grid_sample(X, T, torch.tensor([4, 4])), TypeError, r"not a Tensor"),
    (lambda: st.fused_grid_sample(X, T, [4.5, 4]), TypeError, r"size must hold ints"),
    (lambda: st.fused_grid_sample(X[0], T), ValueError, r"x must be 4-D"),
    (lambda: st.fused_grid_sample(X.numpy(), T), TypeError, r"x must be a Tensor"),
    (lambda: st.fused_grid_sample(image((2, 3, 0, 4)), T), RuntimeError, r"non-empty spatial dims"),
])
def test_bad_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_the_raw_operators_refuse_bad_arguments_too():
    with pytest.raises((ValueError, RuntimeError)):
        torch.ops.surgeon.fused_grid_sample(X, theta(2, 3), [4, 4], "bilinear", "zeros", False)
    with pytest.raises((ValueError, RuntimeError)):
        torch.ops.surgeon.fused_grid_sample(X3, T3, [2, 2, 2], "bicubic", "zeros", False)
    with pytest.raises((ValueError, RuntimeError)):
        torch.ops.surgeon.affine_grid(T, [4, 4, 4], False)


def test_meta_tensors_give_shapes_only():
    y = st.fused_grid_sample(X.to("meta"), T.to("meta"), [2, 3, 4, 9])
    assert y.device.type == "meta" and y.shape == (2, 3, 4, 9)
    assert st.affine_grid(T3.to("meta"), [2, 1, 3, 4, 5]).shape == (2, 3, 4, 5, 3)
