"""Pattern plugins written the way docs/plugins.md tells an author to: four correct rewrites and
the wrong ones validate must catch and name (issue 29's table).

Correct: erf GELU -> ``com.microsoft::Gelu``; MatMul + Add -> ``Gemm`` (2-D); a LayerNorm
decomposition -> ``LayerNormalization``; ``x * sigmoid(x)`` -> ``my.ops::Swish`` with a kernel
the plugin brings. Wrong: the erf GELU as a tanh GELU, as ``com.microsoft::FastGelu`` (tanh
too) and as ``com.microsoft::QuickGelu`` (``x * sigmoid(1.702 x)``); Swish with a kernel off by
1e-2.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto, helper

from surgeon import CustomOp, Pattern

SQRT2 = math.sqrt(2.0)


class _ErfGelu(Pattern):
    """The erf GELU as torch exports it: x * (erf(x / sqrt 2) + 1) * 0.5."""

    domains = {"com.microsoft": 1}

    @staticmethod
    def template(op, x):
        return op.Mul(op.Mul(x, op.Add(op.Erf(op.Div(x, SQRT2)), 1.0)), 0.5)


def _erf_gelu_as(class_name: str, doc: str, replacement, domains=None) -> type:
    """A pattern named erf-gelu that writes ``replacement(op, x)`` instead."""
    body = {"__doc__": doc, "name": "erf-gelu", "replacement": staticmethod(replacement)}
    return type(class_name, (_ErfGelu,), body if domains is None else {**body, "domains": domains})


ErfGelu = _erf_gelu_as("ErfGelu", "Correct: onnxruntime's Gelu is the erf GELU.",
                       lambda op, x: op.Gelu(x, _domain="com.microsoft"))
TanhGelu = _erf_gelu_as("TanhGelu", "Wrong: the tanh approximation (opset-20 Gelu, approximate='tanh').",
                        lambda op, x: op.Gelu(x, approximate="tanh"), domains={})
FastGelu = _erf_gelu_as("FastGelu", "Wrong: onnxruntime's FastGelu is the tanh approximation.",
                        lambda op, x: op.FastGelu(x, _domain="com.microsoft"))
QuickGelu = _erf_gelu_as("QuickGelu", "Wrong: x * sigmoid(1.702 x).",
                         lambda op, x: op.QuickGelu(x, alpha=1.702, _domain="com.microsoft"))


class MatMulAddGemm(Pattern):
    """MatMul + Add -> Gemm, for 2-D operands and a bias Gemm can broadcast."""

    name = "matmul-add-gemm"

    @staticmethod
    def template(op, a, b, c):
        return op.Add(op.MatMul(a, b), c)

    def check(self, ctx, match):
        a, b, c = (ctx.shape(match.values[k]) for k in ("a", "b", "c"))
        if a is None or b is None or len(a) != 2 or len(b) != 2:
            return "Gemm takes 2-D operands only"
        if c is None or len(c) > 2:
            return "the bias must broadcast to the product"
        return None

    @staticmethod
    def replacement(op, a, b, c):
        return op.Gemm(a, b, c)


class LayerNorm(Pattern):
    """(x - mean) / sqrt(var + eps) * gamma + beta over the last axis -> LayerNormalization."""

    name = "layer-norm"

    @staticmethod
    def template(op, x, eps, gamma, beta):
        centred = op.Sub(x, op.ReduceMean(x, axes=[-1], _name="mean"))
        var = op.ReduceMean(op.Pow(centred, 2.0), axes=[-1])
        return op.Add(op.Mul(op.Div(centred, op.Sqrt(op.Add(var, eps))), gamma), beta)

    def check(self, ctx, match):
        eps = ctx.constant(match.values["eps"])
        if eps is None or eps.size != 1:
            return "epsilon is not one constant"
        return None

    @staticmethod
    def replacement(op, ctx, x, eps, gamma, beta):
        return op.LayerNormalization(x, gamma, beta, axis=-1, epsilon=float(ctx.constant(eps).reshape(())))


def swish(inputs, attrs, device="cpu"):
    x = inputs[0]
    return [(x / (1.0 + np.exp(-x))).astype(x.dtype)]


def swish_off(inputs, attrs, device="cpu"):
    """Wrong: off by 1e-2."""
    return [swish(inputs, attrs)[0] + np.asarray(1e-2, inputs[0].dtype)]


class Swish(Pattern):
    name = "swish"
    domains = {"my.ops": 1}
    ops = [CustomOp("my.ops", "Swish", kernel=swish)]

    @staticmethod
    def template(op, x):
        return op.Mul(x, op.Sigmoid(x))

    @staticmethod
    def replacement(op, x):
        return op.Swish(x, _domain="my.ops")


class SwishOff(Swish):
    ops = [CustomOp("my.ops", "Swish", kernel=swish_off)]


# -- models ------------------------------------------------------------------------------------

def _value(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def _model(nodes, inputs, outputs, inits=(), opset=20):
    graph = helper.make_graph(nodes, "planted", inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def _const(name, value):
    return helper.make_tensor(name, TensorProto.FLOAT, [], [float(value)])


def gelu_nodes(x: str, y: str, k: int) -> list:
    return [helper.make_node("Div", [x, "sqrt2"], [f"g{k}_div"], name=f"g{k}/Div"),
            helper.make_node("Erf", [f"g{k}_div"], [f"g{k}_erf"], name=f"g{k}/Erf"),
            helper.make_node("Add", [f"g{k}_erf", "one"], [f"g{k}_add"], name=f"g{k}/Add"),
            helper.make_node("Mul", [x, f"g{k}_add"], [f"g{k}_mul"], name=f"g{k}/Mul"),
            helper.make_node("Mul", [f"g{k}_mul", "half"], [y], name=f"g{k}/Mul_1")]


def gelu_model(copies: int = 1, width: int = 256, scale: float = 1.0):
    """``copies`` erf GELUs side by side, each on x times its own factor; y is their mean times
    ``scale`` (small: an error in every GELU then fades end to end)."""
    nodes, inits = [], [_const("sqrt2", SQRT2), _const("one", 1.0), _const("half", 0.5)]
    outs = []
    for k in range(copies):
        inits.append(_const(f"f{k}", 0.5 + (k % 7) * 0.25))
        nodes.append(helper.make_node("Mul", ["x", f"f{k}"], [f"in{k}"], name=f"scale{k}"))
        nodes += gelu_nodes(f"in{k}", f"out{k}", k)
        outs.append(f"out{k}")
    if copies == 1 and scale == 1.0:
        nodes.append(helper.make_node("Identity", ["out0"], ["y"], name="result"))
    else:
        inits.append(_const("scale", scale / copies))
        nodes += [helper.make_node("Sum", outs, ["total"], name="sum"),
                  helper.make_node("Mul", ["total", "scale"], ["y"], name="mean")]
    return _model(nodes, [_value("x", [4, width])], [_value("y", [4, width])], inits)


def matmul_add_model(k: int = 64):
    rng = np.random.default_rng(3)
    w = helper.make_tensor("w", TensorProto.FLOAT, [k, 32], rng.standard_normal((k, 32)).astype(np.float32).ravel())
    b = helper.make_tensor("b", TensorProto.FLOAT, [32], rng.standard_normal(32).astype(np.float32))
    nodes = [helper.make_node("MatMul", ["x", "w"], ["p"], name="mm"),
             helper.make_node("Add", ["p", "b"], ["y"], name="add")]
    return _model(nodes, [_value("x", [16, k])], [_value("y", [16, 32])], [w, b])


def layer_norm_model(width: int = 48):
    rng = np.random.default_rng(4)
    gamma = helper.make_tensor("gamma", TensorProto.FLOAT, [width], (1 + 0.1 * rng.standard_normal(width)).astype(np.float32))
    beta = helper.make_tensor("beta", TensorProto.FLOAT, [width], (0.1 * rng.standard_normal(width)).astype(np.float32))
    nodes = [helper.make_node("ReduceMean", ["x"], ["mean"], name="ln/mean", axes=[-1]),
             helper.make_node("Sub", ["x", "mean"], ["centred"], name="ln/sub"),
             helper.make_node("Pow", ["centred", "two"], ["sq"], name="ln/pow"),
             helper.make_node("ReduceMean", ["sq"], ["var"], name="ln/var", axes=[-1]),
             helper.make_node("Add", ["var", "eps"], ["var_eps"], name="ln/add_eps"),
             helper.make_node("Sqrt", ["var_eps"], ["std"], name="ln/sqrt"),
             helper.make_node("Div", ["centred", "std"], ["normed"], name="ln/div"),
             helper.make_node("Mul", ["normed", "gamma"], ["scaled"], name="ln/mul"),
             helper.make_node("Add", ["scaled", "beta"], ["y"], name="ln/add")]
    return _model(nodes, [_value("x", [8, 16, width])], [_value("y", [8, 16, width])],
                  [_const("two", 2.0), _const("eps", 1e-5), gamma, beta], opset=17)


def swish_model():
    nodes = [helper.make_node("Sigmoid", ["x"], ["s"], name="sig"),
             helper.make_node("Mul", ["x", "s"], ["y"], name="mul")]
    return _model(nodes, [_value("x", [4, 64])], [_value("y", [4, 64])])
