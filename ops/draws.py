"""How ``validate`` draws theta for the two ops: matrices that could reveal a wrong rewrite.

Uniform noise near the identity never reflects, rotates far or translates much, so a grid
computed with a sign or an absolute value lost passes on it. These are full affine maps: any
rotation angle, reflections, scales 0.5-2 per axis, shears, translations up to 1, a different
one per batch item; one item in three is also shifted 1-1.8 along one axis, past the image
edge (a translation clamped to [-1, 1] shows only there).
"""

from __future__ import annotations

import numpy as np

from .theta_forms import FLAT


def _linear(k: int, rng: np.random.Generator) -> np.ndarray:
    """An orthogonal matrix (a rotation, or a reflection: det -1 half the time), scaled per
    axis and sheared a little."""
    q, r = np.linalg.qr(rng.standard_normal((k, k)))
    q = q * np.sign(np.diag(r))  # uniform over rotations and reflections
    scale = np.exp(rng.uniform(np.log(0.5), np.log(2.0), size=k))
    shear = np.eye(k) + np.triu(rng.uniform(-0.3, 0.3, size=(k, k)), 1)
    return q @ np.diag(scale) @ shear


def draw_theta(shape, dtype, rng: np.random.Generator) -> np.ndarray:
    """transform matrices: any rotation, reflections, scales 0.5-2, shears, shifts past the edge"""
    shape = tuple(int(d) for d in shape)
    per_item = int(np.prod(shape[1:])) if len(shape) > 1 else 0
    if per_item not in FLAT or (len(shape) == 3 and shape[1:] != FLAT[per_item]):
        return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    rows, cols = FLAT[per_item]
    k = cols - 1
    items = []
    for _ in range(shape[0]):
        m = np.zeros((rows, cols))
        m[:k, :k] = _linear(k, rng)
        m[:k, k] = rng.uniform(-1.0, 1.0, size=k)
        if rng.random() < 1 / 3:
            m[rng.integers(k), k] += rng.choice([-1.0, 1.0]) * rng.uniform(1.0, 1.8)
        if rows > k:
            m[k, k] = 1.0  # homogeneous: the last row of an affine map
        items.append(m)
    return np.asarray(items, dtype=np.float64).reshape(shape).astype(dtype)


def draw_theta_far(shape, dtype, rng: np.random.Generator) -> np.ndarray:
    """far: scales 4-12 and shifts of 10-30 (coordinates past +-20), NaN in rows no affine map reads"""
    theta = draw_theta(shape, np.float64, rng)
    per_item = int(np.prod(shape[1:])) if len(shape) > 1 else 0
    if per_item not in FLAT:
        return (theta * 12).astype(dtype)
    rows, cols = FLAT[per_item]
    k = cols - 1
    items = theta.reshape(-1, rows, cols)
    items[:, :k, :k] *= rng.uniform(4.0, 12.0, size=(items.shape[0], 1, 1))
    items[:, :k, k] = rng.uniform(10.0, 30.0, size=(items.shape[0], k)) * rng.choice([-1.0, 1.0], size=(items.shape[0], k))
    if rows > k:  # a homogeneous matrix's last row: an affine grid never reads it
        items[:, k:, :] = np.nan
    return items.reshape(theta.shape).astype(dtype)


draw_theta.far = draw_theta_far  # what validate's far round draws instead
