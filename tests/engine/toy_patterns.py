"""Toy patterns for the engine tests (no affine grids: the engine knows none); the models they
match are in tests.builders (``relu_neg_abs_model``)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from surgeon import Match, Pattern, refuse


class ReluNeg(Pattern):
    """Relu -> Neg becomes custom.test::NegRelu."""

    anchor_ops = ("Neg",)
    domains = {"custom.test": 1}

    def match(self, ctx, node):
        relu = ctx.producer(node.inputs[0])
        if relu is None or not relu.is_op("Relu"):
            return None
        return Match(node, [relu, node], values={"x": relu.inputs[0]})

    def rewrite(self, ctx, match):
        out = match.outputs[0]
        ctx.add_node("NegRelu", [match.values["x"]], [out], domain="custom.test",
                     alpha=0.5, flag=True, mode="fast", sizes=[2, 3])
        ctx.set_shape(out, TensorProto.FLOAT, ctx.shape(match.values["x"]))


class NegToSub(Pattern):
    """Neg(x) becomes Sub(0, x): standard ops only, used for fixpoint and overlap tests."""

    anchor_ops = ("Neg",)

    def match(self, ctx, node):
        return Match(node, [node])

    def rewrite(self, ctx, match):
        zero = ctx.add_constant(np.zeros((), np.float32), "zero")
        ctx.add_node("Sub", [zero, match.anchor.inputs[0]], match.outputs)


class AbsAbs(Pattern):
    """Abs(Abs(x)) -> Abs(x); applied repeatedly it collapses a chain (needs several passes)."""

    anchor_ops = ("Abs",)

    def match(self, ctx, node):
        inner = ctx.producer(node.inputs[0])
        if inner is None or not inner.is_op("Abs"):
            return None
        return Match(node, [inner, node])

    def rewrite(self, ctx, match):
        ctx.add_node("Abs", [match.nodes[0].inputs[0]], match.outputs)


class MatchOnly(Pattern):
    """For tests of matching alone: these patterns never return a Match to rewrite."""

    def rewrite(self, ctx, match):
        raise AssertionError("never called")


class AlwaysRefuses(MatchOnly):
    anchor_ops = ("Relu",)

    def match(self, ctx, node):
        return refuse("relu is fine as it is")


class Crashes(MatchOnly):
    anchor_ops = ("Relu",)

    def match(self, ctx, node):
        raise RuntimeError("bug in plugin")
