"""Matching 5,000 copies of a template: surgeon vs onnxscript's rewriter, in one process and as the command line.

Three templates, 5,000 copies each, every copy fed by its own Mul: of the previous copy's output
(``--layout chain``, the default, as activations follow one another in a network), or of the
input, with one Sum reading every copy (``--layout sum``, as match_scaling.py builds them). The erf GELU (Div, Erf, Add, Mul, Mul -> com.microsoft::Gelu), HardSwish written
x * Clip(x + 3, 0, 6) / 6 and x * Min(Max(x + 3, 0), 6) / 6 (-> HardSwish, opset 18).

(a) one process: ``surgeon.fuse(proto, plugins=[P])`` vs ``onnxscript.rewriter.rewrite(proto,
    [rule])``, CPU seconds; both take the ModelProto and give one back.
(b) the command line: ``surgeon fuse in.onnx out.onnx --plugin match_cli:P`` vs ``python -c``
    with a script that loads the file, rewrites it with onnxscript and saves it (onnx.load,
    rewrite, onnx.save); wall and CPU (user + system of the child) seconds. Both are started
    through this interpreter's own bin/ (no pyenv shim in front of either).

Each cell is the median of --repeat runs, surgeon and onnxscript interleaved, with the range;
the last column is surgeon / onnxscript of the medians. Both must rewrite every copy.

    python benchmarks/match_cli.py [--copies 5000] [--repeat 5] [--layout chain|sum] [--only gelu ...] [--smoke]

--smoke (the tests run it, seconds): 20 copies, one run each.

Needs onnxscript (installed with the test extra).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx
from onnx import TensorProto, helper

import surgeon

from match_scaling import SQRT2, ErfGelu  # noqa: E402 - benchmarks/ is on the path (the script's folder)

__all__ = ["ErfGelu", "HardSwishClip", "HardSwishMaxMin"]  # the --plugin match_cli:Name targets


# -- the patterns (surgeon: importable as --plugin match_cli:Name) -------------------------------


class HardSwishClip(surgeon.Pattern):
    name = "hard-swish-clip"

    @staticmethod
    def template(op, x):
        return op.Div(op.Mul(x, op.Clip(op.Add(x, 3.0), 0.0, 6.0)), 6.0)

    @staticmethod
    def replacement(op, x):
        return op.HardSwish(x)


class HardSwishMaxMin(surgeon.Pattern):
    name = "hard-swish-max-min"

    @staticmethod
    def template(op, x):
        return op.Div(op.Mul(x, op.Min(op.Max(op.Add(x, 3.0), 0.0), 6.0)), 6.0)

    @staticmethod
    def replacement(op, x):
        return op.HardSwish(x)


# The same rules for onnxscript, as source: the command-line run executes it in a python that
# never imports surgeon, and the in-process run executes the same text.
ONNXSCRIPT_RULES = {
    "gelu": f"""
def target(op, x):
    return op.Mul(op.Mul(x, op.Add(op.Erf(op.Div(x, {SQRT2!r})), 1.0)), 0.5)
def replacement(op, x):
    return op.Gelu(x, _domain="com.microsoft")
""",
    "hardswish-clip": """
def target(op, x):
    return op.Div(op.Mul(x, op.Clip(op.Add(x, 3.0), 0.0, 6.0)), 6.0)
def replacement(op, x):
    return op.HardSwish(x)
""",
    "hardswish-max-min": """
def target(op, x):
    return op.Div(op.Mul(x, op.Min(op.Max(op.Add(x, 3.0), 0.0), 6.0)), 6.0)
def replacement(op, x):
    return op.HardSwish(x)
""",
}
ONNXSCRIPT_CLI = """import sys
import onnx
from onnxscript.rewriter import pattern, rewrite
{rule}
onnx.save(rewrite(onnx.load(sys.argv[1]), [pattern.RewriteRule(target, replacement)]), sys.argv[2])
"""


def onnxscript_rule(source: str):
    from onnxscript.rewriter import pattern

    space: dict = {}
    exec(source, space)  # noqa: S102 - our own text, above
    return pattern.RewriteRule(space["target"], space["replacement"])


# -- the models ---------------------------------------------------------------------------------


def _scalar(name, value):
    return helper.make_tensor(name, TensorProto.FLOAT, [], [float(value)])


def _model(copies: int, consts: dict, body, layout: str) -> onnx.ModelProto:
    """``chain``: each copy reads its own Mul of the previous copy's output, as activations in a
    network do; ``sum``: each copy reads its own Mul of the input, and one Sum reads them all."""
    inits = [_scalar(k, v) for k, v in consts.items()]
    nodes, outs, prev = [], [], "x"
    for k in range(copies):
        inits.append(_scalar(f"f{k}", 0.5 + (k % 7) * 0.25))
        nodes.append(helper.make_node("Mul", [prev, f"f{k}"], [f"in{k}"], name=f"scale{k}"))
        nodes += body(k, f"in{k}", f"out{k}")
        outs.append(f"out{k}")
        prev = f"out{k}" if layout == "chain" else "x"
    if layout == "chain":
        nodes.append(helper.make_node("Identity", [prev], ["y"], name="last"))
    else:
        nodes.append(helper.make_node("Sum", outs, ["y"], name="sum"))
    graph = helper.make_graph(nodes, "copies", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    return model


def gelu_model(copies: int, layout: str) -> onnx.ModelProto:
    def body(k, x, y):
        return [helper.make_node("Div", [x, "sqrt2"], [f"d{k}"], name=f"gelu{k}/Div"),
                helper.make_node("Erf", [f"d{k}"], [f"e{k}"], name=f"gelu{k}/Erf"),
                helper.make_node("Add", [f"e{k}", "one"], [f"a{k}"], name=f"gelu{k}/Add"),
                helper.make_node("Mul", [x, f"a{k}"], [f"m{k}"], name=f"gelu{k}/Mul"),
                helper.make_node("Mul", [f"m{k}", "half"], [y], name=f"gelu{k}/Mul_1")]
    return _model(copies, {"sqrt2": SQRT2, "one": 1.0, "half": 0.5}, body, layout)


def hardswish_model(copies: int, form: str, layout: str) -> onnx.ModelProto:
    def body(k, x, y):
        if form == "clip":
            gate = [helper.make_node("Clip", [f"a{k}", "zero", "six"], [f"c{k}"], name=f"hs{k}/Clip")]
        else:
            gate = [helper.make_node("Max", [f"a{k}", "zero"], [f"mx{k}"], name=f"hs{k}/Max"),
                    helper.make_node("Min", [f"mx{k}", "six"], [f"c{k}"], name=f"hs{k}/Min")]
        return [helper.make_node("Add", [x, "three"], [f"a{k}"], name=f"hs{k}/Add"), *gate,
                helper.make_node("Mul", [x, f"c{k}"], [f"m{k}"], name=f"hs{k}/Mul"),
                helper.make_node("Div", [f"m{k}", "six"], [y], name=f"hs{k}/Div")]
    return _model(copies, {"three": 3.0, "zero": 0.0, "six": 6.0}, body, layout)


# name -> (surgeon pattern, model builder, the op both must write)
CASES = {
    "gelu": (ErfGelu, gelu_model, ("com.microsoft", "Gelu")),
    "hardswish-clip": (HardSwishClip, lambda n, layout: hardswish_model(n, "clip", layout), ("", "HardSwish")),
    "hardswish-max-min": (HardSwishMaxMin, lambda n, layout: hardswish_model(n, "max-min", layout), ("", "HardSwish")),
}


# -- measuring ----------------------------------------------------------------------------------


def cpu(fn):
    gc.collect()
    start = time.process_time()
    result = fn()
    return time.process_time() - start, result


def child(cmd: list[str], env: dict) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one command run to the end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd[:3])} ... exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def check(label: str, model: onnx.ModelProto, op: tuple[str, str], copies: int) -> None:
    """Every copy rewritten into the op: one node per copy, its feeding Mul per copy, the Sum."""
    made = sum((n.domain, n.op_type) == op for n in model.graph.node)
    if made != copies or len(model.graph.node) != 2 * copies + 1:
        raise SystemExit(f"{label} rewrote {made} of {copies} copies ({len(model.graph.node)} nodes left)")


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cell(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} [{min(values):.3f}-{max(values):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="+", choices=sorted(CASES), default=sorted(CASES))
    parser.add_argument("--layout", choices=("chain", "sum"), default="chain",
                        help="chain: copies one after another (default); sum: side by side, one Sum reads them all")
    parser.add_argument("--smoke", action="store_true", help="check the script in seconds: 20 copies, one run")
    args = parser.parse_args()
    if args.smoke:
        args.copies, args.repeat = 20, 1
    import numpy as np
    import onnxscript
    from onnxscript.rewriter import rewrite

    bindir = Path(sys.executable).parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent),
                                                                      os.environ.get("PYTHONPATH")]))}
    print(f"CPU: {cpu_name()}, {os.cpu_count()} logical cores; python {platform.python_version()}, "
          f"onnx {onnx.__version__}, onnxscript {onnxscript.__version__}, numpy {np.__version__}")
    print(f"{args.copies} copies, {args.layout} layout; seconds: median [min-max] of {args.repeat}, surgeon and onnxscript interleaved")
    print(f"{'template':<18} {'measure':<9} {'surgeon s':>22} {'onnxscript s':>22} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only:
            pattern, build, op = CASES[name]
            model = build(args.copies, args.layout)
            rule = onnxscript_rule(ONNXSCRIPT_RULES[name])
            plugins = [pattern]
            src, ours_out, theirs_out = (os.path.join(tmp, f"{name}{s}.onnx") for s in ("", ".surgeon", ".onnxscript"))
            onnx.save(model, src)
            script = ONNXSCRIPT_CLI.format(rule=ONNXSCRIPT_RULES[name])
            ours_cmd = [str(bindir / "surgeon"), "fuse", src, ours_out, "--plugin", f"match_cli:{pattern.__name__}"]
            theirs_cmd = [sys.executable, "-c", script, src, theirs_out]
            inproc: tuple[list, list] = ([], [])
            wall: tuple[list, list] = ([], [])
            cpus: tuple[list, list] = ([], [])
            # Untimed first calls, checked: each side's one-off costs (tracing a template, its
            # imports) belong to the command-line rows, not to matching.
            check(f"surgeon ({name}, one process)", surgeon.fuse(model, plugins=plugins, quiet=True).model, op,
                  args.copies)
            check(f"onnxscript ({name}, one process)", rewrite(model, [rule]), op, args.copies)
            for k in range(args.repeat):  # interleaved: a slow spell of the machine hits both
                inproc[0].append(cpu(lambda: surgeon.fuse(model, plugins=plugins, quiet=True))[0])
                inproc[1].append(cpu(lambda: rewrite(model, [rule]))[0])
                for side, cmd in enumerate((ours_cmd, theirs_cmd)):
                    w, c = child(cmd, env)
                    wall[side].append(w)
                    cpus[side].append(c)
                if k == 0:
                    check(f"surgeon fuse ({name})", onnx.load(ours_out), op, args.copies)
                    check(f"onnxscript script ({name})", onnx.load(theirs_out), op, args.copies)
            for measure, (ours, theirs) in (("1 process", inproc), ("cli wall", wall), ("cli cpu", cpus)):
                ratio = statistics.median(ours) / statistics.median(theirs)
                print(f"{name:<18} {measure:<9} {cell(ours):>22} {cell(theirs):>22} {ratio:>6.2f}x")


if __name__ == "__main__":
    main()
