"""The operators on CUDA tensors (a GPU machine: benchmarks/gpu_check.sh): the CUDA kernels on
torch's current stream, float32/float16, gradients, torch.compile, device mismatches."""

import pytest
import torch

import surgeon_ops.torch as st

from .cases import COMBOS, assert_equals_torch, assert_gradients_equal_torch, image, shapes, theta

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="needs a CUDA device (torch.cuda.is_available() is False)")


@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS)
def test_cuda_equals_torch_on_the_gpu(nsp, mode, padding, ac):
    for i, (shape, out) in enumerate(shapes(nsp)):
        x, t = image(shape, seed=i, device="cuda"), theta(shape[0], nsp, seed=i, device="cuda")
        size = shape[:2] + out
        got = st.fused_grid_sample(x, t, size, mode, padding, ac)
        assert got.is_cuda and got.dtype == torch.float32
        assert_equals_torch(got, x.cpu(), t.cpu(), size, mode, padding, ac, f"{shape} -> {out}")
        half = st.fused_grid_sample(x.half(), t.half(), size, mode, padding, ac)
        assert half.dtype == torch.float16
        assert_equals_torch(half, x.half().cpu(), t.half().cpu(), size, mode, padding, ac, f"float16 {shape} -> {out}")


def test_runs_on_the_current_stream():
    x, t = image((4, 3, 256, 256), device="cuda"), theta(4, 2, device="cuda")
    want = st.fused_grid_sample(x, t)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        x2 = x * 1  # queued on the side stream; the op must run after it, on the same stream
        got = st.fused_grid_sample(x2, t)
    torch.cuda.current_stream().wait_stream(stream)
    assert torch.equal(got, want)


@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS[::4])
def test_cuda_gradients_equal_torch(nsp, mode, padding, ac):
    assert_gradients_equal_torch(nsp, mode, padding, ac, device="cuda")


def test_cuda_compile_fullgraph_and_cpu_agreement():
    torch._dynamo.reset()
    fn = torch.compile(lambda x, t: st.fused_grid_sample(x, t, x.size(), "bilinear", "border") * 2, fullgraph=True,
                       dynamic=True)
    x, t = image((3, 3, 33, 17)), theta(3, 2)
    got = fn(x.cuda(), t.cuda())
    assert (got.cpu() - st.fused_grid_sample(x, t, x.size(), "bilinear", "border") * 2).abs().max() <= 1e-5


def test_mismatched_devices_are_refused():
    with pytest.raises(RuntimeError, match="same device"):
        st.fused_grid_sample(image((1, 1, 4, 4), device="cuda"), theta(1, 2))
    with pytest.raises(RuntimeError, match="CPU only"):
        st.fused_grid_sample(image((1, 1, 4, 4), device="cuda").double(), theta(1, 2, device="cuda").double())
