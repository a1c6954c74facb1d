"""The tolerance one rewrite is held to: what exact float math allows, no more.

A correct rewrite computes the original's function in other float operations; each operation
rounds its result to the nearest value of the type, an error of at most half a unit in the last
place (ulp), and an op's library kernel (exp, erf, tanh) is within a few ulps of exact. So for
a float output computed by ``ops`` operations (the larger of the original's region and the
rewrite's), an element passes when

    |rewritten - original| <= k * eps * (max |original| + |original element|),  k = ULPS_PER_OP * ops

with ``eps`` the type's machine epsilon (float32 1.19e-7, float16 9.8e-4): rtol = k * eps and
atol = k * eps * max |original| over the output. An erf GELU (5 ops) with values up to 8 is held
to 1.9e-5: a tanh GELU differs by up to 4.7e-4 and fails; Gemm for MatMul + Add, or
LayerNormalization for its decomposition, differ by float rounding and pass. An element outside
it can still be explained by rounding where the original itself is that sensitive (see
rounding.py): long reductions, large coordinates, ties in nearest sampling. Integers and bools
must match exactly.
"""

from __future__ import annotations

import numpy as np

ULPS_PER_OP = 4


def rounding_tolerance(original: np.ndarray, ops: int) -> tuple[float, float]:
    """(atol, rtol) for a float output of ``ops`` operations; (0, 0) for exact types."""
    original = np.asarray(original)
    if original.dtype.kind != "f":
        return (0.0, 0.0)
    k = ULPS_PER_OP * max(1, int(ops)) * float(np.finfo(original.dtype).eps)
    finite = original[np.isfinite(original)] if original.size else original
    scale = float(np.max(np.abs(finite))) if finite.size else 0.0
    return (k * scale, k)
