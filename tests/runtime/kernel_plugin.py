"""A pattern plugin that writes nothing and brings reference kernels, for ``--plugin`` tests."""

from surgeon import CustomOp, Pattern

from ..builders import SCALE_DOMAIN
from .reference_kernels import scale_kernel, torch_affine_grid, torch_fused_grid_sample


def triple(inputs, attrs, device="cpu"):
    return [inputs[0] * 3]


class TorchKernels(Pattern):
    name = "test-torch-kernels"
    anchor_ops = ()
    ops = [
        CustomOp("custom.ops", "FusedGridSample", kernel=torch_fused_grid_sample),
        CustomOp("custom.ops", "AffineGrid", kernel=torch_affine_grid),
        CustomOp(SCALE_DOMAIN, "Scale", kernel=scale_kernel),
        CustomOp(SCALE_DOMAIN, "PluginOnly", kernel=triple),
    ]
