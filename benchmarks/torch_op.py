"""Speed of surgeon.torch.fused_grid_sample (the torch operator, autograd included) against
torch's own F.affine_grid + F.grid_sample, measured in the same run, on the CPU.

    python benchmarks/torch_op.py [--reps 21] [--threads 1 2] [--shapes 1x3x512x512 8x3x256x256]
    python benchmarks/torch_op.py --smoke    # 1x3x16x16 and 2x3x8x8, one rep, one thread (the tests run it)

Per shape and thread count (torch.set_num_threads, which the operator follows): forward
(no grad), backward alone (the graph built beforehand), and forward + backward, with x and
theta both requiring grad.  Each timing is the median of --reps runs, the two
implementations taking turns run by run so that a noisy machine hurts them alike.  Ratios
are torch time / our time: above 1, we are faster.
Both backwards run torch's grid-sampler backward; the last column times where they differ:
ours makes the grid the forward never materialised and reduces the grid's gradient to
theta's, torch's runs affine_grid_generator_backward.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # idle pool threads sleep between blocks

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import surgeon_ops.torch as st  # noqa: E402
from surgeon_ops.torch import _grad  # noqa: E402

THETA = [[0.9, 0.2, 0.05], [-0.15, 0.95, -0.1]]  # rotate, shear, shift


def median_ms(fns: dict, reps: int) -> dict:
    """Median time per function over `reps` runs, the functions taking turns run by run (after
    one warm-up each), so that a busy machine's slow spells hit them alike.  A function may be
    a (setup, timed) pair: timed(setup()) is what is measured."""
    pairs = {name: fn if isinstance(fn, tuple) else (lambda: None, lambda _, fn=fn: fn()) for name, fn in fns.items()}
    times = {name: [] for name in fns}
    for rep in range(reps + 1):
        for name, (setup, timed) in pairs.items():
            state = setup()
            start = time.perf_counter()
            timed(state)
            if rep:
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def ours(x, theta):
    return st.fused_grid_sample(x, theta, x.shape)


def torch_pair(x, theta):
    return F.grid_sample(x, F.affine_grid(theta, x.shape, align_corners=False), align_corners=False)


def cases(shape):
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(shape, generator=gen).requires_grad_()
    theta = torch.tensor([THETA] * shape[0]).requires_grad_()
    upstream = torch.randn(shape, generator=gen)
    return x, theta, upstream


def timings(shape, reps):
    x, theta, upstream = cases(shape)
    impls = {"ours": ours, "torch": torch_pair}
    with torch.no_grad():
        fwd = median_ms({k: (lambda f=f: f(x, theta)) for k, f in impls.items()}, reps)
    bwd = median_ms({k: (lambda f=f: f(x, theta), lambda y: torch.autograd.grad(y, (x, theta), upstream))
                     for k, f in impls.items()}, reps)
    both = median_ms({k: (lambda f=f: torch.autograd.grad(f(x, theta), (x, theta), upstream))
                      for k, f in impls.items()}, reps)
    out = {name: (fwd[name], bwd[name], both[name]) for name in impls}
    out["parts"] = backward_parts(shape, theta.detach(), reps)
    return out


def backward_parts(shape, theta, reps):
    """Where the backwards differ (both run torch's grid-sampler backward): ours makes the grid and
    reduces its gradient to theta's; torch's runs affine_grid_generator_backward."""
    spatial = list(shape[2:])
    grad_grid = torch.randn((shape[0], *spatial, 2), generator=torch.Generator().manual_seed(1))
    return median_ms({
        "grid": lambda: torch.ops.surgeon.affine_grid(theta, spatial, False),
        "reduce": lambda: _grad.theta_from_grid(grad_grid, spatial, False),
        "torch": lambda: torch.ops.aten.affine_grid_generator_backward(grad_grid, [shape[0], 1, *spatial], False),
    }, reps)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=21)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--shapes", nargs="+", default=["1x3x512x512", "8x3x256x256"])
    p.add_argument("--smoke", action="store_true", help="check the script in seconds: tiny shapes, one rep, one thread")
    args = p.parse_args()
    if args.smoke:
        args.reps, args.threads, args.shapes = 1, [1], ["1x3x16x16", "2x3x8x8"]
        print("SMOKE: tiny shapes, one rep; the ratios mean nothing")
    st.fused_grid_sample(torch.rand(1, 1, 4, 4), torch.tensor([THETA]))  # builds the kernels once
    print(f"torch {torch.__version__}; times in ms (median of {args.reps}); ratio = torch / ours")
    print(f"{'shape':>14} {'thr':>3} | {'forward':^24} | {'backward':^24} | {'forward+backward':^24} "
          f"| backward parts: ours grid + reduce vs torch")
    for threads in args.threads:
        torch.set_num_threads(threads)
        for text in args.shapes:
            shape = tuple(int(v) for v in text.split("x"))
            t = timings(shape, args.reps)
            cols = []
            for i in range(3):
                ours_ms, torch_ms = t["ours"][i], t["torch"][i]
                cols.append(f"{ours_ms:7.2f} vs {torch_ms:7.2f} {torch_ms / ours_ms:5.2f}x")
            parts = t["parts"]
            print(f"{text:>14} {threads:>3} | " + " | ".join(cols) +
                  f" | {parts['grid']:.2f} + {parts['reduce']:.2f} vs {parts['torch']:.2f}")


if __name__ == "__main__":
    main()
