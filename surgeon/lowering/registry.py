"""Which ops are lowered here, and from which version on: ``since`` is the first version of the
op whose step down onnx.version_converter cannot take (no adapter), so a node of that version
or later is lowered whenever the target is below ``since``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import grid_sample, simple_ops


@dataclass(frozen=True)
class Lowering:
    since: int
    lower: Callable  # (Site) -> None (written into site.build) or a reason the target cannot express it


LOWERINGS = {
    "ConstantOfShape": Lowering(20, simple_ops.constant_of_shape),  # 20+: more value types
    "GlobalMaxPool": Lowering(22, simple_ops.same_node),  # 22: bfloat16
    "GridSample": Lowering(20, grid_sample.grid_sample),  # 20: mode names, N-D
    "LpPool": Lowering(18, simple_ops.lp_pool),  # 18: ceil_mode, dilations
    "Pad": Lowering(18, simple_ops.pad),  # 18: axes input; 19: wrap
    "Split": Lowering(18, simple_ops.split),  # 18: num_outputs
}
