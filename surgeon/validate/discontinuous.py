"""The ops whose result jumps: where a rounding tie can come from.

A rounding tie is an element where the original's result is decided by the last bits of some
value: a nearest sampler's coordinate on a pixel boundary, a Round at x.5, a comparison of two
equal values. Only a discontinuous op makes one; a smooth op (a normalisation, a GELU) moves by
as little as its inputs do, so a large difference after it is a wrong rewrite, never a tie.
``deciding_inputs(node)`` names the inputs whose rounding decides such an op's result (empty for
a continuous op); the rounding probe moves them and sees whether the op flips.
"""

from __future__ import annotations

from onnx import NodeProto, TensorProto, helper

_ON_FIRST = frozenset({"Round", "Floor", "Ceil", "Sign", "ArgMax", "ArgMin", "Hardmax", "TopK", "QuantizeLinear",
                       "DynamicQuantizeLinear", "IsInf", "IsNaN"})
_ON_ALL = frozenset({"Less", "Greater", "Equal", "LessOrEqual", "GreaterOrEqual", "Mod"})
_INTEGRAL = frozenset({TensorProto.BOOL, TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64,
                       TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64,
                       TensorProto.INT4, TensorProto.UINT4})


def deciding_inputs(node: NodeProto) -> list[str]:
    """The inputs of ``node`` whose last bits can flip its result (empty: ``node`` is continuous
    in all of them)."""
    if node.domain not in ("", "ai.onnx"):
        return []
    op = node.op_type
    given = [i for i in node.input]
    if op in _ON_FIRST:
        return given[:1]
    if op in _ON_ALL:
        return [i for i in given if i]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if op == "Cast" and attrs.get("to") in _INTEGRAL:
        return given[:1]
    mode = attrs.get("mode", b"")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if op == "GridSample" and mode == "nearest":
        return [i for i in given[1:2] if i]  # the grid: the image is read linearly
    if op in ("Resize", "Upsample") and mode == "nearest":
        return [i for i in given[1:] if i]  # roi and scales place the samples; sizes are whole
    return []
