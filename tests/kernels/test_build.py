"""Building and caching the libraries: clear errors without a compiler, one line on stderr
while compiling, atomic installs under concurrency, the static archives beside the shared
libraries, and the CUDA sources compiling with nvcc (no GPU needed)."""

import ctypes
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import surgeon_ops.kernels as K
from surgeon_ops.kernels import build, native


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """An empty cache and no library loaded yet in this process."""
    monkeypatch.setenv("SURGEON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(native, "_loaded", {})
    return tmp_path


def fake_compiler(path, body):
    """A stand-in for g++: answers --version, else runs `body` (python) with sys.argv."""
    path.write_text(f"#!{sys.executable}\nimport sys, time\nif '--version' in sys.argv:\n    print('fake 1.0'); sys.exit(0)\n"
                    + textwrap.dedent(body))
    path.chmod(0o755)
    return str(path)


def test_missing_compiler_named_in_cxx(fresh, monkeypatch):
    monkeypatch.setenv("CXX", str(fresh / "no-such-g++"))
    with pytest.raises(K.KernelBuildError, match="C\\+\\+ compiler .*no-such-g\\+\\+.* not found") as info:
        K.fused_grid_sample(np.zeros((1, 1, 2, 2), np.float32), np.zeros((1, 2, 3), np.float32), (2, 2))
    assert "\n" not in str(info.value)


def test_no_compiler_on_path(fresh, monkeypatch):
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setenv("PATH", str(fresh))  # an empty folder
    with pytest.raises(K.KernelBuildError, match="no C\\+\\+ compiler found") as info:
        build.build_cpu()
    assert "\n" not in str(info.value)


def test_compile_failure_reports_the_first_error(fresh, monkeypatch):
    monkeypatch.setenv("CXX", fake_compiler(fresh / "cc", "print('x.cpp:1: error: boom', file=sys.stderr); sys.exit(1)\n"))
    with pytest.raises(K.KernelBuildError, match="error: boom") as info:
        build.build_cpu()
    assert "\n" not in str(info.value)
    assert not list((fresh / "cache").rglob("*.so"))  # nothing half-built left to load


def test_concurrent_builds_install_one_whole_library(fresh, monkeypatch):
    # The fake compiler writes its output slowly; two processes race into one empty cache.
    cc = fake_compiler(fresh / "cc", """
        out = sys.argv[sys.argv.index('-o') + 1]
        with open(out, 'w') as f:
            f.write('part-'); f.flush(); time.sleep(0.5); f.write('whole')
    """)
    monkeypatch.setenv("CXX", cc)
    code = "from surgeon_ops.kernels import build; print(build.build_cpu())"
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=os.environ.copy())
             for _ in range(2)]
    paths = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert len(paths) == 1
    path = paths.pop()
    assert open(path).read() == "part-whole"
    assert path.startswith(str(fresh / "cache" / "kernels"))
    # A later call finds it in the cache without compiling again.
    before = os.stat(path).st_mtime_ns
    assert str(build.build_cpu()) == path and os.stat(path).st_mtime_ns == before


def test_compiling_says_so_in_one_line_and_a_cache_hit_says_nothing(fresh, monkeypatch):
    monkeypatch.setenv("CXX", fake_compiler(fresh / "cc", """
        open(sys.argv[sys.argv.index('-o') + 1], 'w').write('built')
    """))
    code = "from surgeon_ops.kernels import build; print(build.build_cpu())"
    first, second = (subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                    env=os.environ.copy()) for _ in range(2))
    assert first.stderr.startswith("surgeon: compiling the CPU kernels (once")
    assert first.stderr.count("\n") == 1 and str(build.cache_dir()) in first.stderr
    assert second.stderr == "" and second.stdout == first.stdout


def test_build_ahead_of_time_prints_the_path(fresh, monkeypatch):
    monkeypatch.setenv("CXX", fake_compiler(fresh / "cc", """
        open(sys.argv[sys.argv.index('-o') + 1], 'w').write('built')
    """))
    run = subprocess.run([sys.executable, "-m", "surgeon_ops.kernels.build"], capture_output=True, text=True,
                         env=os.environ.copy())
    assert run.returncode == 0, run.stderr
    path = run.stdout.strip()
    assert path.endswith(build.CPU_LIBRARY) and os.path.exists(path)
    monkeypatch.setenv("CXX", str(fresh / "no-such-g++"))
    monkeypatch.setenv("SURGEON_CACHE_DIR", str(fresh / "other"))
    run = subprocess.run([sys.executable, "-m", "surgeon_ops.kernels.build"], capture_output=True, text=True,
                         env=os.environ.copy())
    assert run.returncode == 1 and run.stderr.strip().splitlines()[-1].startswith("error: C++ compiler")


def test_platform_library_names(monkeypatch):
    for plat, suffix in (("linux", ".so"), ("darwin", ".dylib"), ("win32", ".dll")):
        monkeypatch.setattr(sys, "platform", plat)
        assert build.shared_suffix() == suffix


def test_real_library_is_cached_and_reused():
    first = build.build_cpu()
    assert first.parent.parent == build.cache_dir() and first.name == build.CPU_LIBRARY
    start = time.perf_counter()
    assert build.build_cpu() == first
    assert time.perf_counter() - start < 5  # a cache hit, not a compile


def test_the_archive_holds_the_same_kernels():
    archive = build.build_cpu_archive()
    assert archive.parent == build.build_cpu().parent and archive.name == build.CPU_ARCHIVE
    symbols = subprocess.run(["nm", "-g", "--defined-only", str(archive)], capture_output=True, text=True,
                             check=True).stdout
    for name in ("surgeon_fused_grid_sample_cpu", "surgeon_fused_grid_sample_cpu_ex", "surgeon_affine_grid_cpu_ex",
                 "surgeon_cpu_level"):
        assert f" T {name}\n" in symbols


def test_nvcc_compiles_the_cuda_sources(monkeypatch, tmp_path):
    try:
        build.find_nvcc()
    except build.KernelBuildError as exc:
        pytest.fail(f"nvcc is part of this project's toolchain (the CUDA sources must compile): {exc}")
    monkeypatch.setenv("SURGEON_CACHE_DIR", str(tmp_path))
    start = time.perf_counter()
    path = build.build_cuda(["sm_90"])
    print(f"nvcc build: {time.perf_counter() - start:.1f} s")
    assert build.build_cuda_archive(["sm_90"]) == path.parent / build.CUDA_ARCHIVE
    # Loading needs no GPU (the CUDA runtime is linked statically and loads the driver lazily);
    # argument checks answer before any CUDA call.
    lib = ctypes.CDLL(str(path))
    assert lib.surgeon_kernels_abi_version() == native.ABI_VERSION
    fn = lib.surgeon_fused_grid_sample_cuda
    fn.restype = ctypes.c_int
    sizes = (ctypes.c_int64 * 3)(2, 2, 2)
    dummy = ctypes.c_void_p(16)
    args = [dummy, dummy, dummy, ctypes.c_int64(1), ctypes.c_int64(1), sizes, sizes, ctypes.c_int64(1)]
    assert fn(7, 2, *args, 0, 0, 0, None) == 1  # bad dtype: SURGEON_ERR_INVALID_ARGUMENT
    assert fn(0, 3, *args, 2, 0, 0, None) == 2  # 3-D bicubic: SURGEON_ERR_UNSUPPORTED
    lib.surgeon_kernels_error_string.restype = ctypes.c_char_p
    assert b"bicubic" in lib.surgeon_kernels_error_string(2)
