"""Models, patterns and reports for the visual tests."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from surgeon import Pattern, refuse

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "models" / "monai_resample_ts_opset17.onnx"  # 130 nodes -> 5 (the affine's last row is never read: a Gather keeps it out), image output


class NegRelu(Pattern):
    """Neg(Relu(x)) -> test.visual::NegRelu(x, alpha=0.5)."""

    name = "neg-relu"
    domains = {"test.visual": 1}

    @staticmethod
    def template(op, x):
        return op.Neg(op.Relu(x))

    @staticmethod
    def replacement(op, x):
        return op.NegRelu(x, alpha=0.5, _domain="test.visual")


class RefusesInCheck(Pattern):
    """Matches Abs(Neg(x)) and refuses it in check(): the near miss carries the matched region."""

    name = "refuses-in-check"
    domains = {"test.visual": 1}

    @staticmethod
    def template(op, x):
        return op.Abs(op.Neg(x))

    @staticmethod
    def replacement(op, x):
        return op.AbsNeg(x, _domain="test.visual")

    def check(self, ctx, match):
        return "abs of neg is fine as it is"


class RefusesInMatch(Pattern):
    """Refuses every Sigmoid from match(): the near miss carries the anchor's neighbourhood."""

    name = "refuses-in-match"
    anchor_ops = ("Sigmoid",)

    def match(self, ctx, node):
        return refuse("a sigmoid here is never rewritten")

    def rewrite(self, ctx, match):  # never reached
        raise AssertionError


def toy_model() -> onnx.ModelProto:
    """x -> Relu -> Neg -> Abs -> Mul(w) -> Sigmoid -> y, with a 4 MB weight w."""
    w = numpy_helper.from_array(np.ones((1024, 1024), np.float32), "w")
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"), helper.make_node("Neg", ["r"], ["n"], name="neg"),
             helper.make_node("Abs", ["n"], ["a"], name="abs"), helper.make_node("Mul", ["a", "w"], ["m"], name="mul"),
             helper.make_node("Sigmoid", ["m"], ["y"], name="sigmoid")]
    graph = helper.make_graph(nodes, "toy", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1024, 1024])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1024, 1024])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


TOY_PATTERNS = [NegRelu(), RefusesInCheck(), RefusesInMatch()]


def tampered(fused: onnx.ModelProto) -> onnx.ModelProto:
    """The fused model with every custom node's align_corners flipped: a wrong warp."""
    bad = onnx.ModelProto()
    bad.CopyFrom(fused)
    for node in bad.graph.node:
        for attr in node.attribute:
            if node.domain == "custom.ops" and attr.name == "align_corners":
                attr.i = 1 - attr.i
    return bad


def count(pattern: str, text: str) -> int:
    return len(re.findall(pattern, text))
