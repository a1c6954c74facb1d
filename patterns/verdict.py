"""What identification concludes (``Verdict``) and what one check at one set of dims gives when
it verifies (``Outcome``; when it does not, the engine's ``Failure``). How an output dim is known
(``Static``, ``Follows``, ``Computed``) is the engine's (``surgeon.recognise.symbols``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from onnx import TensorProto, helper

from surgeon.recognise import AffineMap, OutputDim, Static

from .verify import Agreement


@dataclass
class Verdict:
    k: int = 2
    homogeneous: bool = False
    align_corners: int = 0
    batch: OutputDim = Static(1)  # the grid's batch
    spatial: list = field(default_factory=list)  # per output spatial dim, an OutputDim
    theta_batch: OutputDim = Static(1)
    broadcast_theta: bool = False  # theta's batch may be 1 where the grid's is not: expand it
    pinned: dict = field(default_factory=dict)  # class -> the only value the original accepts
    empty_follows: set = field(default_factory=set)  # pinned classes output dims follow (with no items, any value runs)
    size_one: dict = field(default_factory=dict)  # output spatial dim -> its size-1 coordinate, when not 0
    size_from: int | None = None  # known grid op whose size tensor gives computed dims
    size_exact: bool = False  # that tensor is exactly [N, C, *spatial] of the sampler
    theta_map: AffineMap | None = None  # the grid is affine_grid(map(theta)), not affine_grid(theta)
    theta_value: np.ndarray | None = None  # the grid reads no theta: this one was fitted
    theta_scaling: object = None  # scaling.DimScaling: the fitted theta's or map's coefficients follow dims
    precision: str = "single"  # the lowest float precision the region computes in
    grid_dtype: np.dtype | None = None  # the grid's type as computed (declared types may be stale)
    notes: list = field(default_factory=list)  # warnings for the report
    nan_at_one: list = field(default_factory=list)  # dims at size 1 where the original's grid is NaN (0/0)
    undefined_at: dict = field(default_factory=dict)  # graph input dim ("x[2]") -> 1, for those dims
    reads: int = 0  # theta elements (one item, row-major bits) the original's grid reads


@dataclass
class Outcome:
    shape: tuple
    agreement: Agreement
    sizes: dict
    assign: dict
    grid_dtype: np.dtype



def stale_grid_type(declared: int | None, computed: np.dtype | None) -> str | None:
    """Why a grid declared ``declared`` (an ONNX type) but computed ``computed`` cannot be
    rewritten: a rewrite typed from the declaration would change the grid's type."""
    if not declared or computed is None or np.dtype(helper.tensor_dtype_to_np_dtype(declared)) == computed:
        return None
    return f"the grid is declared {TensorProto.DataType.Name(declared)} but computes {computed}"
