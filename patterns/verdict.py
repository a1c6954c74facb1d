"""What identification concludes (``Verdict``): the engine's dims verdict (which output dims
follow which input dims, ``surgeon.recognise.DimsVerdict``) and the grid's own: its rank, its
align_corners, and theta as fed, mapped or fitted."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import TensorProto, helper

from surgeon.recognise import AffineMap, DimsVerdict


@dataclass
class Verdict(DimsVerdict):
    k: int = 2
    homogeneous: bool = False
    align_corners: int = 0
    theta_map: AffineMap | None = None  # the grid is affine_grid(map(theta)), not affine_grid(theta)
    theta_value: np.ndarray | None = None  # the grid reads no theta: this one was fitted
    theta_scaling: object = None  # scaling.DimScaling: the fitted theta's or map's coefficients follow dims
    precision: str = "single"  # the lowest float precision the region computes in
    grid_dtype: np.dtype | None = None  # the grid's type as computed (declared types may be stale)
    reads: int = 0  # theta elements (one item, row-major bits) the original's grid reads
    exact: str | None = None  # "proved": equal for every size by algebra (exact_grid.py); else why not


def stale_grid_type(declared: int | None, computed: np.dtype | None) -> str | None:
    """Why a grid declared ``declared`` (an ONNX type) but computed ``computed`` cannot be
    rewritten: a rewrite typed from the declaration would change the grid's type."""
    if not declared or computed is None or np.dtype(helper.tensor_dtype_to_np_dtype(declared)) == computed:
        return None
    return f"the grid is declared {TensorProto.DataType.Name(declared)} but computes {computed}"
