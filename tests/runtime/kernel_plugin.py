"""A pattern plugin that writes nothing and brings reference kernels, for ``--plugin`` tests."""

from surgeon import CustomOp, Pattern

from .toys import TEST_DOMAIN, scale_kernel, torch_affine_grid, torch_fused_grid_sample


def triple(inputs, attrs, device="cpu"):
    return [inputs[0] * 3]


class TorchKernels(Pattern):
    name = "test-torch-kernels"
    anchor_ops = ()
    ops = [
        CustomOp("custom.ops", "FusedGridSample", kernel=torch_fused_grid_sample),
        CustomOp("custom.ops", "AffineGrid", kernel=torch_affine_grid),
        CustomOp(TEST_DOMAIN, "Scale", kernel=scale_kernel),
        CustomOp(TEST_DOMAIN, "PluginOnly", kernel=triple),
    ]
