"""Which ops are lowered here, and from which version on: ``since`` is the first version of the
op whose step down onnx.version_converter cannot take (no adapter, or one that writes an invalid
node), so a node of that version or later is lowered whenever the target is below ``since``."""

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
# Attributes onnx's adapters keep, writing a node the older version refuses (19: saturate; 21:
# block quantisation, output types; 23-24: precision, rounding of float8/float4).
_CASTS = simple_ops.newer_attributes(saturate=simple_ops.ANY, round_mode=simple_ops.ANY)
LOWERINGS.update({
    "Cast": Lowering(19, _CASTS), "CastLike": Lowering(19, _CASTS),
    "QuantizeLinear": Lowering(19, simple_ops.newer_attributes(saturate=simple_ops.ANY, block_size=0,
                                                               output_dtype=0, precision=0)),
    "DequantizeLinear": Lowering(21, simple_ops.newer_attributes(block_size=0, output_dtype=0)),
})
# 18: axes became an input; onnx's adapter writes an invalid node when noop_with_empty_axes is set.
LOWERINGS.update({op: Lowering(18, simple_ops.reduce) for op in (
    "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
    "ReduceSumSquare")})
