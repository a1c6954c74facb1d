"""Matching cost against the graph's size: surgeon vs onnxscript's rewriter, same models, one process.

Fuses 1,000 / 2,000 / 4,000 / 16,000 copies of a five-node template (the erf GELU as torch
exports it: Div, Erf, Add, Mul, Mul -> com.microsoft::Gelu), each copy fed by its own Mul, all
summed. surgeon: ``surgeon.fuse(proto, plugins=[ErfGelu])``; onnxscript: the same rule as a
``RewriteRule`` through ``onnxscript.rewriter.rewrite(proto, [rule])``. Both take the ModelProto
and give one back (onnxscript's serialisation both ways included, as surgeon's model copy and
clean-up are). Prints the CPU seconds per copy (median of --repeat runs, interleaved), the ratio
surgeon / onnxscript, and each one's time per copy against its own at the smallest size (flat:
matching linear in the graph).

    python benchmarks/match_scaling.py [--copies 1000 2000 4000 16000] [--repeat 3] [--smoke]

--smoke (the tests run it, seconds): 20 and 40 copies, one run each.

Needs onnxscript (installed with the test extra).
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import time

import numpy as np
from onnx import TensorProto, helper

import surgeon

SQRT2 = math.sqrt(2.0)


class ErfGelu(surgeon.Pattern):
    name = "erf-gelu"
    domains = {"com.microsoft": 1}

    @staticmethod
    def template(op, x):
        return op.Mul(op.Mul(x, op.Add(op.Erf(op.Div(x, SQRT2)), 1.0)), 0.5)

    @staticmethod
    def replacement(op, x):
        return op.Gelu(x, _domain="com.microsoft")


def onnxscript_rule():
    from onnxscript.rewriter import pattern

    def target(op, x):
        return op.Mul(op.Mul(x, op.Add(op.Erf(op.Div(x, SQRT2)), 1.0)), 0.5)

    def replacement(op, x):
        return op.Gelu(x, _domain="com.microsoft")

    return pattern.RewriteRule(target, replacement)


def gelu_model(copies: int):
    def scalar(name, value):
        return helper.make_tensor(name, TensorProto.FLOAT, [], [float(value)])

    inits = [scalar("sqrt2", SQRT2), scalar("one", 1.0), scalar("half", 0.5)]
    nodes, outs = [], []
    for k in range(copies):
        inits.append(scalar(f"f{k}", 0.5 + (k % 7) * 0.25))
        nodes += [helper.make_node("Mul", ["x", f"f{k}"], [f"in{k}"], name=f"scale{k}"),
                  helper.make_node("Div", [f"in{k}", "sqrt2"], [f"d{k}"], name=f"gelu{k}/Div"),
                  helper.make_node("Erf", [f"d{k}"], [f"e{k}"], name=f"gelu{k}/Erf"),
                  helper.make_node("Add", [f"e{k}", "one"], [f"a{k}"], name=f"gelu{k}/Add"),
                  helper.make_node("Mul", [f"in{k}", f"a{k}"], [f"m{k}"], name=f"gelu{k}/Mul"),
                  helper.make_node("Mul", [f"m{k}", "half"], [f"out{k}"], name=f"gelu{k}/Mul_1")]
        outs.append(f"out{k}")
    nodes.append(helper.make_node("Sum", outs, ["y"], name="sum"))
    graph = helper.make_graph(nodes, "gelus", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    return model


def cpu(fn) -> float:
    gc.collect()
    start = time.process_time()
    fn()
    return time.process_time() - start


def check(model, fused_surgeon, fused_onnxscript, copies: int) -> None:
    """Both rewrote every copy, into the same op."""
    for label, fused in (("surgeon", fused_surgeon), ("onnxscript", fused_onnxscript)):
        gelus = sum(n.op_type == "Gelu" and n.domain == "com.microsoft" for n in fused.graph.node)
        if gelus != copies or len(fused.graph.node) != 2 * copies + 1:
            raise SystemExit(f"{label} rewrote {gelus} of {copies} copies ({len(fused.graph.node)} nodes left)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, nargs="+", default=[1000, 2000, 4000, 16000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="check the script in seconds: 20 and 40 copies, one run")
    args = parser.parse_args()
    if args.smoke:
        args.copies, args.repeat = [20, 40], 1
    from onnxscript.rewriter import rewrite

    rule = onnxscript_rule()
    plugins = surgeon.PluginSet.of([ErfGelu])
    rows = []
    for copies in args.copies:
        model = gelu_model(copies)
        check(model, surgeon.fuse(model, plugins=plugins).model, rewrite(model, [rule]), copies)
        ours, theirs = [], []
        for _ in range(args.repeat):  # interleaved: a slow spell of the machine hits both
            ours.append(cpu(lambda: surgeon.fuse(model, plugins=plugins)))
            theirs.append(cpu(lambda: rewrite(model, [rule])))
        rows.append((copies, statistics.median(ours), statistics.median(theirs)))
    base_ours, base_theirs = rows[0][1] / rows[0][0], rows[0][2] / rows[0][0]
    print(f"{'copies':>7}  {'surgeon s':>9}  {'onnxscript s':>12}  {'surgeon/onnxscript':>18}  "
          f"{'surgeon us/copy':>15}  {'vs first':>8}  {'onnxscript us/copy':>18}  {'vs first':>8}")
    for copies, ours, theirs in rows:
        print(f"{copies:>7}  {ours:>9.2f}  {theirs:>12.2f}  {ours / theirs:>17.2f}x  {ours / copies * 1e6:>15.0f}  "
              f"{ours / copies / base_ours:>7.2f}x  {theirs / copies * 1e6:>18.0f}  {theirs / copies / base_theirs:>7.2f}x")
    print(f"(CPU seconds, median of {args.repeat}; numpy {np.__version__})")


if __name__ == "__main__":
    main()
