"""The CPU library's instruction-set levels.  The installed library holds every level and picks
the widest the CPU has at run time; $SURGEON_CPU_LEVEL makes a process run a narrower one, so the AVX2 and
baseline code, which a wide machine would never run, passes the accuracy suites here too (they
assert the same bits as the shared per-location path, and against torch)."""

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from surgeon_ops.kernels import native

ROOT = Path(__file__).resolve().parents[2]
SUITES = ["tests/kernels/test_cpu_paths.py", "tests/kernels/test_vs_torch.py", "tests/kernels/test_precision.py"]
LEVELS = ["x86-64", "x86-64-v3", "x86-64-v4"]  # narrowest first
X86 = platform.machine().lower() in ("x86_64", "amd64")

pytestmark = pytest.mark.skipif(not X86, reason="one plain build, no levels, off x86-64")


def level_in_child(wanted: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "SURGEON_CPU_LEVEL"}
    if wanted is not None:
        env["SURGEON_CPU_LEVEL"] = wanted
    code = "from surgeon_ops.kernels import native; print(native.cpu_level())"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                          timeout=600).stdout.strip()


@pytest.fixture(scope="module")
def widest() -> str:
    return level_in_child(None)


def test_the_widest_level_the_cpu_has_runs_by_default(widest):
    assert widest in LEVELS
    if "SURGEON_CPU_LEVEL" not in os.environ:
        assert native.cpu_level() == widest


def test_a_forced_level_runs_if_the_cpu_has_it(widest):
    for level in LEVELS:
        has = LEVELS.index(level) <= LEVELS.index(widest)
        assert level_in_child(level) == (level if has else widest)
    assert level_in_child("pentium4") == widest  # unknown: the widest, as cpu_level() tells


@pytest.mark.parametrize("level", LEVELS[:-1])
def test_narrower_levels_pass_the_accuracy_suites(level, widest):
    if LEVELS.index(level) > LEVELS.index(widest):
        pytest.skip(f"this CPU has no {level}")
    if level == widest:
        pytest.skip(f"{level} is this CPU's widest level: the suites run it directly")
    env = dict(os.environ, SURGEON_CPU_LEVEL=level)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *SUITES],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout


def disassembly() -> str:
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.fail("objdump (binutils) is needed to check the library's code")
    return subprocess.run([objdump, "-d", "-C", "--no-show-raw-insn", str(native.library_file("cpu"))],
                          capture_output=True, text=True, check=True).stdout


def test_the_library_holds_every_levels_kernels():
    """Each level's fast paths are in the one installed library (the build compiled each), and
    the AVX-512 level's code does use 512-bit registers, AVX2's 256-bit ones."""
    text, name, seen = disassembly(), None, {}
    for line in text.splitlines():
        if line.endswith(">:"):
            name = line.split("<", 1)[1][:-2]
            continue
        for level in ("x86_64_v4", "x86_64_v3", "x86_64"):
            if name and f"sk::{level}::cpu::" in name:
                regs = seen.setdefault(level, set())
                regs.update(r for r in ("%zmm", "%ymm") if r in line)
                break
    assert set(seen) == {"x86_64", "x86_64_v3", "x86_64_v4"}, sorted(seen)
    assert seen["x86_64_v4"] >= {"%zmm"} and "%ymm" in seen["x86_64_v3"] and not seen["x86_64"]


def test_code_outside_the_wide_levels_has_no_wide_registers():
    """Everything a baseline CPU may run (the ABI, the pool, the baseline level, and the one copy
    the linker keeps of each standard-library template) uses no ymm / zmm register: only code in
    the x86-64-v3 / -v4 namespaces (or instantiated for their types) may."""
    text = disassembly()
    offenders, name, wide = [], None, False
    for line in text.splitlines():
        if line.endswith(">:"):  # "0000000000001234 <function name>:"
            name = line.split("<", 1)[1][:-2]
            wide = "x86_64_v3" in name or "x86_64_v4" in name
        elif name and not wide and ("%ymm" in line or "%zmm" in line):
            offenders.append(name)
            name = None
    assert not offenders, sorted(set(offenders))[:10]
