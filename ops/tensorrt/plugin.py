"""The two plugins, defined with TensorRT's Python plugin API (``tensorrt.plugin``, TensorRT >= 10.6):
``NAMESPACE::FusedGridSample`` and ``NAMESPACE::AffineGridPlugin``, each a shape function
(dims.py), the formats it runs (float32 or float16, dense) and an enqueue calling the project's
CUDA launchers (launch.py).

No ``from __future__ import annotations`` here: the plugin API reads the annotations as
objects (TensorDesc inputs first, then typed attributes).
"""

from typing import Tuple

import numpy as np
import numpy.typing as npt

from . import dims, launch

# TensorRT's DataType -> the kernels' dtype code (surgeon_kernels.h), filled per module given.
_CODES = ("float32", 0), ("float16", 1)
# Every int attribute is an int32 array: the parser hands INT over as a 1-element int32 field, and
# the plugin API's `int(field)` of it fails on NumPy >= 2.4 (a 1-D array is no scalar there).
Ints = npt.NDArray[np.int32]


def define(trt, trtp, namespace: str) -> list[str]:
    """Registers both plugins with ``trtp`` (``tensorrt.plugin``) under ``namespace``; returns
    their ids. ``trt`` is the ``tensorrt`` module (its data types)."""
    codes = {getattr(trt, name): code for name, code in _CODES}

    def code(dtype) -> int:
        if dtype not in codes:
            raise ValueError(f"surgeon plugins run float32 and float16 only, not {dtype}")
        return codes[dtype]

    fused, grid = f"{namespace}::FusedGridSample", f"{namespace}::AffineGridPlugin"

    @trtp.register(fused)
    def fused_shape(x: trtp.TensorDesc, theta: trtp.TensorDesc, align_corners: Ints, mode: str, padding_mode: str,
                    output_size: Ints) -> trtp.TensorDesc:
        dims.padding(padding_mode), dims.flag(align_corners)  # a bad attribute fails the build, not a run
        return trtp.from_shape_expr(tuple(dims.fused_dims(x.shape_expr, output_size, mode)), dtype=x.dtype)

    @trtp.autotune(fused)
    def fused_formats(x: trtp.TensorDesc, theta: trtp.TensorDesc,
                      outputs: Tuple[trtp.TensorDesc]) -> list[trtp.AutoTuneCombination]:
        return [trtp.AutoTuneCombination("FP32|FP16, FP32|FP16, FP32|FP16", "LINEAR")]

    @trtp.impl(fused)
    def fused_run(x: trtp.Tensor, theta: trtp.Tensor, align_corners: Ints, mode: str, padding_mode: str,
                  output_size: Ints, outputs: Tuple[trtp.Tensor], stream: int) -> None:
        launch.fused_grid_sample(code(x.dtype), x.data_ptr, theta.data_ptr, outputs[0].data_ptr, tuple(x.shape),
                                 tuple(theta.shape)[0], [int(v) for v in output_size], dims.mode(mode),
                                 dims.padding(padding_mode), dims.flag(align_corners), stream)

    @trtp.register(grid)
    def grid_shape(theta: trtp.TensorDesc, align_corners: Ints,
                   output_size: Ints) -> trtp.TensorDesc:
        dims.flag(align_corners)
        return trtp.from_shape_expr(tuple(dims.grid_dims(theta.shape_expr, output_size)), dtype=theta.dtype)

    @trtp.autotune(grid)
    def grid_formats(theta: trtp.TensorDesc, outputs: Tuple[trtp.TensorDesc]) -> list[trtp.AutoTuneCombination]:
        return [trtp.AutoTuneCombination("FP32|FP16, FP32|FP16", "LINEAR")]

    @trtp.impl(grid)
    def grid_run(theta: trtp.Tensor, align_corners: Ints, output_size: Ints,
                 outputs: Tuple[trtp.Tensor], stream: int) -> None:
        launch.affine_grid(code(theta.dtype), theta.data_ptr, outputs[0].data_ptr, tuple(theta.shape)[0],
                           [int(v) for v in output_size], dims.flag(align_corners), stream)

    return [fused, grid]
