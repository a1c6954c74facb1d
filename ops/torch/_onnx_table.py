"""onnx_translation_table: the surgeon:: operators as the contract's nodes, for the one case the
symbolic route cannot see: an ExportedProgram (torch.export first) handed to
torch.onnx.export(ep, ..., custom_translation_table=surgeon.torch.onnx_translation_table).
A plain torch.onnx.export(model) needs no table.  The node and its attributes are the contract's;
a dynamic size is built as Concat(Shape(x)[0:2], spatial dims), correct but not the exact
nodes surgeon fuse writes (the op's SymInts arrive here without the tensor they came from)."""

from __future__ import annotations

import onnxscript
from onnx.defs import OpSchema
from onnxscript import opset18 as op

import torch

_CUSTOM = onnxscript.values.Opset("custom.ops", 1)
_P, _A = OpSchema.FormalParameter, OpSchema.Attribute
_OPTIONAL = OpSchema.FormalParameterOption.Optional


def _op(name: str, inputs: list, attrs: dict):
    """An onnxscript op for a custom.ops node (onnxscript calls need its schema)."""
    schema = OpSchema(name, "custom.ops", 1, inputs=inputs, outputs=[_P("Y", "T")],
                      type_constraints=[("T", ["tensor(float)", "tensor(float16)"], "")],
                      attributes=[_A(k, t, "", required=False) for k, t in attrs.items()])
    return onnxscript.values.Op(_CUSTOM, name, schema)


_AT = OpSchema.AttrType
_SIZE = _P("size", "tensor(int64)", param_option=_OPTIONAL)
_FUSED = _op("FusedGridSample", [_P("X", "T"), _P("theta", "T"), _SIZE],
             {"align_corners": _AT.INT, "mode": _AT.STRING, "padding_mode": _AT.STRING, "output_size": _AT.INTS})
_GRID = _op("AffineGrid", [_P("theta", "T"), _SIZE], {"align_corners": _AT.INT, "output_size": _AT.INTS})


def _size(lead, spatial):
    parts = [lead] + [op.Constant(value_ints=[s]) if isinstance(s, int) else op.Reshape(s, op.Constant(value_ints=[1]))
                      for s in spatial]
    return op.Concat(*parts, axis=0)


def _static(spatial) -> bool:
    return all(isinstance(s, int) for s in spatial)


def fused_grid_sample(x, theta, size, mode: str, padding_mode: str, align_corners: bool):
    attrs = dict(align_corners=int(align_corners), mode=mode, padding_mode=padding_mode)
    if _static(size):
        return _FUSED(x, theta, output_size=list(size), **attrs)
    return _FUSED(x, theta, _size(op.Shape(x, start=0, end=2), size), **attrs)


def affine_grid(theta, size, align_corners: bool):
    if _static(size):
        return _GRID(theta, output_size=list(size), align_corners=int(align_corners))
    lead = op.Concat(op.Shape(theta, start=0, end=1), op.Constant(value_ints=[1]), axis=0)  # [N, C=1]
    return _GRID(theta, _size(lead, size), align_corners=int(align_corners))


onnx_translation_table = {
    torch.ops.surgeon.fused_grid_sample.default: fused_grid_sample,
    torch.ops.surgeon.affine_grid.default: affine_grid,
}
