"""Toy patterns that rewrite a Relu into one custom node whose kernel is right, wrong or missing,
or whose check() breaks its contract: for the engine's ``fuse --validate`` tests (custom.test) and
the library's error tests (toy.ops); the model they match is ``tests.builders.relu_model``."""

import numpy as np
from onnx import TensorProto

from surgeon import CustomOp, Match, Pattern


def _relu_kernel(inputs, attrs, device="cpu"):
    return [np.maximum(inputs[0], 0)]


def _doubling_kernel(inputs, attrs, device="cpu"):
    return [np.maximum(inputs[0], 0) * 2]  # wrong on purpose


class ReluToCustom(Pattern):
    """Relu(x) -> ``custom_domain``::``op``(x), same shape."""

    anchor_ops = ("Relu",)
    custom_domain = "custom.test"
    domains = {"custom.test": 1}
    op = "Relu"

    def match(self, ctx, node):
        return Match(node, [node])

    def rewrite(self, ctx, match):
        out = match.outputs[0]
        ctx.add_node(self.op, match.anchor.inputs, [out], domain=self.custom_domain)
        ctx.set_shape(out, TensorProto.FLOAT, ctx.shape(match.anchor.inputs[0]))


# -- custom.test: for fuse --validate -----------------------------------------------------------

class GoodRelu(ReluToCustom):
    op = "GoodRelu"
    ops = [CustomOp("custom.test", "GoodRelu", kernel=_relu_kernel)]


class BadRelu(ReluToCustom):
    op = "BadRelu"
    ops = [CustomOp("custom.test", "BadRelu", kernel=_doubling_kernel)]


# -- toy.ops: for the library's errors ----------------------------------------------------------

class ToyOpsRelu(ReluToCustom):
    custom_domain = "toy.ops"
    domains = {"toy.ops": 1}


class DoublingRelu(ToyOpsRelu):
    """Wrong on purpose: its kernel doubles."""

    name = "doubling-relu"
    op = "DoublingRelu"
    ops = [CustomOp("toy.ops", "DoublingRelu", kernel=_doubling_kernel)]


class KernellessRelu(ToyOpsRelu):
    name = "kernelless-relu"
    op = "KernellessRelu"


class CheckSaysYes(ToyOpsRelu):
    """check() must return None or a reason; True breaks the contract."""

    name = "check-says-yes"
    op = "Yes"

    def check(self, ctx, match):
        return True
