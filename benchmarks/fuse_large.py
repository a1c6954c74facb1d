"""surgeon fuse on a ~30,000-node model with ~370 MB of weights and 200 warp chains.

Prints wall time and peak memory of `surgeon fuse` as ratios to `onnx.load` + `onnx.save` of
the same model, both measured here in the same run (each in its own process, median of
--repeat runs). Then the external-data case: the same graph with 3 GB and with 30 MB of
weights, both in external data; the ratio of their fuse times.

    python benchmarks/fuse_large.py [--repeat 3] [--skip-external] [--skip-in-memory] [--workdir DIR] [--smoke]

--smoke (the tests run it, seconds): the same runs on a 100-block model with 4 chains and 2 MB
of weights (external: 1 MB and 4 MB), once each; its ratios say nothing of large models.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


BLOCKS, CHAINS = 9800, 200
IN_MEMORY_BYTES = 370_000_000
EXTERNAL = (("30 MB", 30_000_000), ("3 GB", 3_000_000_000))  # (label, weight bytes): small, large
# --smoke: the models' sizes, as in_memory_case's and external_case's arguments
SMOKE_SIZES = {"blocks": 100, "chains": 4}
SMOKE_IN_MEMORY, SMOKE_EXTERNAL = 2_000_000, (("1 MB", 1_000_000), ("4 MB", 4_000_000))
BASELINE = "import onnx, sys; onnx.save(onnx.load(sys.argv[1]), sys.argv[2])"


def measure(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS bytes of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode()
    if status != 0:
        raise SystemExit(f"command failed: {' '.join(cmd)}\n{err}")
    return wall, usage.ru_maxrss * 1024


def median_of(cmd: list[str], repeat: int, output: str) -> tuple[float, int]:
    runs = []
    for _ in range(repeat):
        for path in (output, output + ".data"):  # each run writes a new file, none replaces one
            if os.path.exists(path):
                os.unlink(path)
        os.sync()  # the previous run's writes are not this run's cost
        runs.append(measure(cmd))
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


def fuse_cmd(src: str, dst: str, report: str | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "surgeon", "fuse", src, dst]
    return cmd + (["--report", report] if report else [])


def write_model(path: str, weight_bytes: int, external: bool, blocks: int, chains: int) -> int:
    """The model is built in a child process, then flushed to disk, so that neither the
    builder's memory nor its pending writes land on the measured runs."""
    cmd = [sys.executable, os.path.join(os.path.dirname(__file__), "large_model.py"), path,
           "--blocks", str(blocks), "--chains", str(chains), "--weight-bytes", str(weight_bytes)]
    out = subprocess.run(cmd + (["--external"] if external else []), check=True, capture_output=True, text=True)
    os.sync()
    return int(out.stdout.strip())


def in_memory_case(work: str, repeat: int, weight_bytes: int = IN_MEMORY_BYTES, blocks: int = BLOCKS,
                   chains: int = CHAINS) -> None:
    src = os.path.join(work, "large.onnx")
    nodes = write_model(src, weight_bytes, external=False, blocks=blocks, chains=chains)
    size = os.path.getsize(src)
    copy, fused, report = (os.path.join(work, n) for n in ("copy.onnx", "fused.onnx", "report.json"))
    base_t, base_m = median_of([sys.executable, "-c", BASELINE, src, copy], repeat, copy)
    fuse_t, fuse_m = median_of(fuse_cmd(src, fused, report), repeat, fused)
    rewrites = len(json.load(open(report))["rewrites"])
    print(f"model: {nodes} nodes, {size / 1e6:.0f} MB, {chains} chains; fused {rewrites}")
    print(f"onnx.load+save : {base_t:6.2f} s  {base_m / 2**30:5.2f} GiB peak")
    print(f"surgeon fuse   : {fuse_t:6.2f} s  {fuse_m / 2**30:5.2f} GiB peak")
    print(f"ratio          : time {fuse_t / base_t:.2f}x  memory {fuse_m / base_m:.2f}x  (target <= 1.3x both)")


def external_case(work: str, repeat: int, sizes=EXTERNAL, blocks: int = BLOCKS, chains: int = CHAINS) -> None:
    times = {}
    for label, weight in sizes:
        folder = os.path.join(work, label.replace(" ", ""))
        os.makedirs(folder, exist_ok=True)
        src = os.path.join(folder, "model.onnx")
        write_model(src, weight, external=True, blocks=blocks, chains=chains)
        data = os.path.getsize(src + ".data")
        fused = os.path.join(folder, "fused.onnx")
        t, m = median_of(fuse_cmd(src, fused), repeat, fused)
        times[label] = t
        print(f"external {label:>5}: {data / 1e9:5.2f} GB data, fuse {t:6.2f} s, {m / 2**30:5.2f} GiB peak")
        for f in os.listdir(folder):
            os.unlink(os.path.join(folder, f))
    (small, _), (large, _) = sizes
    print(f"ratio {large} / {small}: {times[large] / times[small]:.2f}x  (target <= 2x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-external", action="store_true")
    parser.add_argument("--skip-in-memory", action="store_true")
    parser.add_argument("--workdir", default=None, help="where to write the models (needs ~7 GB)")
    parser.add_argument("--smoke", action="store_true", help="check the script in seconds: tiny models, one run each")
    args = parser.parse_args()
    if args.smoke:
        args.repeat = 1
        print(f"SMOKE: {SMOKE_SIZES['blocks']} blocks, {SMOKE_SIZES['chains']} chains, tiny weights; one run each")
    sizes = SMOKE_SIZES if args.smoke else {}
    with tempfile.TemporaryDirectory(dir=args.workdir) as work:
        if not args.skip_in_memory:
            in_memory_case(work, args.repeat, SMOKE_IN_MEMORY if args.smoke else IN_MEMORY_BYTES, **sizes)
        if not args.skip_external:
            external_case(work, args.repeat, SMOKE_EXTERNAL if args.smoke else EXTERNAL, **sizes)


if __name__ == "__main__":
    main()
