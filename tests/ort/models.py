"""Small custom.ops models for the op library's tests (and the OpenVINO extension's), built with
onnx.helper, and the cases the contract tests run them on."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

import surgeon_ops.kernels as K

from ..kernels.cases import cases

F32, F16 = TensorProto.FLOAT, TensorProto.FLOAT16
NP = {F32: np.float32, F16: np.float16}


# A FusedGridSample node's attributes that break the contract, and the words of the error (a
# regular expression): the op library and the OpenVINO extension say the same.
ATTRIBUTE_ERRORS = [
    (dict(mode="bogus", output_size=[4, 4]), "unknown mode 'bogus'; expected bilinear, nearest or bicubic"),
    (dict(padding_mode="mirror", output_size=[4, 4]), "unknown padding_mode 'mirror'"),
    (dict(align_corners=2, output_size=[4, 4]), "align_corners must be 0 or 1, got 2"),
    (dict(mode=1, output_size=[4, 4]), r"attribute mode must be a STRING \(ops/OPS.md\)"),
    (dict(align_corners=1.0, output_size=[4, 4]), "attribute align_corners must be an INT"),
    (dict(output_size=4), "attribute output_size must be INTS"),
    (dict(), "has neither an output_size attribute nor a size input"),
    (dict(output_size=[4]), "output_size must have 2 values"),
    (dict(output_size=[4, -1]), "output_size must not be negative"),
    (dict(mode="bicubic", output_size=[2, 4, 4]), "bicubic mode is 2-D only"),
]


def _model(node, inputs, output_type, output_rank):
    out = helper.make_tensor_value_info("y", output_type, [f"d{k}" for k in range(output_rank)])
    graph = helper.make_graph([node], "custom_op", inputs, [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("custom.ops", 1)])
    model.ir_version = 8
    return model


def _input(name, elem, rank):
    return helper.make_tensor_value_info(name, elem, None)  # any rank: the op checks it, not onnxruntime


def fused(rank=4, x_type=F32, theta_type=None, size_input=False, **attrs):
    """Y = FusedGridSample(x, theta[, size]); attributes as given (None values left out)."""
    theta_type = x_type if theta_type is None else theta_type
    names = ["x", "theta"] + (["size"] if size_input else [])
    node = helper.make_node("FusedGridSample", names, ["y"], domain="custom.ops", name="fgs",
                            **{k: v for k, v in attrs.items() if v is not None})
    inputs = [_input("x", x_type, rank), _input("theta", theta_type, 3)]
    if size_input:
        inputs.append(_input("size", TensorProto.INT64, 1))
    return _model(node, inputs, x_type, rank)


def affine(theta_type=F32, size_input=False, out_rank=4, **attrs):
    """grid = AffineGrid(theta[, size])."""
    names = ["theta"] + (["size"] if size_input else [])
    node = helper.make_node("AffineGrid", names, ["y"], domain="custom.ops", name="ag",
                            **{k: v for k, v in attrs.items() if v is not None})
    inputs = [_input("theta", theta_type, 3)] + ([_input("size", TensorProto.INT64, 1)] if size_input else [])
    return _model(node, inputs, theta_type, out_rank)


def with_empty_size_input(model: onnx.ModelProto) -> onnx.ModelProto:
    """The node given a third input named "" (how a node skips an optional input)."""
    model.graph.node[0].input.append("")
    return model


def fused_model(nsp, mode, padding, ac, size_input, out, x_type=F32):
    attrs = dict(mode=mode, padding_mode=padding, align_corners=ac)
    if not size_input:
        attrs["output_size"] = list(out)
    return fused(rank=nsp + 2, x_type=x_type, size_input=size_input, **attrs)


def affine_grid_cases(nsp, dtype, size_input):
    """(model, feeds, the kernels' grid) for both align_corners: the op library's and the OpenVINO
    extension's contract tests."""
    theta = cases(nsp)[0][1].astype(dtype)
    out = (3, 5, 4)[3 - nsp:]
    for ac in (0, 1):
        elem = F16 if dtype == np.float16 else F32
        model = affine(elem, size_input, out_rank=nsp + 2, align_corners=ac,
                       output_size=None if size_input else list(out))
        feeds = dict(theta=theta)
        if size_input:
            feeds["size"] = np.array((theta.shape[0], 7) + out, np.int64)
        yield model, feeds, K.affine_grid(theta, out, ac)
