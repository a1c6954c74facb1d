from surgeon import CustomOp, PluginSet

from ..builders import SCALE_DOMAIN
from .reference_kernels import scale_kernel, torch_affine_grid, torch_fused_grid_sample

KERNELS = {
    ("custom.ops", "FusedGridSample"): torch_fused_grid_sample,
    ("custom.ops", "AffineGrid"): torch_affine_grid,
    (SCALE_DOMAIN, "Scale"): scale_kernel,
}

# The tests' own kernels (torch's pair as the reference), given to every call explicitly.
PLUGINS = PluginSet.of([], ops=[CustomOp(d, o, kernel=fn) for (d, o), fn in KERNELS.items()])
