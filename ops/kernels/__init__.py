"""Reference kernels of custom.ops::AffineGrid and custom.ops::FusedGridSample (ops/OPS.md).

    affine_grid(theta, output_size, align_corners=False)
    fused_grid_sample(x, theta, output_size, mode="bilinear", padding_mode="zeros", align_corners=False)
    grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)

Semantics are torch's F.affine_grid / F.grid_sample.  numpy in -> numpy out (the C++ CPU
kernel); torch tensors in -> a tensor on their device (CUDA kernel on a GPU).  A theta batch
of 1 is broadcast over x's batch.  Keywords `backend` ("auto", "numpy", "cpp", "cuda") and
`num_threads` (CPU; default $SURGEON_NUM_THREADS, else all CPUs) are optional.

Three implementations: `surgeon_ops.kernels.oracle` (readable numpy, float64-capable), a C++
CPU kernel and CUDA kernels sharing one header of sampling math (csrc/), compiled when the
package is installed (CMakeLists.txt; LibraryNotInstalled when one is missing, e.g. the CUDA
library of an install made without nvcc).  The C ABI an engine plugin calls is documented in
csrc/surgeon_kernels.h.  torch is imported only when torch tensors are passed in.
"""

from .api import affine_grid, fused_grid_sample, grid_sample
from .installed import LibraryNotInstalled

__all__ = ["affine_grid", "fused_grid_sample", "grid_sample", "LibraryNotInstalled"]
