"""Exact fits: an affine map between two sets of samples (it explains every sample within
rounding, or there is none), tolerances scaled to the values' magnitudes, and the lowest float
precision a region computes in (which sets the rounding a fit may be off by)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import TensorProto

_PRECISION = {TensorProto.DOUBLE: "double", TensorProto.FLOAT: "single", TensorProto.FLOAT16: "half",
              TensorProto.BFLOAT16: "bfloat16"}
_ORDER = ["double", "single", "half", "bfloat16"]


def precision(ctx, nodes, constants=(), extra_types=()) -> str:
    """The lowest float precision among the nodes' outputs, their Casts' targets, the constants and
    ``extra_types`` (a float16 Cast in the middle of a float32 chain makes the whole value half)."""
    types = set(extra_types)
    for node in nodes:
        types.update(ctx.dtype(o) for o in node.outputs if o)
        if node.op_type == "Cast":
            types.add(node.attr("to"))
    types.update(ctx.dtype(name) for name in constants)
    found = [_PRECISION[t] for t in types if t in _PRECISION]
    return max(found, key=_ORDER.index) if found else "single"


def scaled(tol: tuple[float, float], *arrays) -> tuple[float, float]:
    """``tol`` (atol, rtol) with atol shrunk for values whose largest finite magnitude is below 1."""
    atol, rtol = tol
    finite = [np.abs(a[np.isfinite(a)]).max() for a in arrays if np.size(a) and np.isfinite(a).any()]
    return atol * min(1.0, max(finite, default=1.0)), rtol


@dataclass
class AffineMap:
    """y = x @ weight + bias, on flattened samples."""

    weight: np.ndarray  # [p, q]
    bias: np.ndarray  # [q]

    def apply(self, x: np.ndarray) -> np.ndarray:
        """[n, ...] samples -> [n, q] (no items give none)."""
        flat = x.reshape(x.shape[0], int(np.prod(x.shape[1:]))).astype(np.float64)
        return flat @ self.weight + self.bias

    def coefficients(self) -> np.ndarray:
        return np.concatenate([self.weight.reshape(-1), self.bias.reshape(-1)])


def fit_map(sources: np.ndarray, targets: np.ndarray, tol: tuple[float, float]) -> AffineMap | None:
    """The affine map from samples [n, p] to targets [n, q] that explains every sample, or None
    (n must exceed p + 1 for the fit to be a check). Coefficients under a millionth of the
    largest are rounding (of float32 samples) and set to 0."""
    if sources.shape[0] < sources.shape[1] + 2:
        return None
    design = np.concatenate([sources, np.ones((sources.shape[0], 1))], axis=1)
    solution = np.linalg.lstsq(design, targets, rcond=None)[0]
    atol, rtol = scaled(tol, targets)
    if not np.all(np.abs(design @ solution - targets) <= 10 * (atol + rtol * np.abs(targets))):
        return None
    weight, bias = solution[:-1], solution[-1]
    noise = 1e-6 * max(float(np.abs(solution).max(initial=0.0)), 1e-30)
    weight[np.abs(weight) < noise] = 0.0
    bias[np.abs(bias) < noise] = 0.0
    return AffineMap(weight, bias)
