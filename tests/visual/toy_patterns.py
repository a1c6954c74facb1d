"""Toy patterns for the visual tests (a rewrite, a refusal in check(), one in match()), the
sample they draw, and a count of a pattern in a report; their models are in tests.builders."""

from __future__ import annotations

import re
from pathlib import Path

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


TOY_PATTERNS = [NegRelu(), RefusesInCheck(), RefusesInMatch()]


def count(pattern: str, text: str) -> int:
    """How often ``pattern`` (a regular expression) occurs in ``text``."""
    return len(re.findall(pattern, text))
