"""The CPU library's narrower instruction-set paths, built and tested on a machine that would
otherwise only ever run its widest one (-march=native picks AVX-512 where the CPU has it, so
the AVX2 and scalar code would go untested there).

Each variant is a fresh build in its own cache, then the accuracy suites in a child process.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITES = ["tests/kernels/test_cpu_paths.py", "tests/kernels/test_vs_torch.py", "tests/kernels/test_precision.py"]


def cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


VARIANTS = [
    pytest.param("-mno-avx512f", "avx512f", id="avx2"),
    pytest.param("-mno-avx512f -mno-avx2 -mno-fma", "avx2", id="sse"),
]


@pytest.mark.parametrize("flags,needs", VARIANTS)
def test_narrower_paths_pass_the_accuracy_suites(tmp_path, flags, needs):
    if needs not in cpu_flags():
        pytest.skip(f"the default build already is this path (no {needs} here)")
    env = dict(os.environ, SURGEON_CXXFLAGS=flags, SURGEON_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *SUITES],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    built = list((tmp_path / "cache").rglob("libsurgeon_kernels_cpu.so"))
    assert len(built) == 1, "the variant was not built in its own cache"
