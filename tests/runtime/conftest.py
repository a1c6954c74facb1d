import pytest

from surgeon.runtime import register_kernel, unregister_kernel

from .toys import TEST_DOMAIN, scale_kernel, torch_affine_grid, torch_fused_grid_sample

KERNELS = {
    ("custom.ops", "FusedGridSample"): torch_fused_grid_sample,
    ("custom.ops", "AffineGrid"): torch_affine_grid,
    (TEST_DOMAIN, "Scale"): scale_kernel,
}


@pytest.fixture(autouse=True)
def test_kernels():
    """The tests' own kernels win over whatever plugins are installed, and are gone afterwards."""
    for (domain, op), fn in KERNELS.items():
        register_kernel(domain, op, fn)
    yield
    for domain, op in KERNELS:
        unregister_kernel(domain, op)
