"""Probe matrices that span the space of affine maps, for a region whose variable is one (a
transform's matrix: ``[k, k+1]`` per item, or a homogeneous ``[k+1, k+1]``).

A region that applies a non-linear op to single elements (Abs, Relu, Clip, Round, Sign,
Floor...) is the identity on every matrix that sits near the identity with the same signs, so
probing only there passes it for affine. These matrices differ per item and cover signed entries,
reflections, rotations past 90 degrees, large translations and scales, shears and tiny scales.
"""

from __future__ import annotations

import numpy as np


def _rot(deg: float) -> np.ndarray:
    a = np.deg2rad(deg)
    return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])


# (label, linear part for x/y, translation): 2-D shapes; 3-D extends them with a z row/column.
_KINDS = [
    ("near identity", np.array([[1.1, 0.15], [-0.1, 0.9]]), (0.05, -0.1)),
    ("rotation by 135 degrees", 1.3 * _rot(135), (2.5, -1.7)),
    ("reflection", np.diag([-1.0, 1.0]) @ _rot(30), (-0.4, 0.9)),
    ("large translation and scale", np.array([[6.0, 0.5], [-0.7, 4.5]]), (-7.0, 5.5)),
    ("rotation by 250 degrees with shear", _rot(250) @ np.array([[1.0, 0.6], [0.0, 0.7]]), (-1.3, -2.2)),
    ("tiny scale, negative translation", np.array([[0.2, -0.03], [0.05, -0.15]]), (-0.35, -0.6)),
    ("both axes flipped", np.array([[-0.8, 0.3], [0.25, -1.6]]), (0.7, 0.3)),
    ("point reflection with large shift", -2.0 * _rot(10), (3.2, 1.1)),
]
KIND_COUNT = len(_KINDS)


def _matrix(kind: int, k: int, rng: np.random.Generator) -> tuple[np.ndarray, str]:
    """One [k, k+1] affine matrix of the given kind (indices past the list are signed random)."""
    if kind >= KIND_COUNT:
        return rng.normal(0.0, 2.0, size=(k, k + 1)), "signed random"
    label, linear, shift = _KINDS[kind]
    matrix = np.zeros((k, k + 1))
    matrix[:2, :2] = linear
    matrix[:2, k] = shift
    if k == 3:  # z gets its own sign and scale, and couples to x and y
        matrix[2, :] = [0.3, -0.45, -1.7 if kind % 2 else 1.2, 0.8 - 0.3 * kind]
        matrix[:2, 2] = [-0.35, 0.25]
    return matrix, label


def probe_matrices(count: int, rows: int, cols: int, k: int, start: int, salt: int,
                 fixed: dict | None = None) -> tuple[np.ndarray, list[str]]:
    """``count`` matrices [count, rows, cols] (float64) and their labels: kinds ``start``,
    ``start+1``, ... of the spanning list, each nudged by a per-item random offset so that no
    two items are equal. Rows past k (a homogeneous matrix's last row) are random too: a region
    that reads them is not an affine grid of the first k rows; but for ``fixed`` elements (flat
    position in an item -> value), which every run of the model holds (the cut's proof above)."""
    rng = np.random.default_rng([20240611, salt, start, count, rows, cols])
    out = np.zeros((count, rows, cols))
    labels = []
    for i in range(count):
        matrix, label = _matrix(start + i, k, rng)
        matrix = matrix + rng.uniform(-0.05, 0.05, size=matrix.shape)
        out[i, :k, :] = matrix
        if rows > k:
            out[i, k:, :] = rng.uniform(-1.0, 1.0, size=(rows - k, cols))
        labels.append(label)
    for pos, value in (fixed or {}).items():
        out.reshape(count, rows * cols)[:, pos] = value
    return out, labels
