"""The libraries the install built (CMakeLists.txt): where they lie, what they export, that the
package runs without a compiler, the one-line error when one is missing, and the build's own
one-line errors when it cannot get a compiler or onnxruntime's headers."""

import ctypes
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import surgeon_ops
import surgeon_ops.kernels as K
import surgeon_ops.ort
from surgeon_ops.kernels import installed, native

from .. import toolchain
from ..toolchain import configure, one_error_line


def defined_symbols(path) -> set[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def test_the_libraries_lie_in_their_packages():
    site = Path(surgeon_ops.__path__[0]).parent  # the installed tree (an editable install's too)
    cpu = native.library_file("cpu")
    assert cpu.name == installed.library_name("surgeon_kernels_cpu") and cpu.parent.name == "kernels"
    assert cpu.parent.parent.name == "surgeon_ops" and cpu.is_relative_to(site)
    ort = Path(surgeon_ops.ort.library_path())
    assert ort.name == installed.library_name("surgeon_ort_cpu") and ort.parent == cpu.parent.parent / "ort"


def test_the_cpu_library_exports_the_abi_and_nothing_else():
    exported = defined_symbols(native.library_file("cpu"))
    abi = {"surgeon_fused_grid_sample_cpu", "surgeon_fused_grid_sample_cpu_ex", "surgeon_affine_grid_cpu_ex",
           "surgeon_grid_sample_cpu", "surgeon_cpu_level", "surgeon_kernels_abi_version"}
    assert abi <= exported
    assert all(name.startswith("surgeon_") for name in exported), sorted(exported)
    assert native.library("cpu").surgeon_kernels_abi_version() == native.ABI_VERSION


def test_a_missing_library_is_one_line_naming_the_fix():
    with pytest.raises(K.LibraryNotInstalled) as info:
        installed.find("surgeon_ops.kernels", "surgeon_kernels_nowhere")
    text = str(info.value)
    assert "\n" not in text and "libsurgeon_kernels_nowhere.so is not installed" in text and "pip install" in text
    with pytest.raises(K.LibraryNotInstalled, match="nvcc"):
        installed.find("surgeon_ops.ort", "surgeon_ort_nowhere", installed.HOW_TO_BUILD_CUDA)


def test_the_kernels_run_with_no_compiler_and_a_read_only_home(tmp_path):
    """The installed package compiles nothing: no compiler on PATH, an unusable HOME, and the
    kernels and the op library agree on the identity warp (the input back)."""
    blocker = tmp_path / "file"  # a HOME inside a file: nothing can be created there, not even by root
    blocker.write_text("")
    home = blocker / "home"
    empty = tmp_path / "bin"
    empty.mkdir()
    code = textwrap.dedent("""
        import numpy as np, surgeon_ops.kernels as K, surgeon_ops.ort as o
        from onnx import helper, TensorProto
        x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        t = np.eye(2, 3, dtype=np.float32)[None]
        y = K.fused_grid_sample(x, t, (1, 1, 4, 4), align_corners=True)
        np.testing.assert_allclose(y, x, atol=1e-5)
        node = helper.make_node("FusedGridSample", ["x", "t"], ["y"], domain="custom.ops", output_size=[4, 4],
                                align_corners=1)
        f = TensorProto.FLOAT
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", f, [1, 1, 4, 4]),
                                                helper.make_tensor_value_info("t", f, [1, 2, 3])],
                                  [helper.make_tensor_value_info("y", f, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20), helper.make_opsetid("custom.ops", 1)])
        np.testing.assert_array_equal(o.session(model).run(None, {"x": x, "t": t})[0], y)
        print("ok")
    """)
    env = {"PATH": str(empty), "HOME": str(home), "CXX": "/nonexistent/g++"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
    assert "surgeon" not in done.stderr and "compil" not in done.stderr  # (onnxruntime may warn: no HOME)
    assert blocker.read_text() == ""


def test_the_cuda_library_is_built_where_nvcc_is():
    """The CUDA variants are built when nvcc is there at build time (this project's toolchain
    has it); without a GPU the library still loads, and its argument checks answer."""
    try:
        path = native.library_file("cuda")
    except K.LibraryNotInstalled:
        if toolchain.find_nvcc():
            pytest.fail("nvcc is on this machine but the install has no CUDA library: reinstall (pip install -e .)")
        pytest.skip("no nvcc here at build time: the CUDA variants are not built (README)")
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
    assert all(name.startswith("surgeon_") for name in defined_symbols(path))


def test_the_tests_compile_with_the_kernels_flags():
    assert toolchain.cmake_kernel_flags()[:3] == toolchain.KERNEL_FLAGS


def test_a_build_without_a_compiler_fails_in_one_line(tmp_path):
    line = one_error_line(configure(tmp_path, {"CXX": str(tmp_path / "no-such-g++")}))
    assert "no-such-g++" in line and "install g++" in line


def test_a_build_without_headers_fails_in_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    line = one_error_line(configure(tmp_path, {}, f"-DONNXRUNTIME_INCLUDE_DIR={tmp_path / 'empty'}"))
    assert "holds no onnxruntime_c_api.h" in line and "ONNXRUNTIME_INCLUDE_DIR" in line
