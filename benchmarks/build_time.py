"""Time the install's build (CMakeLists.txt) on N cores: configure, then the CPU kernels (every
x86-64 level: the goal is 60 s or less on 2 cores), then everything else (the onnxruntime op
library, the CUDA variants when nvcc is there), each in a fresh build folder; wall time and
CPU time (the compilers' user + system time).

    python benchmarks/build_time.py [--jobs 2] [--fast-opt "-O2"] [--cuda OFF] [--smoke]

The build is the one pip runs (same CMakeLists.txt, Ninja when there), without pip's own
overhead (its build environment, the wheel's zip): `pip install` adds ~10 s.

--smoke (the tests run it, a few seconds) checks the script, not the build's speed: it
configures (CUDA off unless --cuda is given) and compiles only the baseline level's ABI units
(cpu_kernels.cpp, cpu_isa.cpp, thread_pool.cpp), not the fast paths, the library or the rest;
its timings and its ratio to the goal mean nothing.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 60.0


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), children_cpu()
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return time.perf_counter() - wall, children_cpu() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="parallel compiles (default 2: CI's cores)")
    parser.add_argument("--fast-opt", help="SURGEON_FAST_OPT: the CPU fast paths' optimisation flags")
    parser.add_argument("--cuda", help="SURGEON_CUDA: AUTO (default), ON, OFF")
    parser.add_argument("--smoke", action="store_true",
                        help="check the script in seconds: configure, then the baseline level's ABI units only")
    args = parser.parse_args()
    # nvcc's compiler checks alone take longer than the smoke's whole build
    args.cuda = args.cuda or ("OFF" if args.smoke else "AUTO")
    cmake = shutil.which("cmake") or sys.exit("needs cmake on PATH")
    defines = [f"-DSURGEON_CUDA={args.cuda}", f"-DPython_EXECUTABLE={sys.executable}", "-DCMAKE_BUILD_TYPE=Release"]
    if args.fast_opt:
        defines.append(f"-DSURGEON_FAST_OPT={args.fast_opt}")
    if shutil.which("ninja"):
        defines += ["-G", "Ninja"]
    with tempfile.TemporaryDirectory(prefix="surgeon-build-") as build:
        rows = [("configure", *timed([cmake, "-S", str(ROOT), "-B", build, *defines]))]
        if args.smoke:  # three small units of the real kernels' build: the one target named by level
            level = "x86_64" if platform.machine().lower() in ("x86_64", "amd64") else "generic"
            rows.append((f"smoke: {level} ABI units only", *timed([cmake, "--build", build, "--parallel",
                                                                   str(args.jobs), "--target", f"sk_cpu_{level}_abi"])))
        else:
            rows.append(("CPU kernels, all levels", *timed([cmake, "--build", build, "--parallel", str(args.jobs),
                                                             "--target", "surgeon_kernels_cpu"])))
            rows.append(("the rest (op library, CUDA)", *timed([cmake, "--build", build, "--parallel",
                                                                 str(args.jobs)])))
        cuda = "CUDA" if list(Path(build).rglob("libsurgeon_kernels_cuda*")) else "no CUDA"
    total_wall, total_cpu = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"{'SMOKE (not the full build): ' if args.smoke else ''}build on {args.jobs} jobs "
          f"({os.cpu_count()} CPUs here, {cuda}, fast paths {args.fast_opt or 'as CMakeLists.txt sets them'}):")
    for name, wall, cpu in rows + [("total", total_wall, total_cpu)]:
        print(f"  {name:30s} wall {wall:6.1f} s   CPU {cpu:6.1f} s")
    kernels = rows[0][1] + rows[1][1]
    print(f"CPU kernels (configure included) / the {GOAL_S:.0f} s goal: {kernels / GOAL_S:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
