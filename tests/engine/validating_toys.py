"""Patterns whose rewrite is right or wrong, each with a reference kernel, for fuse --validate."""

import numpy as np
from onnx import TensorProto

from surgeon import CustomOp, Match, Pattern


def _relu_kernel(inputs, attrs, device="cpu"):
    return [np.maximum(inputs[0], 0)]


def _doubling_kernel(inputs, attrs, device="cpu"):
    return [np.maximum(inputs[0], 0) * 2]  # wrong on purpose


class _ReluToCustom(Pattern):
    anchor_ops = ("Relu",)
    domains = {"custom.test": 1}

    def match(self, ctx, node):
        return Match(node, [node])

    def rewrite(self, ctx, match):
        out = match.outputs[0]
        ctx.add_node(self.op, match.anchor.inputs, [out], domain="custom.test")
        ctx.set_shape(out, TensorProto.FLOAT, ctx.shape(match.anchor.inputs[0]))


class GoodRelu(_ReluToCustom):
    op = "GoodRelu"
    ops = [CustomOp("custom.test", "GoodRelu", kernel=_relu_kernel)]


class BadRelu(_ReluToCustom):
    op = "BadRelu"
    ops = [CustomOp("custom.test", "BadRelu", kernel=_doubling_kernel)]
