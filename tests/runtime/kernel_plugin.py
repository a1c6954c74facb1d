"""A pattern plugin that writes nothing and brings reference kernels, for ``--plugin`` tests."""

from surgeon import Pattern

from .toys import TEST_DOMAIN, scale_kernel, torch_affine_grid, torch_fused_grid_sample


def triple(inputs, attrs, device="cpu"):
    return [inputs[0] * 3]


class TorchKernels(Pattern):
    name = "test-torch-kernels"
    anchor_ops = ()
    kernels = {
        ("custom.ops", "FusedGridSample"): torch_fused_grid_sample,
        ("custom.ops", "AffineGrid"): torch_affine_grid,
        (TEST_DOMAIN, "Scale"): scale_kernel,
        (TEST_DOMAIN, "PluginOnly"): triple,
    }
