"""Two threads against one, and float16 against float32, for the fused CPU kernel: each
measured in pairs of steady blocks, for every combination of benchmarks/kernels.py --table.

    python benchmarks/kernel_pairs.py [--pairs 5] [--block 0.2] [--shapes 1x3x512x512 ...] [--modes nearest ...]
    python benchmarks/kernel_pairs.py --smoke    # tiny shapes, one pair of 1 ms blocks (the tests run it)

A comparison alternates its two calls in blocks of --block seconds of back-to-back calls,
--pairs times.  A pair's ratio is one block's median call time over the other's; each row
prints the median of its pairs' ratios and their range.  On a shared machine the speed
drifts by 2x over minutes but little within one pair, so these ratios scatter far less
than ratios of times taken seconds apart (the table's 2thr and f16/f32 columns), and a
steady block keeps the second thread awake, as a steady workload does.

2thr = one-thread time / two-thread time (above 1: two threads are faster);
f16/f32 = float16 time / float32 time for the same elements (below 1: float16 is faster).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from kernels import (SMOKE_TABLE_SHAPES, SMOKE_TABLE_SHAPES_3D, TABLE_SHAPES, TABLE_SHAPES_3D, THETA, THETA_3D,
                     cpu_summary)


def block_ms(fn, seconds: float) -> float:
    """Median time of back-to-back calls of fn over about `seconds` (one warm-up call first)."""
    fn()
    times = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(times) < 3:
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def paired_ratios(base, other, pairs: int, seconds: float) -> list[float]:
    """base time / other time, per pair of neighbouring blocks."""
    return [block_ms(base, seconds) / block_ms(other, seconds) for _ in range(pairs)]


def row(shape, mode, padding, ac, pairs: int, seconds: float) -> dict:
    import surgeon_ops.kernels as K

    n, size = shape[0], tuple(shape[2:])
    x = np.random.default_rng(0).random(shape, np.float32)
    theta = np.repeat((THETA if len(size) == 2 else THETA_3D)[None], n, 0)
    x16, theta16 = x.astype(np.float16), theta.astype(np.float16)

    def call(data, coords, threads):
        return lambda: K.fused_grid_sample(data, coords, size, mode, padding, ac, num_threads=threads)

    one = call(x, theta, 1)
    return {"2thr": paired_ratios(one, call(x, theta, 2), pairs, seconds),
            "f16": [1 / r for r in paired_ratios(one, call(x16, theta16, 1), pairs, seconds)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--block", type=float, default=0.2, help="seconds of calls per block")
    parser.add_argument("--shapes", nargs="+", metavar="NxCxHxW", help="only these shapes (default: the table's)")
    parser.add_argument("--modes", nargs="+", default=["bilinear", "nearest", "bicubic"],
                        choices=["bilinear", "nearest", "bicubic"])
    parser.add_argument("--smoke", action="store_true",
                        help="check the script in seconds: kernels.py's tiny table shapes, one pair of 1 ms blocks")
    args = parser.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes] if args.shapes else TABLE_SHAPES + TABLE_SHAPES_3D
    if args.smoke:
        args.pairs, args.block, shapes = 1, 0.001, SMOKE_TABLE_SHAPES + SMOKE_TABLE_SHAPES_3D
        print("SMOKE: tiny shapes; the ratios mean nothing")
    print(cpu_summary())
    print(f"Pairs of {args.block} s blocks, {args.pairs} pairs per value: median (min-max) of the pairs' ratios")
    print(f"{'shape':>15} {'mode':>8} {'padding':>10} ac {'2thr':>17} {'f16/f32':>17}")
    for shape in shapes:
        for ac in (0, 1):
            for mode in args.modes:
                if mode == "bicubic" and len(shape) == 5:
                    continue
                for padding in ("zeros", "border", "reflection"):
                    r = row(shape, mode, padding, ac, args.pairs, args.block)
                    cols = " ".join(f"{statistics.median(v):5.2f} ({min(v):4.2f}-{max(v):4.2f})" for v in r.values())
                    print(f"{'x'.join(map(str, shape)):>15} {mode:>8} {padding:>10} {ac:>2} {cols}", flush=True)


if __name__ == "__main__":
    main()
