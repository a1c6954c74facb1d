"""One line on stderr, in a real process too: onnxruntime logs straight to the file descriptor
(with colour codes), which an in-process runner cannot see."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from onnx import helper

from ..builders import WEIGHTED_WARP_HW, weighted_warp_model, write_model
from .harness import check, invoke


def _bogus_mode(folder):
    model = weighted_warp_model()
    model.graph.node[2].attribute.append(helper.make_attribute("mode", "bogus"))  # onnxruntime refuses it
    return write_model(model, folder / "bogus.onnx")


def test_onnxruntime_failure_is_one_line_in_a_real_process(tmp_path):
    model = _bogus_mode(tmp_path)
    np.savez(tmp_path / "feeds.npz", x=np.zeros((1, 1, *WEIGHTED_WARP_HW), np.float32), theta=np.zeros((1, 2, 3), np.float32))
    done = subprocess.run([sys.executable, "-m", "surgeon", "run", str(model), "--inputs", str(tmp_path / "feeds.npz")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "bogus" in lines[0], done.stderr
    assert "\x1b" not in done.stderr and "onnxruntime_src" not in lines[0]


def test_notes_then_error(tmp_path, capfd):
    # random inputs are announced only once the run has worked: a failure is the only line
    outcome = invoke(["run", _bogus_mode(tmp_path)], capfd)
    assert outcome.code == 1 and len(outcome.stderr) == 1, outcome.describe()


def test_reader_leaving_the_pipe_is_quiet(tmp_path):
    # `surgeon patterns | head -1`: stdout closes under the command; no traceback, no
    # "Exception ignored" from the interpreter's last flush
    proc = subprocess.Popen([sys.executable, "-m", "surgeon", "patterns"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) != 0 and err == "", err


def test_error_line_escapes_control_characters(tmp_path, capfd):
    path = write_model(b"junk", tmp_path / "a\r\nb\x1b[2Jc.onnx")
    outcome = invoke(["inspect", path], capfd)
    check(outcome, 1, "a\\r\\nb\\x1b[2J")
