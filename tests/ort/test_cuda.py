"""The op library's CUDA-provider kernels, on a GPU (benchmarks/gpu_check.sh runs this where one
is lent; skipped without a GPU or onnxruntime's CUDA provider).  Sessions refuse to fall back to
the CPU, so every custom node runs on CUDA; results against the CPU library's."""

import numpy as np
import onnxruntime as ort
import pytest

import surgeon_ops.kernels as K
import surgeon_ops.ort

from ..builders import F16, affine_grid_model, fused_grid_sample_model
from ..kernels.cases import COMBOS, cases

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or "CUDAExecutionProvider" not in ort.get_available_providers(),
    reason="no CUDA device, or an onnxruntime without its CUDA provider")


def cuda_session(model):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.add_session_config_entry("session.disable_cpu_ep_fallback", "1")  # every node on CUDA, or fail
    major, minor = torch.cuda.get_device_capability()
    path = surgeon_ops.ort.library_path("cuda", [f"sm_{major}{minor}"])
    opts.register_custom_ops_library(path)
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CUDAExecutionProvider"])


@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS)
@pytest.mark.parametrize("size_input", [False, True], ids=["output_size", "size_input"])
def test_cuda_provider_matches_the_cpu(nsp, mode, padding, ac, size_input):
    for x, theta, out in cases(nsp, seed=5)[:4]:
        theta = np.ascontiguousarray(np.broadcast_to(theta, (x.shape[0],) + theta.shape[1:]))
        attrs = dict(mode=mode, padding_mode=padding, align_corners=ac)
        if not size_input:
            attrs["output_size"] = list(out)
        feeds = dict(x=x, theta=theta)
        if size_input:
            feeds["size"] = np.array(x.shape[:2] + tuple(out), np.int64)
        (y,) = cuda_session(fused_grid_sample_model(rank=nsp + 2, size_input=size_input, **attrs)).run(None, feeds)
        ref = K.fused_grid_sample(x, theta, out, mode, padding, ac)
        np.testing.assert_allclose(y, ref, rtol=0, atol=1e-6)


@pytest.mark.parametrize("nsp", [2, 3])
def test_cuda_provider_float16_and_affine_grid(nsp):
    x, theta, out = cases(nsp, seed=6)[0]
    xh, th = x.astype(np.float16), theta.astype(np.float16)
    (y,) = cuda_session(fused_grid_sample_model(rank=nsp + 2, x_type=F16, output_size=list(out))).run(
        None, dict(x=xh, theta=th))
    assert y.dtype == np.float16
    ref = K.fused_grid_sample(xh, th, out)
    assert np.abs(y.astype(np.float32) - ref.astype(np.float32)).max() <= 2e-3
    (grid,) = cuda_session(affine_grid_model(output_size=list(out), out_rank=nsp + 2)).run(None, dict(theta=theta))
    np.testing.assert_array_equal(grid, K.affine_grid(theta, out, 0))
