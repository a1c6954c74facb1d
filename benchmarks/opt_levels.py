"""The CPU fast paths built at other optimisation flags against -O3, timed in the same run:
each variant of the CPU library is built (CMake, target surgeon_kernels_cpu) into a temp folder
and loaded side by side, and the variants' calls alternate in short blocks over a few rounds
(a noisy machine hurts them alike).  Ratio = variant time / -O3 time: above 1, the variant is
slower.  Also prints each variant's compile CPU time.

    python benchmarks/opt_levels.py [--variants "-O2" "-O2 -fvect-cost-model=dynamic"] [--reps 30]
    SURGEON_CPU_LEVEL=x86-64-v3 python benchmarks/opt_levels.py    # the AVX2 level on an AVX-512 CPU
    python benchmarks/opt_levels.py --smoke

--smoke (the tests run it, a few seconds) checks the script, not the flags: each variant's
build is only configured (CMake accepts its flags; nothing is compiled, a build of the
library takes minutes), the installed CPU library stands in for every variant, and tiny
shapes run once each through the same alternation, bit-identity check and table.  Its
ratios compare the installed library with itself.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import surgeon_ops.kernels as K
from surgeon_ops.kernels import installed, native

ROOT = Path(__file__).resolve().parents[1]
THETA = np.array([[0.9, 0.2, 0.05], [-0.15, 0.95, -0.1]], np.float32)
THETA3 = np.array([[0.9, 0.2, 0.0, 0.05], [-0.15, 0.95, 0.1, -0.1], [0.0, -0.1, 1.0, 0.02]], np.float32)
ROWS = [  # (label, shape, mode, padding, dtype)
    ("1x3x512x512 bilinear zeros", (1, 3, 512, 512), "bilinear", "zeros", np.float32),
    ("1x3x512x512 nearest reflection", (1, 3, 512, 512), "nearest", "reflection", np.float32),
    ("1x3x512x512 bicubic border", (1, 3, 512, 512), "bicubic", "border", np.float32),
    ("8x3x256x256 bilinear reflection", (8, 3, 256, 256), "bilinear", "reflection", np.float32),
    ("1x64x128x128 bilinear zeros", (1, 64, 128, 128), "bilinear", "zeros", np.float32),
    ("1x3x512x512 bilinear f16", (1, 3, 512, 512), "bilinear", "zeros", np.float16),
    ("1x3x32x96x96 trilinear zeros", (1, 3, 32, 96, 96), "bilinear", "zeros", np.float32),
]


SMOKE_ROWS = [
    ("1x3x16x16 bilinear zeros", (1, 3, 16, 16), "bilinear", "zeros", np.float32),
    ("2x3x8x8 bicubic border", (2, 3, 8, 8), "bicubic", "border", np.float32),
    ("1x3x16x16 nearest reflection f16", (1, 3, 16, 16), "nearest", "reflection", np.float16),
    ("1x3x4x8x8 trilinear zeros", (1, 3, 4, 8, 8), "bilinear", "zeros", np.float32),
]


def build(opt: str, folder: str, configure_only: bool = False) -> tuple[Path, float]:
    """The CPU library built with the fast paths at ``opt``, and the build's CPU seconds;
    ``configure_only`` (--smoke): configured, nothing compiled, and the installed library."""
    cmake = shutil.which("cmake") or sys.exit("needs cmake on PATH")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    commands = [[cmake, "-S", str(ROOT), "-B", folder, "-DSURGEON_CUDA=OFF", f"-DSURGEON_FAST_OPT={opt}",
                 f"-DPython_EXECUTABLE={sys.executable}", "-DCMAKE_BUILD_TYPE=Release"],
                [cmake, "--build", folder, "--parallel", "2", "--target", "surgeon_kernels_cpu"]]
    for cmd in commands[:1] if configure_only else commands:
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            sys.exit(done.stdout[-2000:] + done.stderr[-2000:])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if configure_only:
        return Path(native.library_file("cpu")), cpu
    return next(Path(folder).rglob(installed.library_name("surgeon_kernels_cpu"))), cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", nargs="+", default=["-O2", "-O2 -fvect-cost-model=dynamic"])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--smoke", action="store_true",
                        help="check the script in seconds: configure only, the installed library, tiny shapes, one rep")
    args = parser.parse_args()
    if args.smoke:
        args.reps = 1
    opts = ["-O3", *args.variants]
    libs, compile_cpu = {}, {}
    with tempfile.TemporaryDirectory(prefix="surgeon-opt-") as tmp:
        for k, opt in enumerate(opts):
            path, compile_cpu[opt] = build(opt, f"{tmp}/{k}", configure_only=args.smoke)
            libs[opt] = native._load("cpu", path)
        rng = np.random.default_rng(0)
        if args.smoke:
            print("SMOKE: configured only; every variant is the installed library")
        print(f"level {libs['-O3'].surgeon_cpu_level().decode()}, one thread; ratio = time / -O3's time")
        print(f"{'':34s}" + "".join(f"{opt:>32s}" for opt in opts[1:]) + f"{'-O3 ms':>10s}")
        for label, shape, mode, pad, dtype in SMOKE_ROWS if args.smoke else ROWS:
            x = rng.standard_normal(shape).astype(dtype)
            theta = (THETA if len(shape) == 4 else THETA3)[None].repeat(shape[0], 0).astype(dtype)
            times = {opt: [] for opt in opts}
            outputs = {}
            for _ in range(3):
                for opt in opts:
                    native._loaded["cpu"] = libs[opt]
                    call = lambda: K.fused_grid_sample(x, theta, shape, mode=mode, padding_mode=pad,  # noqa: E731
                                                       num_threads=1)
                    outputs[opt] = call()
                    for _ in range(max(1, args.reps // 3)):
                        start = time.perf_counter()
                        call()
                        times[opt].append(time.perf_counter() - start)
            for opt in opts[1:]:  # flags that change results would not be an option
                np.testing.assert_array_equal(outputs[opt], outputs["-O3"])
            med = {opt: statistics.median(t) for opt, t in times.items()}
            print(f"{label:34s}" + "".join(f"{med[o] / med['-O3']:32.2f}" for o in opts[1:])
                  + f"{med['-O3'] * 1e3:10.2f}")
        native._loaded.pop("cpu", None)
    print("compile CPU s (all levels): " + ", ".join(f"{opt} {s:.0f}" for opt, s in compile_cpu.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
