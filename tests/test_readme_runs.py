"""The README's snippets run as written: its `inspect` output is what `surgeon inspect` prints
today, and every deploy snippet (Python and shell) runs in order, each on the files the one before
wrote (the README's /tmp paths moved into a temporary folder). Install commands and the C++
sample are run elsewhere (.ci/run, tests/deploy); the TensorRT plugin registration needs TensorRT
and a GPU, the only line left out."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
_NOT_RUN = ("pip install", "surgeon_ops.tensorrt")  # set-up, and a GPU-only plugin registration


def blocks() -> list[tuple[str, str]]:
    return [(lang, body) for lang, body in _BLOCK.findall(README)]


# `surgeon` and `python` as the README means them: this interpreter's environment first on PATH.
_ENV = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def _run(command: str | list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, shell=isinstance(command, str), cwd=ROOT, env=_ENV, capture_output=True,
                          text=True, timeout=300, executable="/bin/bash" if isinstance(command, str) else None)


def test_the_inspect_output_shown_is_todays():
    shown = next(body for lang, body in blocks() if body.startswith("$ surgeon inspect"))
    command, *expected = shown.strip().splitlines()
    got = _run(command.lstrip("$ "))
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip().splitlines() == expected


def test_every_deploy_snippet_runs_in_order(tmp_path):
    ran = 0
    for lang, body in blocks():
        body = body.replace("/tmp/", f"{tmp_path}/")
        if lang == "python":
            got = _run([sys.executable, "-c", body])
            assert got.returncode == 0, f"README snippet failed:\n{body}\n{got.stderr[-2000:]}"
            ran += 1
        elif lang == "bash":
            for line in body.splitlines():
                command = line.split("  #")[0].strip()
                if not command or any(skip in command for skip in _NOT_RUN):
                    continue
                got = _run(command)
                assert got.returncode == 0, f"README command failed: {command}\n{got.stderr[-2000:]}"
                ran += 1
    # Library, onnxruntime, OpenVINO, PyTorch; two unfuse lines, functions, the TensorRT fuse line.
    assert ran == 8
    assert (tmp_path / "stn.std16.onnx").is_file() and (tmp_path / "stn.fn.onnx").is_file()
