"""The build's OpenVINO part (ops/openvino/CMakeLists.txt): built against the openvino package
where surgeon is installed, skipped in one status line without one, and one error line when
it is asked for (SURGEON_OPENVINO=ON) or pointed at (OpenVINO_DIR) and cannot be had."""

import subprocess
import sys

import openvino as ov

from .. import toolchain
from ..toolchain import configure, one_error_line


def bare_python(tmp_path) -> str:
    """An interpreter of a new environment without openvino."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    return str(tmp_path / "venv" / "bin" / "python")


def test_found_where_surgeon_is_installed(tmp_path):
    done = subprocess.run([sys.executable, str(toolchain.ROOT / "cmake" / "openvino_dir.py")], capture_output=True,
                          text=True, check=True)
    folder = done.stdout.strip()
    assert folder.endswith("/openvino/cmake") and folder.startswith(sys.prefix)
    done = configure(tmp_path, {})
    assert done.returncode == 0, done.stderr
    assert f"surgeon: OpenVINO {ov.__version__.split('-')[0]} extension, against {folder}" in done.stdout


def test_skipped_in_one_line_without_openvino(tmp_path):
    python = bare_python(tmp_path)
    done = configure(tmp_path, {}, f"-DPython_EXECUTABLE={python}")
    assert done.returncode == 0, done.stderr
    assert "surgeon: no openvino package found: the OpenVINO extension is skipped (pip install openvino, " \
           "then reinstall surgeon)" in done.stdout
    line = one_error_line(configure(tmp_path, {}, f"-DPython_EXECUTABLE={python}", "-DSURGEON_OPENVINO=ON"))
    assert "SURGEON_OPENVINO=ON but no openvino package was found; pip install openvino first" in line


def test_a_folder_without_openvinos_cmake_package_fails_in_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    line = one_error_line(configure(tmp_path, {}, f"-DOpenVINO_DIR={tmp_path / 'empty'}"))
    assert f"OpenVINO_DIR={tmp_path / 'empty'} holds no usable OpenVINOConfig.cmake" in line


def test_off_skips_it(tmp_path):
    done = configure(tmp_path, {}, "-DSURGEON_OPENVINO=OFF")
    assert done.returncode == 0 and "SURGEON_OPENVINO=OFF: the OpenVINO extension is skipped" in done.stdout
