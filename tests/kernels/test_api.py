"""The public functions: argument checks, names, dtypes, frameworks, broadcast."""

import subprocess
import sys

import numpy as np
import pytest

import surgeon_ops.kernels as K

X2 = np.random.default_rng(0).random((2, 3, 6, 7)).astype(np.float32)
T2 = np.array([[[1, 0.1, 0], [0, 0.9, 0.1]]] * 2, np.float32)


@pytest.mark.parametrize("call, message", [
    (lambda: K.fused_grid_sample(X2[0], T2, (4, 4)), "x must be 4-D"),
    (lambda: K.fused_grid_sample(X2, T2[:, :, :2], (4, 4)), r"theta must have shape \[N, 2, 3\]"),
    (lambda: K.fused_grid_sample(X2[None], T2, (4, 4, 4)), r"theta must have shape \[N, 3, 4\]"),
    (lambda: K.fused_grid_sample(X2, np.concatenate([T2, T2[:1]]), (4, 4)), "theta batch 3"),
    (lambda: K.fused_grid_sample(X2, T2, (4, 4, 4)), "output_size must have 2"),
    (lambda: K.fused_grid_sample(X2, T2, (2, 5, 4, 4)), "has 5 channels"),
    (lambda: K.fused_grid_sample(X2, T2, (3, 3, 4, 4)), "has batch 3"),
    (lambda: K.fused_grid_sample(X2, T2, (4, -1)), "must not be negative"),
    (lambda: K.fused_grid_sample(X2, T2, (4, 4), mode="area"), "unknown mode 'area'"),
    (lambda: K.fused_grid_sample(X2, T2, (4, 4), padding_mode="wrap"), "unknown padding_mode"),
    (lambda: K.fused_grid_sample(X2, T2, (4, 4), align_corners=2), "align_corners"),
    (lambda: K.fused_grid_sample(X2.astype(np.int32), T2, (4, 4)), "float16 or float32"),
    (lambda: K.fused_grid_sample(np.zeros((1, 1, 2, 2, 2), np.float32), np.zeros((1, 3, 4), np.float32),
                                 (2, 2, 2), mode="bicubic"), "bicubic mode is 2-D only"),
    (lambda: K.fused_grid_sample(X2, T2, (4, 4), backend="cuda"), "needs torch CUDA tensors"),
    (lambda: K.fused_grid_sample(X2.astype(np.float64), T2, (4, 4), backend="cpp"), "only supported by backend='numpy'"),
    (lambda: K.fused_grid_sample(X2, T2, (4, 4), backend="gpu"), "unknown backend"),
    (lambda: K.fused_grid_sample(X2, T2, (4, 4), num_threads=0), "num_threads"),
    (lambda: K.affine_grid(np.zeros((1, 2, 2), np.float32), (4, 4)), r"theta must have shape \[N, 2, 3\] or \[N, 3, 4\]"),
    (lambda: K.grid_sample(X2, np.zeros((2, 4, 4, 3), np.float32)), r"grid must have shape \[N, H_out, W_out, 2\]"),
    (lambda: K.grid_sample(X2, np.zeros((3, 4, 4, 2), np.float32)), "grid batch 3"),
    (lambda: K.grid_sample(np.zeros((1, 1, 0, 3), np.float32), np.zeros((1, 2, 2, 2), np.float32)), "non-empty spatial"),
])
def test_bad_arguments_raise_one_line_value_errors(call, message):
    with pytest.raises(ValueError, match=message) as info:
        call()
    assert "\n" not in str(info.value)


def test_opset20_and_bytes_mode_names():
    for alias, name in (("linear", "bilinear"), ("cubic", "bicubic"), (b"nearest", "nearest")):
        np.testing.assert_array_equal(K.fused_grid_sample(X2, T2, (5, 5), alias), K.fused_grid_sample(X2, T2, (5, 5), name))


def test_theta_batch_one_is_broadcast():
    one = K.fused_grid_sample(X2, T2[:1], (5, 4))
    for n in range(2):
        np.testing.assert_array_equal(one[n:n + 1], K.fused_grid_sample(X2[n:n + 1], T2[:1], (5, 4)))


def test_torch_full_size_is_accepted():
    np.testing.assert_array_equal(K.fused_grid_sample(X2, T2, (2, 3, 5, 4)), K.fused_grid_sample(X2, T2, [5, 4]))
    np.testing.assert_array_equal(K.affine_grid(T2, np.array([2, 1, 5, 4])), K.affine_grid(T2, (5, 4)))


def test_theta_takes_x_dtype_and_inputs_may_be_strided():
    t64 = T2.astype(np.float64)
    np.testing.assert_array_equal(K.fused_grid_sample(X2, t64, (5, 4)), K.fused_grid_sample(X2, T2, (5, 4)))
    wide = np.zeros((2, 3, 6, 14), np.float32)
    wide[..., ::2] = X2
    np.testing.assert_array_equal(K.fused_grid_sample(wide[..., ::2], T2, (5, 4)), K.fused_grid_sample(X2, T2, (5, 4)))


def test_empty_batch_and_empty_output():
    assert K.fused_grid_sample(X2[:0], T2[:1], (5, 4)).shape == (0, 3, 5, 4)
    assert K.fused_grid_sample(X2, T2, (0, 4)).shape == (2, 3, 0, 4)
    assert K.affine_grid(T2[:0], (3, 3)).shape == (0, 3, 3, 2)


def test_numpy_outputs_start_on_a_cache_line():
    """np.empty's placement varies (16 bytes into a line on fresh pages), which split every other
    32-byte store of the kernels (nearest 1.15-1.25x the time): outputs of 4 KiB on are aligned."""
    from surgeon_ops.kernels._frames import aligned_empty

    for _ in range(3):  # whatever malloc returns underneath
        y = K.fused_grid_sample(X2, T2, (128, 96), mode="nearest")  # mmap'd, without the alignment
        assert y.ctypes.data % 64 == 0 and y.flags.c_contiguous and y.flags.writeable and y.shape == (2, 3, 128, 96)
        assert K.affine_grid(T2, (32, 40)).ctypes.data % 64 == 0
    small = aligned_empty((2, 3), np.float32)
    assert small.shape == (2, 3) and small.dtype == np.float32
    assert aligned_empty((0, 5000), np.float16).shape == (0, 5000)


def test_torch_in_torch_out_on_cpu():
    torch = pytest.importorskip("torch")
    y = K.fused_grid_sample(torch.from_numpy(X2), torch.from_numpy(T2), (5, 4), "bicubic")
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32 and y.device.type == "cpu"
    np.testing.assert_array_equal(y.numpy(), K.fused_grid_sample(X2, T2, (5, 4), "bicubic"))
    g = K.affine_grid(torch.from_numpy(T2).half(), (5, 4))
    assert isinstance(g, torch.Tensor) and g.dtype == torch.float16
    y64 = K.fused_grid_sample(torch.from_numpy(X2).double(), torch.from_numpy(T2), (5, 4))
    assert y64.dtype == torch.float64  # float64 goes to the numpy oracle
    ys = K.grid_sample(torch.from_numpy(X2).requires_grad_(), torch.from_numpy(g.float().numpy()))
    assert not ys.requires_grad


def test_torch_inputs_strided_needing_grad_or_of_another_dtype():
    torch = pytest.importorskip("torch")
    want = K.fused_grid_sample(X2, T2, (5, 4))
    wide = torch.zeros(2, 3, 6, 14)
    wide[..., ::2] = torch.from_numpy(X2)
    x = wide[..., ::2].requires_grad_()
    theta = torch.from_numpy(T2).double()
    y = K.fused_grid_sample(x, theta, (5, 4))
    assert y.dtype == torch.float32 and not y.requires_grad
    np.testing.assert_array_equal(y.numpy(), want)
    assert theta.dtype == torch.float64 and not x.is_contiguous()  # the caller's tensors untouched


def test_importing_the_kernels_does_not_import_torch():
    code = ("import sys, surgeon; before = 'torch' in sys.modules; import surgeon_ops.kernels; "
            "import surgeon_ops.kernels.oracle, surgeon_ops.kernels.native; "
            "assert ('torch' in sys.modules) == before, 'surgeon_ops.kernels imported torch'")
    subprocess.run([sys.executable, "-c", code], check=True)
