"""Speed of the fused CPU kernel (surgeon_ops.kernels.fused_grid_sample) against baselines measured
in the same run: torch (affine_grid + grid_sample), onnxruntime (an opset-20 AffineGrid +
GridSample model) and cv2.warpAffine (theta turned into its pixel-space inverse map).  On a
GPU, also the CUDA kernel against torch on the GPU, with the memory bandwidth achieved.

    python benchmarks/kernels.py [--reps 15] [--threads 1 2] [--shapes 1x3x512x512 ...] [--gpu-only]
    python benchmarks/kernels.py --table [--reps 9] [--runs 3] [--modes nearest ...]
    python benchmarks/kernels.py --smoke [--table | --gpu-only]

--table times every 2-D mode x padding x align_corners (and 3-D trilinear / nearest with each
padding) at one thread against torch, bilinear-zeros of the same shape and, for 3-channel 2-D
bilinear, cv2; and the same call at two threads and in float16.

Each timing is the median of --reps runs with warm caches: the implementations run in short
blocks that rotate over three rounds, so that a noisy machine hurts them alike (their idle
threads set to sleep, so that none steals the cores of the next).  Ratios are baseline
time / our time: above 1, we are faster.
cv2 runs on channels-last copies made beforehand (its native layout) and, for a batch, one
call per image; its bilinear uses 1/32-pixel fixed point, so its output differs slightly.
Without cv2 (the bench extra installs it) its columns read '-'.

--smoke (the tests run it, seconds) checks the script, not the speed: tiny shapes, one rep,
one thread; the CPU rows, the per-call cost, the GPU rows (skipped without CUDA) and then the
table, each through its real checks and printing (with --table: the table only; with
--gpu-only: the GPU rows only).  It ignores --reps, --threads, --shapes and --runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

# Idle worker threads must sleep, not spin: the implementations take turns, and a baseline's
# spinning pool would steal the cores the next one runs on (onnxruntime: see ort_session).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

SHAPES = [(1, 3, 512, 512), (1, 3, 1024, 1024), (8, 3, 256, 256), (1, 64, 128, 128)]
SMOKE_SHAPES = [(1, 3, 16, 16), (2, 3, 8, 8)]
SMOKE_TABLE_SHAPES, SMOKE_TABLE_SHAPES_3D = [(1, 3, 8, 8)], [(1, 1, 4, 8, 8)]
THETA = np.array([[0.9, 0.2, 0.05], [-0.15, 0.95, -0.1]], np.float32)  # rotate, shear, shift


def cpu_summary() -> str:
    """The vector extensions this CPU has (from /proc/cpuinfo's flags, where there is one) and the
    instruction-set level the kernels library picked (surgeon_cpu_level: the widest the CPU has,
    or $SURGEON_CPU_LEVEL's): the same code runs 8- or 16-wide, so a table says which."""
    from surgeon_ops.kernels import native

    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    have = [name for name, flag in (("AVX2", "avx2"), ("FMA", "fma"), ("AVX-512", "avx512f"),
                                    ("AVX-512 FP16", "avx512_fp16"), ("AMX", "amx_tile")) if flag in flags]
    forced = os.environ.get("SURGEON_CPU_LEVEL")
    return (f"CPU: {', '.join(have) if flags else 'flags unknown'}; kernels level: {native.cpu_level()}"
            + (f" (SURGEON_CPU_LEVEL={forced})" if forced else ""))


def median_ms(fns: dict, reps: int, rounds: int = 3) -> dict:
    """Median time of each function.  They run in blocks (the first run of a block, which
    finds the caches holding another's data, is dropped), the blocks rotating over a few
    rounds so that a noisy machine hurts them alike."""
    times = {name: [] for name in fns}
    per_block = max(1, reps // rounds)
    for _ in range(rounds):
        for name, fn in fns.items():
            fn()
            for _ in range(per_block):
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def ort_session(n, c, h, w, threads):
    import onnxruntime as ort
    from onnx import TensorProto, helper

    size = helper.make_tensor("size", TensorProto.INT64, [4], [n, c, h, w])
    graph = helper.make_graph(
        [helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=0),
         helper.make_node("GridSample", ["x", "grid"], ["y"], mode="linear", padding_mode="zeros", align_corners=0)],
        "affine_warp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, h, w]),
         helper.make_tensor_value_info("theta", TensorProto.FLOAT, [n, 2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, c, h, w])],
        initializer=[size])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def cv2_matrix(theta, h, w, ho, wo, align_corners=False):
    """torch's normalised theta as the pixel-space map cv2 calls WARP_INVERSE_MAP: source
    pixel = M @ (output x, output y, 1).  Unnormalising is size/2 * g + (size-1)/2 (or
    (size-1)/2 * (g + 1) with align_corners); output pixel j's base coordinate step * j + first."""
    def base(n):  # (step, first)
        return (2 / (n - 1), -1.0) if align_corners and n > 1 else (2 / n, 1 / n - 1)

    (sx, fx), (sy, fy) = base(wo), base(ho)
    rows = []
    for k, size in ((0, w), (1, h)):
        a, b, t = (float(v) for v in theta[k])
        scale = (size - 1) / 2 if align_corners else size / 2
        rows.append([scale * a * sx, scale * b * sy, scale * (a * fx + b * fy + t) + (size - 1) / 2])
    return np.array(rows, np.float64)


def _cv2():
    """cv2, or None where it is not installed (it is a bench extra, not a test one: CI runs
    these rows without it)."""
    try:
        import cv2
    except ImportError:
        return None
    return cv2


def cpu_rows(reps: int, thread_counts, shapes) -> None:
    import torch
    import torch.nn.functional as F

    import surgeon_ops.kernels as K

    cv2 = _cv2()
    print("CPU, float32, bilinear, zeros, align_corners=0; median ms; ratio = baseline / fused"
          + ("" if cv2 else "; cv2 not installed (pip install -e '.[bench]'): its columns read -"))
    print(f"{'shape':>18} {'thr':>3} {'fused':>8} {'torch':>8} {'x':>5} {'ort':>8} {'x':>5} {'cv2':>8} {'x':>5}")
    for n, c, h, w in shapes:
        rng = np.random.default_rng(0)
        x = rng.random((n, c, h, w), np.float32)
        theta = np.repeat(THETA[None], n, 0)
        tx, tt = torch.from_numpy(x), torch.from_numpy(theta)
        hwc = [np.ascontiguousarray(x[i].transpose(1, 2, 0)) for i in range(n)]
        m = cv2_matrix(THETA, h, w, h, w)
        # The baselines compute what we compute (cv2 up to its fixed point).
        ours = K.fused_grid_sample(x, theta, (h, w))
        ref = F.grid_sample(tx, F.affine_grid(tt, (n, c, h, w), align_corners=False), align_corners=False).numpy()
        # float32 coordinate rounding dominates at these sizes (torch's own BLAS grid is an
        # ulp off on FMA hosts): ~5e-5 at 512 a side; tests hold the kernels to float64.
        assert np.abs(ours - ref).max() < 2e-4
        for threads in thread_counts:
            torch.set_num_threads(threads)
            sess = ort_session(n, c, h, w, threads)
            # onnxruntime rounds its grid differently: ~1e-4 apart at 1024 pixels
            assert np.abs(sess.run(None, {"x": x, "theta": theta})[0] - ref).max() < 1e-3
            if cv2:
                cv2.setNumThreads(threads)
                assert np.abs(cv2.warpAffine(hwc[0], m, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
                              .reshape(h, w, c).transpose(2, 0, 1) - ref[0]).max() < 0.05

            def torch_fn():
                return F.grid_sample(tx, F.affine_grid(tt, (n, c, h, w), align_corners=False), align_corners=False)

            fns = {
                "fused": lambda: K.fused_grid_sample(x, theta, (h, w), num_threads=threads),
                "torch": torch_fn,
                "ort": lambda: sess.run(None, {"x": x, "theta": theta}),
            }
            if cv2:
                fns["cv2"] = lambda: [cv2.warpAffine(img, m, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
                                      for img in hwc]
            t = median_ms(fns, reps)
            f = t["fused"]
            cv2_cols = f"{t['cv2']:8.3f} {t['cv2'] / f:5.1f}" if cv2 else f"{'-':>8} {'-':>5}"
            print(f"{f'{n}x{c}x{h}x{w}':>18} {threads:>3} {f:8.3f} {t['torch']:8.3f} {t['torch'] / f:5.1f} "
                  f"{t['ort']:8.3f} {t['ort'] / f:5.1f} {cv2_cols}")


TABLE_SHAPES = [(1, 3, 512, 512), (8, 3, 256, 256), (1, 64, 128, 128), (1, 256, 64, 64)]
TABLE_SHAPES_3D = [(1, 1, 64, 128, 128)]
THETA_3D = np.array([[0.9, 0.2, 0.0, 0.05], [-0.15, 0.95, 0.1, -0.1], [0.05, -0.1, 0.9, 0.02]], np.float32)
# cv2's border modes for torch's paddings: edges are reflected about pixel edges without
# align_corners (cba|abc), about pixel centres with it (dcb|abc).
CV2_BORDER = {("zeros", 0): "BORDER_CONSTANT", ("zeros", 1): "BORDER_CONSTANT", ("border", 0): "BORDER_REPLICATE",
              ("border", 1): "BORDER_REPLICATE", ("reflection", 0): "BORDER_REFLECT",
              ("reflection", 1): "BORDER_REFLECT_101"}


def combo_table(reps: int, shapes=None, shapes_3d=None, modes=("bilinear", "nearest", "bicubic"), runs=1) -> None:
    """Every 2-D mode x padding x align_corners, and 3-D trilinear / nearest with each padding,
    one thread: ratios against torch (and cv2 for 3-channel bilinear), the time against
    bilinear-zeros of the same shape, and the same call at two threads and in float16.  With
    runs > 1 the whole table is timed that many times and each value is the median over the
    runs (a shared machine's speed drifts by 2x over minutes)."""
    import torch

    torch.set_num_threads(1)
    cv2 = _cv2()
    if cv2:
        cv2.setNumThreads(1)
    print("\nEvery combination; median ms, one thread unless said; x = baseline / fused;\n"
          "/bz = fused / fused bilinear-zeros of the shape (same align_corners); /z = fused / fused\n"
          "zeros of the same mode; 2thr = one-thread / two-thread time; f16/f32 = float16 / float32\n"
          f"time (same elements){f'; each value the median of {runs} runs of the table' if runs > 1 else ''}")
    print(f"{'shape':>15} {'mode':>8} {'padding':>10} ac {'fused':>7} {'torch':>7} {'x':>5} {'/bz':>5} {'/z':>5} "
          f"{'cv2':>7} {'x':>5} {'2thr':>5} {'f16/f32':>7}")
    rows_2d = [(s, m, p, ac) for s in (TABLE_SHAPES if shapes is None else shapes) for ac in (0, 1)
               for m in modes for p in ("zeros", "border", "reflection")]
    rows_3d = [(s, m, p, ac) for s in (TABLE_SHAPES_3D if shapes_3d is None else shapes_3d) for ac in (0, 1)
               for m in modes if m != "bicubic" for p in ("zeros", "border", "reflection")]
    rows = rows_2d + rows_3d
    values = {row: [] for row in rows}  # row -> one dict of columns per run
    for run in range(runs):
        for row in rows:
            t = median_ms(_row_fns(*row, check=run == 0), reps)
            f = t["fused"]
            v = {"fused": f, "torch": t["torch"], "x": t["torch"] / f, "/bz": f / t["bz"], "/z": f / t["zeros"],
                 "2thr": f / t["two"], "f16": t["f16"] / f}
            if "cv2" in t:
                v.update(cv2=t["cv2"], cv2x=t["cv2"] / f)
            values[row].append(v)
            if run == runs - 1:
                _print_row(row, {k: statistics.median(r[k] for r in values[row]) for k in v})


def _print_row(row, v) -> None:
    shape, mode, padding, ac = row
    cv2_cols = f"{v['cv2']:7.3f} {v['cv2x']:5.1f}" if "cv2" in v else f"{'':>7} {'':>5}"
    name = "x".join(map(str, shape))
    print(f"{name:>15} {mode:>8} {padding:>10} {ac:>2} {v['fused']:7.3f} {v['torch']:7.3f} {v['x']:5.1f} "
          f"{v['/bz']:5.2f} {v['/z']:5.2f} {cv2_cols} {v['2thr']:5.2f} {v['f16']:7.2f}", flush=True)


def _row_fns(shape, mode, padding, ac, check=True) -> dict:
    """The calls one table row times, checked against torch (and cv2) first when ``check``."""
    import torch
    import torch.nn.functional as F

    import surgeon_ops.kernels as K

    n, c, *size = shape
    size = tuple(size)
    rng = np.random.default_rng(0)
    x = rng.random(shape, np.float32)
    theta = np.repeat((THETA if len(size) == 2 else THETA_3D)[None], n, 0)
    x16, theta16 = x.astype(np.float16), theta.astype(np.float16)
    tx, tt = torch.from_numpy(x), torch.from_numpy(theta)

    def torch_fn():
        grid = F.affine_grid(tt, shape, align_corners=bool(ac))
        return F.grid_sample(tx, grid, mode=mode, padding_mode=padding, align_corners=bool(ac))

    if check:  # the same computation: torch's BLAS grid may be an ulp off, which moves a rare
        # nearest tie or bicubic tap; the bulk must agree.  THETA_3D puts ~2.4 % of the 3-D
        # taps on exact ties (x.5), where two float32 roundings part: nearest differs at 1.4e-3
        # of 1x1x64x128x128 (torch 2.13, align_corners=0) and at 1 of 256 elements of a tiny shape
        ours = K.fused_grid_sample(x, theta, size, mode, padding, ac)
        rare = 1e-2 if mode == "nearest" else 1e-3
        assert np.mean(np.abs(ours - torch_fn().numpy()) > 1e-3) < rare, (shape, mode, padding, ac)
    fns = {"fused": lambda: K.fused_grid_sample(x, theta, size, mode, padding, ac, num_threads=1),
           "torch": torch_fn,
           "two": lambda: K.fused_grid_sample(x, theta, size, mode, padding, ac, num_threads=2),
           "f16": lambda: K.fused_grid_sample(x16, theta16, size, mode, padding, ac, num_threads=1),
           # the references of /z and /bz, timed in the same rotation: on a shared machine
           # a row timed seconds earlier ran under other load (on zeros rows "zeros" is the
           # row's own call again: its /z shows how far the machine lets a call differ from itself)
           "zeros": lambda: K.fused_grid_sample(x, theta, size, mode, "zeros", ac, num_threads=1),
           "bz": lambda: K.fused_grid_sample(x, theta, size, "bilinear", "zeros", ac, num_threads=1)}
    cv2 = _cv2()
    if cv2 and len(size) == 2 and c == 3 and mode == "bilinear":
        hwc = [np.ascontiguousarray(x[i].transpose(1, 2, 0)) for i in range(n)]
        m = cv2_matrix(THETA, *size, *size, align_corners=bool(ac))
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
        border = getattr(cv2, CV2_BORDER[(padding, ac)])
        fns["cv2"] = lambda: [cv2.warpAffine(img, m, size[::-1], flags=flags, borderMode=border) for img in hwc]
        if check:
            got = fns["cv2"]()[0].transpose(2, 0, 1)
            assert np.mean(np.abs(got - ours[0]) > 0.05) < 1e-3, (shape, padding, ac)
    return fns


def overhead_row(reps: int) -> None:
    """Per-call cost on a 1x1x4x4 image, one thread: what a caller pays besides the work
    (argument checks, output allocation, the ctypes call).  It bounds small calls, and on a
    GPU it is the host time behind every launch."""
    import torch
    import torch.nn.functional as F

    import surgeon_ops.kernels as K

    torch.set_num_threads(1)
    x = np.random.default_rng(0).random((1, 1, 4, 4), np.float32)
    theta = THETA[None]
    tx, tt = torch.from_numpy(x), torch.from_numpy(theta)
    sess = ort_session(1, 1, 4, 4, 1)
    t = median_ms({
        "numpy": lambda: K.fused_grid_sample(x, theta, (4, 4), num_threads=1),
        "torch_in": lambda: K.fused_grid_sample(tx, tt, (4, 4), num_threads=1),
        "torch": lambda: F.grid_sample(tx, F.affine_grid(tt, (1, 1, 4, 4), align_corners=False), align_corners=False),
        "ort": lambda: sess.run(None, {"x": x, "theta": theta}),
    }, reps * 100)
    us = {k: v * 1e3 for k, v in t.items()}
    print(f"\nPer-call cost, 1x1x4x4, one thread (us): fused {us['numpy']:.1f} (numpy in), "
          f"{us['torch_in']:.1f} (torch in); torch {us['torch']:.1f} ({us['torch'] / us['torch_in']:.1f}x), "
          f"onnxruntime {us['ort']:.1f} ({us['ort'] / us['numpy']:.1f}x)")


def _gpu_ms(torch, run, reps: int, calls: int) -> float:
    """Median GPU time per call of run() (which makes `calls` calls), by CUDA events."""
    samples = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / calls)
    return statistics.median(samples)


def _gpu_eager_ms(torch, fn, reps: int) -> float:
    """Per call, 10 calls queued back to back (launch overhead overlaps the GPU's work;
    where the GPU is idle waiting for Python, this is the host's time per call)."""
    return _gpu_ms(torch, lambda: [fn() for _ in range(10)], reps, 10)


def _gpu_graph_ms(torch, fn, reps: int) -> float | None:
    """Per call, from a CUDA graph of 10 calls replayed: the GPU's time with no host in the
    loop.  None when the calls cannot be captured."""
    try:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(10):
                fn()
    except RuntimeError as exc:
        print(f"  (no CUDA graph: {str(exc).splitlines()[0]})")
        return None
    return _gpu_ms(torch, graph.replay, reps, 10)


def gpu_rows(reps: int, shapes) -> None:
    import torch
    import torch.nn.functional as F

    import surgeon_ops.kernels as K

    if not torch.cuda.is_available():
        print("\nGPU: no CUDA device, skipped")
        return
    print(f"\nGPU ({torch.cuda.get_device_name()}), float32, bilinear, zeros; median ms per call.\n"
          "eager: calls from Python, queued back to back; graph: the same calls replayed from a CUDA\n"
          "graph (GPU time alone).  GB/s = (input read + output written) / graph time.")
    print(f"{'shape':>18} {'fused':>8} {'torch':>8} {'x':>5} | {'fused':>8} {'GB/s':>6} {'torch':>8} {'GB/s':>6} {'x':>5}")
    print(f"{'':>18} {'eager':^23} | {'graph':^39}")
    for n, c, h, w in shapes:
        x = torch.rand(n, c, h, w, device="cuda")
        theta = torch.from_numpy(np.repeat(THETA[None], n, 0)).cuda()

        def torch_fn():
            return F.grid_sample(x, F.affine_grid(theta, (n, c, h, w), align_corners=False), align_corners=False)

        def fused_fn():
            return K.fused_grid_sample(x, theta, (h, w))

        assert (fused_fn() - torch_fn()).abs().max().item() < 1e-5
        eager, graph = {}, {}
        for name, fn in (("fused", fused_fn), ("torch", torch_fn)):
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            eager[name] = _gpu_eager_ms(torch, fn, reps)
            graph[name] = _gpu_graph_ms(torch, fn, reps)
        gbytes = 2 * x.numel() * 4 / 1e9

        def cols(t):
            return f"{t:8.3f} {gbytes / t * 1e3:6.0f}" if t else f"{'n/a':>8} {'':>6}"

        fg, tg = graph["fused"], graph["torch"]
        ratio = f"{tg / fg:5.1f}" if fg and tg else f"{'n/a':>5}"
        print(f"{f'{n}x{c}x{h}x{w}':>18} {eager['fused']:8.3f} {eager['torch']:8.3f} "
              f"{eager['torch'] / eager['fused']:5.1f} | {cols(fg)} {cols(tg)} {ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--shapes", nargs="+", metavar="NxCxHxW", help="only these shapes (default: all)")
    parser.add_argument("--gpu-only", action="store_true", help="skip the CPU rows")
    parser.add_argument("--table", action="store_true", help="only the table over every combination")
    parser.add_argument("--runs", type=int, default=1, help="--table: time it this many times, print medians")
    parser.add_argument("--modes", nargs="+", default=["bilinear", "nearest", "bicubic"],
                        choices=["bilinear", "nearest", "bicubic"], help="the table's modes (default: all)")
    parser.add_argument("--smoke", action="store_true",
                        help="check the script in seconds: tiny shapes, one rep, one thread, every path")
    args = parser.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes] if args.shapes else None
    print(f"CPUs available: {len(os.sched_getaffinity(0))}")
    print(cpu_summary())
    if args.smoke:
        print("SMOKE: tiny shapes, one rep; the timings mean nothing")
        args.reps, args.threads, args.runs, shapes = 1, [1], 2, SMOKE_SHAPES  # runs 2: the medians' path
    if args.smoke:  # the table in smoke: its own tiny shapes, 2-D and 3-D
        table = (SMOKE_TABLE_SHAPES, SMOKE_TABLE_SHAPES_3D)
    else:
        table = ([s for s in shapes if len(s) == 4] if shapes else None,
                 [s for s in shapes if len(s) == 5] if shapes else None)
    if args.table:
        combo_table(args.reps, *table, args.modes, args.runs)
        return
    if not args.gpu_only:
        cpu_rows(args.reps, args.threads, shapes or SHAPES)
        overhead_row(args.reps)
    gpu_rows(args.reps, shapes or SHAPES + [(16, 64, 256, 256)])
    if args.smoke and not args.gpu_only:  # the table's own code too
        combo_table(args.reps, *table, args.modes, args.runs)


if __name__ == "__main__":
    main()
