"""surgeon.torch: custom.ops::FusedGridSample and AffineGrid as torch operators.

    fused_grid_sample(x, theta, size=None, mode="bilinear", padding_mode="zeros", align_corners=False)
    affine_grid(theta, size, align_corners=False)

The same results as F.grid_sample(x, F.affine_grid(theta, size)) and F.affine_grid, computed
by the compiled kernels of surgeon_ops.kernels (CPU: C++, CUDA: on torch's current stream),
registered as torch.ops.surgeon.fused_grid_sample / affine_grid with fake implementations
(torch.compile, torch.export) and autograd.  A plain torch.onnx.export(...) writes the
contract's node (ops/OPS.md) with either exporter: the node surgeon fuse writes for the
F.affine_grid + F.grid_sample spelling of the same model.

replace_grid_samplers(module) swaps the pair inside an existing model's forward.
onnx_translation_table (needs onnxscript; loaded on first use) is only for exporting an
ExportedProgram: torch.onnx.export(ep, ..., custom_translation_table=onnx_translation_table).
Map of the files: README.md here.
"""

from ._api import affine_grid, fused_grid_sample
from ._dropin import DropInReport, replace_grid_samplers

__all__ = ["fused_grid_sample", "affine_grid", "replace_grid_samplers", "DropInReport"]


def __getattr__(name):
    if name == "onnx_translation_table":  # onnxscript is imported only when asked for
        from ._onnx_table import onnx_translation_table

        return onnx_translation_table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
