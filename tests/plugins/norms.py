"""Pattern plugins written from docs/plugins.md, for rules whose errors show only at some scales
(issue 41): RMSNorm -> RMSNormalization, right and with its epsilon planted outside the square
root; HardSwish spelled with Clip and with Max/Min, right and with HardSigmoid's default slope
(0.2) for torch's 1/6; RMSNorm written as a contrib op in a domain onnxruntime does not have.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from surgeon import Const, Pattern

EPS = 1e-6


class RMSNorm(Pattern):
    """x / sqrt(mean(x^2) + eps) * w over the last axis -> RMSNormalization (opset 23)."""

    name = "rms-norm"

    @staticmethod
    def template(op, x, w=Const(), eps=Const()):
        ms = op.ReduceMean(op.Pow(x, 2.0), [-1], keepdims=1)
        return op.Mul(op.Mul(x, op.Reciprocal(op.Sqrt(op.Add(ms, eps)))), w)

    @staticmethod
    def replacement(op, ctx, x, w, eps):
        return op.RMSNormalization(x, w, axis=-1, epsilon=float(ctx.constant(eps).reshape(())))


class PlantedRMSNorm(RMSNorm):
    """Wrong: x / (sqrt(mean(x^2)) + eps) * w, the epsilon outside the square root."""

    name = "planted-rms-norm"

    @staticmethod
    def replacement(op, ctx, x, w, eps):
        ms = op.ReduceMean(op.Mul(x, x), np.array([-1], np.int64), keepdims=1)
        return op.Mul(op.Div(x, op.Add(op.Sqrt(ms), eps)), w)


def unit_rows(shape, dtype, rng):
    """rows of magnitude 1 to 2"""
    return (rng.uniform(1.0, 2.0, shape) * rng.choice([-1.0, 1.0], shape)).astype(dtype)


class PlantedRMSNormOwnDraws(PlantedRMSNorm):
    """The planted rewrite, declaring its input drawn at magnitude 1 to 2 only."""

    name = "planted-rms-norm-own-draws"
    draw_inputs = {0: unit_rows}


class ContribRMSNorm(RMSNorm):
    """Wrong domain: onnxruntime registers SimplifiedLayerNormalization in the default domain only."""

    name = "contrib-rms-norm"
    domains = {"com.microsoft": 1}

    @staticmethod
    def replacement(op, ctx, x, w, eps):
        return op.SimplifiedLayerNormalization(x, w, axis=-1, epsilon=float(ctx.constant(eps).reshape(())),
                                               _domain="com.microsoft")


def _hard_swish(op, x):
    return op.HardSwish(x)


def _hard_sigmoid_default_slope(op, x):
    return op.Mul(x, op.HardSigmoid(x, alpha=0.2, beta=0.5))  # torch's slope is 1/6


def _hard_swish_pattern(name: str, form: str, replacement) -> type:
    def clip(op, x):
        return op.Div(op.Mul(x, op.Clip(op.Add(x, 3.0), 0.0, 6.0)), 6.0)

    def max_min(op, x):
        return op.Div(op.Mul(x, op.Min(op.Max(op.Add(x, 3.0), 0.0), 6.0)), 6.0)

    template = {"clip": clip, "max-min": max_min}[form]
    return type(name, (Pattern,), {"name": name, "template": staticmethod(template),
                                   "replacement": staticmethod(replacement)})


HARD_SWISH = {(form, right): _hard_swish_pattern(f"hard-swish-{form}{'' if right else '-slope'}", form,
                                                 _hard_swish if right else _hard_sigmoid_default_slope)
              for form in ("clip", "max-min") for right in (True, False)}


class ReluSum(Pattern):
    """x + relu(x) -> 2 relu(x) + min(x, 0), reading both: right only because the model computes
    one from the other."""

    name = "relu-sum"

    @staticmethod
    def template(op, x, r):
        return op.Add(x, r)

    def check(self, ctx, match):
        made = ctx.producer(match.values["r"])
        if made is None or made.op_type != "Relu" or made.inputs[0] != match.values["x"]:
            return "not x + relu(x)"
        return None

    @staticmethod
    def replacement(op, x, r):
        return op.Add(op.Mul(r, 2.0), op.Min(x, 0.0))


# -- models ------------------------------------------------------------------------------------

def _model(nodes, x_dims, inits, opset):
    graph = helper.make_graph(nodes, "norms", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, x_dims)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def rms_norm_model(dims=(2, 512), opset=23, scaled_first=False):
    """x * (1 / sqrt(mean(x^2) + 1e-6)) * w, as torch exports an RMSNorm (``scaled_first``: of
    1.5 x, so that the rewrite reads a value the model computes)."""
    w = np.random.default_rng(3).uniform(0.5, 1.5, dims[-1]).astype(np.float32)
    inits = [helper.make_tensor("w", TensorProto.FLOAT, [dims[-1]], w),
             helper.make_tensor("two", TensorProto.FLOAT, [], [2.0]),
             helper.make_tensor("axes", TensorProto.INT64, [1], [-1]),
             helper.make_tensor("eps", TensorProto.FLOAT, [], [EPS])]
    first = []
    if scaled_first:
        inits.append(helper.make_tensor("k", TensorProto.FLOAT, [], [1.5]))
        first = [helper.make_node("Mul", ["x_in", "k"], ["x"], name="scale_first")]
    nodes = [*first, helper.make_node("Pow", ["x", "two"], ["sq"], name="rms/pow"),
             helper.make_node("ReduceMean", ["sq", "axes"], ["ms"], name="rms/mean", keepdims=1),
             helper.make_node("Add", ["ms", "eps"], ["ms_eps"], name="rms/add"),
             helper.make_node("Sqrt", ["ms_eps"], ["rms"], name="rms/sqrt"),
             helper.make_node("Reciprocal", ["rms"], ["inv"], name="rms/inv"),
             helper.make_node("Mul", ["x", "inv"], ["normed"], name="rms/mul"),
             helper.make_node("Mul", ["normed", "w"], ["y"], name="rms/scale")]
    model = _model(nodes, list(dims), inits, opset)
    if scaled_first:
        model.graph.input[0].name = "x_in"
    return model


def hard_swish_model(form: str, dims=(4, 64)):
    """x * clip(x + 3, 0, 6) / 6, with Clip or with Max and Min."""
    inits = [helper.make_tensor(n, TensorProto.FLOAT, [], [v]) for n, v in (("three", 3.0), ("zero", 0.0),
                                                                           ("six", 6.0))]
    if form == "clip":
        gate = [helper.make_node("Clip", ["shifted", "zero", "six"], ["gate"], name="hs/clip")]
    else:
        gate = [helper.make_node("Max", ["shifted", "zero"], ["low"], name="hs/max"),
                helper.make_node("Min", ["low", "six"], ["gate"], name="hs/min")]
    nodes = [helper.make_node("Add", ["x", "three"], ["shifted"], name="hs/add"), *gate,
             helper.make_node("Mul", ["x", "gate"], ["prod"], name="hs/mul"),
             helper.make_node("Div", ["prod", "six"], ["y"], name="hs/div")]
    return _model(nodes, list(dims), inits, 14)


def small_rows(dims=(2, 512), rms=6e-4, seed=0) -> np.ndarray:
    """A row of magnitude 1, then rows at ``rms``: where an epsilon's place shows."""
    x = np.random.default_rng(seed).standard_normal(dims).astype(np.float32)
    x[1:] *= rms
    return x


def relu_sum_model(dims=(4, 64)):
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"), helper.make_node("Add", ["x", "r"], ["y"], name="add")]
    return _model(nodes, list(dims), [], 18)
