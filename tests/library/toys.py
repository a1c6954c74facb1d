"""Toy patterns for the error tests: a Relu rewritten into a custom op whose kernel is right, wrong
or missing, and one whose check() breaks its contract; and the model they match."""

import numpy as np
from onnx import TensorProto, helper

from surgeon import CustomOp, Match, Pattern


def relu_model():
    """x (2, 3) -> Relu -> y."""
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "toy",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


class _ReluToCustom(Pattern):
    anchor_ops = ("Relu",)
    domains = {"toy.ops": 1}
    op = "Relu"

    def match(self, ctx, node):
        return Match(node, [node])

    def rewrite(self, ctx, match):
        out = match.outputs[0]
        ctx.add_node(self.op, match.anchor.inputs, [out], domain="toy.ops")
        ctx.set_shape(out, TensorProto.FLOAT, ctx.shape(match.anchor.inputs[0]))


class DoublingRelu(_ReluToCustom):
    """Wrong on purpose: its kernel doubles."""

    name = "doubling-relu"
    op = "DoublingRelu"
    ops = [CustomOp("toy.ops", "DoublingRelu", kernel=lambda inputs, attrs, device="cpu": [np.maximum(inputs[0], 0) * 2])]


class KernellessRelu(_ReluToCustom):
    name = "kernelless-relu"
    op = "KernellessRelu"


class CheckSaysYes(_ReluToCustom):
    """check() must return None or a reason; True breaks the contract."""

    name = "check-says-yes"
    op = "Yes"

    def check(self, ctx, match):
        return True
