"""The plugins' enqueue on a real GPU (skipped without one): device pointers and a stream as
TensorRT hands them over, the CUDA library built with nvcc, results equal to the reference.
TensorRT itself is not needed: the stand-in calls the plugins as TensorRT's enqueue does."""

import numpy as np
import pytest

from surgeon_ops.kernels import fused_grid_sample

from .profiles import profile_node, thetas

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


class DeviceTensor:
    """What TensorRT's Python plugin API passes to impl: data_ptr, shape, dtype."""

    def __init__(self, t, dtype):
        self.t, self.dtype, self.shape, self.data_ptr = t, dtype, tuple(t.shape), t.data_ptr()


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("half", [False, True])
def test_enqueue_on_the_gpu(trt, mode, half):
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (2, 3, 33, 40)).astype(np.float16 if half else np.float32)
    theta = thetas(2, 2, rng).astype(x.dtype)
    plugin, attrs = trt.parse(profile_node(align_corners=0, mode=mode, padding_mode="reflection",
                                           output_size=[31, 45]))
    dtype = trt.trt.float16 if half else trt.trt.float32
    xd, td = torch.from_numpy(x).cuda(), torch.from_numpy(theta).cuda()
    y = torch.full((2, 3, 31, 45), float("nan"), dtype=xd.dtype, device="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        plugin.enqueue([DeviceTensor(xd, dtype), DeviceTensor(td, dtype)], attrs, [DeviceTensor(y, dtype)],
                       stream=stream.cuda_stream)
    stream.synchronize()
    want = fused_grid_sample(x, theta, [31, 45], mode, "reflection", False, backend="numpy")
    np.testing.assert_allclose(y.float().cpu().numpy(), want.astype(np.float32), atol=3e-3 if half else 2e-5)
