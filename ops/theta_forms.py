"""The shapes theta comes in, in one table: the contract's matrices (``[N, 2, 3]`` for 2-D,
``[N, 3, 4]`` for 3-D: ops/OPS.md), their homogeneous squares (``[N, 3, 3]``, ``[N, 4, 4]``: the
affine map's last row added, as matrix products of transforms hold it) and each of them
flattened per item (``[N, 6]``, ``[N, 12]``, ``[N, 9]``, ``[N, 16]``: as fully connected layers
emit it).

Read by the kernels' and the torch operator's checks (the contract's two), validation's draws
(``draws.py``) and the affine-grid pattern's cut (``surgeon_patterns.cut``: which values are
theta-shaped). Imports nothing, so ``surgeon_ops.kernels`` stays free of onnx and surgeon.
"""

from __future__ import annotations

# (rows, cols) of one item's matrix -> (spatial rank k, homogeneous?)
MATRICES = {(2, 3): (2, False), (3, 4): (3, False), (3, 3): (2, True), (4, 4): (3, True)}
# Elements of one flattened item -> (rows, cols) of its matrix.
FLAT = {rows * cols: (rows, cols) for rows, cols in MATRICES}


def contract_rank(dims) -> int | None:
    """k for a theta of the contract's shape ``[N, k, k+1]`` (k = 2 or 3), else None. Dims are
    compared, not hashed: torch's symbolic ints may stand among them."""
    dims = tuple(dims)
    if len(dims) != 3:
        return None
    return next((k for (rows, cols), (k, homogeneous) in MATRICES.items()
                 if not homogeneous and dims[1:] == (rows, cols)), None)


def matrix_dims(dims) -> tuple[int, int] | None:
    """(rows, cols) of the matrices a theta-shaped value holds: ``[N, rows, cols]`` or flattened
    ``[N, rows * cols]``, for any batch N (known or not); None for other dims."""
    if dims is None or len(dims) not in (2, 3) or not all(isinstance(d, int) for d in dims[1:]):
        return None
    if len(dims) == 3:
        return (dims[1], dims[2]) if (dims[1], dims[2]) in MATRICES else None
    return FLAT.get(dims[1])
