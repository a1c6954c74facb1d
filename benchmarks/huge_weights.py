"""Peak memory of `surgeon inspect` and `surgeon fuse` on a graph with multi-GB external
weights, against the same commands on the same graph without its data (each weight a typed
graph input instead), both measured here in the same run. The target: at most 1.5x.

The weights are where memory used to explode: a 1-D weight added to a graph input (onnx's
data propagation), a weight added to an affine grid (folding and probing read it), and a large
MatMul weight (copied to the output as it is). The data file is sparse: it costs no disk until
`fuse` copies it. Each command runs in its own process under an address-space limit, so a
regression fails fast instead of taking the machine down.

    python benchmarks/huge_weights.py [--gb 3.7] [--limit-gb 16] [--workdir DIR] [--skip-fuse] [--smoke]

--smoke (the tests run it, seconds): the same commands on 4 MB of weights; its ratios say
nothing of multi-GB weights.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from surgeon.io.load import skeleton_model

LOAD_GRAPH = "import onnx, sys; onnx.load(sys.argv[1], load_external_data=False)"


def build(total_bytes: int) -> tuple[onnx.ModelProto, list[tuple[str, int]]]:
    """The graph, and (weight, bytes) in file order: 60% a 1-D vector, 15% a grid offset,
    25% a square MatMul weight."""
    vector = int(total_bytes * 0.60) // 4
    side = int((total_bytes * 0.15 / 8) ** 0.5)  # the grid offset is [1, side, side, 2]
    square = int((total_bytes * 0.25 / 4) ** 0.5)
    weights = [("vec", [vector]), ("offset", [1, side, side, 2]), ("mat", [square, square])]
    nodes = [
        helper.make_node("Add", ["x", "vec"], ["x_plus"], name="add_vector"),
        helper.make_node("AffineGrid", ["theta", "size"], ["grid0"], name="grid", align_corners=0),
        helper.make_node("Add", ["grid0", "offset"], ["grid"], name="add_offset"),
        helper.make_node("GridSample", ["img", "grid"], ["warped"], name="sample", align_corners=0),
        helper.make_node("MatMul", ["rows", "mat"], ["projected"], name="matmul"),
    ]
    inputs = [("x", [vector]), ("theta", [1, 2, 3]), ("img", [1, 1, side, side]), ("rows", [4, square])]
    outputs = [("x_plus", [vector]), ("warped", [1, 1, side, side]), ("projected", [4, square])]
    size = numpy_helper.from_array(np.array([1, 1, side, side], np.int64), "size")
    graph = helper.make_graph(nodes, "huge_weights",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, d) for n, d in inputs],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, d) for n, d in outputs], [size])
    layout, offset = [], 0
    for name, dims in weights:
        tensor = graph.initializer.add(name=name, data_type=TensorProto.FLOAT, dims=dims,
                                       data_location=TensorProto.EXTERNAL)
        length = int(np.prod(dims)) * 4
        for key, value in (("location", "model.onnx.data"), ("offset", str(offset)), ("length", str(length))):
            tensor.external_data.add(key=key, value=value)
        layout.append((name, length))
        offset += -(-length // 4096) * 4096
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 10
    return model, layout


def measure(cmd: list[str], limit: int) -> tuple[int | None, str]:
    """Peak RSS of one child process (None when it failed), and its last stderr line."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=cap)
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode().strip().splitlines()
    return (usage.ru_maxrss * 1024 if status == 0 else None), (err[-1] if err else "")


def show(peak: int | None, why: str) -> str:
    return f"{peak / 2**20:7.0f} MiB" if peak is not None else f"failed ({why[:90]})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=3.7, help="external weights in GB (default 3.7)")
    parser.add_argument("--limit-gb", type=float, default=16, help="address-space limit per command")
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--skip-fuse", action="store_true", help="inspect only (fuse copies the weights)")
    parser.add_argument("--smoke", action="store_true", help="check the script in seconds: 4 MB of weights")
    args = parser.parse_args()
    if args.smoke:
        args.gb = 0.004
        print("SMOKE: 4 MB of weights")
    limit = int(args.limit_gb * 2**30)
    surgeon = [sys.executable, "-m", "surgeon"]
    with tempfile.TemporaryDirectory(dir=args.workdir) as work:
        model, layout = build(int(args.gb * 1e9))
        full, bare = os.path.join(work, "model.onnx"), os.path.join(work, "bare.onnx")
        onnx.save(model, full)
        with open(full + ".data", "wb") as f:
            f.truncate(sum(-(-n // 4096) * 4096 for _, n in layout))  # sparse: no disk until copied
        onnx.save(skeleton_model(model), bare)  # the same graph, its weights typed inputs
        data = sum(n for _, n in layout)
        print(f"graph: {len(model.graph.node)} nodes, {data / 1e9:.2f} GB of external weights "
              f"({', '.join(f'{n} {b / 1e9:.2f} GB' for n, b in layout)})")
        peak, why = measure([sys.executable, "-c", LOAD_GRAPH, full], limit)
        print(f"onnx.load, graph only          : {show(peak, why)}")
        commands = [("inspect", lambda p, o: ["inspect", p])]
        if not args.skip_fuse:
            commands.append(("fuse", lambda p, o: ["fuse", p, o]))
        for label, argv in commands:
            base, why_base = measure(surgeon + argv(bare, os.path.join(work, "bare.fused.onnx")), limit)
            heavy, why_heavy = measure(surgeon + argv(full, os.path.join(work, "fused.onnx")), limit)
            ratio = f"{heavy / base:.2f}x" if base and heavy else "n/a"
            print(f"surgeon {label:7s} without data : {show(base, why_base)}")
            print(f"surgeon {label:7s} with the data: {show(heavy, why_heavy)}   ratio {ratio} (target <= 1.5x)")


if __name__ == "__main__":
    main()
