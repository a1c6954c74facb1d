"""The original's size-1 coordinate, written as a theta the contract's op reads the same way.

With align_corners=1 the single coordinate of a size-1 dim is 0 in torch (the contract), -1 in
ONNX's reference and +1 in onnxruntime's AffineGrid. Where the original puts it at c, its grid is
theta @ (..., c, ..., 1) and the op's theta' @ (..., 0, ..., 1), so theta' = theta @ T with
T = I + c E[col, k] (col: the dim's coordinate, k: the translation). For a static dim of 1, T
is a constant; for a dynamic dim, its entry is c * (dim == 1) at run time.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from surgeon.recognise import Fixed


def compensate(writer, theta: str, elem: int, batch) -> str:
    """theta @ T for the plan's size-1 coordinates (static dims of 1; dynamic dims when 1)."""
    plan, k = writer.plan, writer.plan.k
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    base = np.eye(k + 1)
    dynamic = []  # (column, coordinate, size piece)
    for axis, coordinate in sorted(plan.size_one.items()):
        column, piece = k - 1 - axis, plan.spatial[axis]  # x (column 0) runs along the last dim
        if isinstance(piece, Fixed):
            base[column, k] += coordinate if piece.value == 1 else 0.0
        else:
            dynamic.append((column, coordinate, piece))
    if not dynamic:
        matrix = writer.ctx.add_constant(base.astype(dtype), "size_one_matrix")
        return writer.node("MatMul", [theta, matrix], "theta_size_one", elem, [batch, k, k + 1])
    n = len(dynamic)
    dims = writer.pieces([piece for _, _, piece in dynamic], "size_one_dims")
    ones = writer.node("Equal", [dims, writer.const([1] * n, "size_one")], "size_one_mask", TensorProto.BOOL, [n])
    mask = writer.node("Cast", [ones], "size_one_mask", elem, [n], to=elem)
    spread = np.zeros((n, (k + 1) ** 2))
    for i, (column, coordinate, _) in enumerate(dynamic):
        spread[i, column * (k + 1) + k] = coordinate
    moved = writer.node("MatMul", [mask, writer.ctx.add_constant(spread.astype(dtype), "size_one_spread")],
                         "size_one_shift", elem, [(k + 1) ** 2])
    flat = writer.node("Add", [moved, writer.ctx.add_constant(base.reshape(-1).astype(dtype), "size_one_base")],
                        "size_one_matrix", elem, [(k + 1) ** 2])
    matrix = writer.node("Reshape", [flat, writer.const([k + 1, k + 1], "size_one_shape")], "size_one_matrix",
                          elem, [k + 1, k + 1])
    return writer.node("MatMul", [theta, matrix], "theta_size_one", elem, [batch, k, k + 1])
