"""Progress on stderr: drawn in place on a terminal, never on stdout, silent on a pipe and with
--quiet."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from surgeon import progress

from .toy_patterns import SAMPLE

ERASE = "\r\x1b[K"


def _surgeon(args: list[str], tty: bool, env: dict | None = None) -> tuple[str, str]:
    """Run the CLI with stderr on a pseudo-terminal (or a pipe); returns (stdout, stderr)."""
    base = {k: v for k, v in os.environ.items() if k != "SURGEON_QUIET"}
    env = {**base, "SURGEON_PROGRESS_DELAY": "0", **(env or {})}
    cmd = [sys.executable, "-m", "surgeon", *args]
    if not tty:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        return done.stdout, done.stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    out = proc.stdout.read().decode()
    proc.wait(timeout=300)
    os.close(master)
    return out, b"".join(chunks).decode(errors="replace")


def test_a_terminal_sees_progress_and_stdout_never_does():
    out, err = _surgeon(["inspect", str(SAMPLE)], tty=True)
    assert ERASE in err and "loading monai_resample_ts_opset17.onnx" in err and "matching (main)" in err
    assert "\r" not in out and "\x1b" not in out and out.startswith("would rewrite 1 chain(s)")
    assert err.endswith(ERASE) or err.rstrip("\r\n").endswith("\x1b[K")  # the line is erased when done


def test_quiet_and_pipes_see_none():
    for args, tty, env in ((["inspect", str(SAMPLE), "--quiet"], True, None),
                           (["inspect", str(SAMPLE)], True, {"SURGEON_QUIET": "1"}),
                           (["inspect", str(SAMPLE)], False, None)):
        out, err = _surgeon(args, tty, env)
        assert "\x1b" not in err and "\r" not in err and "\x1b" not in out, (args, tty, err)
        assert out.startswith("would rewrite 1 chain(s)")


def test_tasks_count_and_draw_a_bar():
    task = progress.Task("validating", total=4)
    task.start = 0.0
    task.advance(2)
    assert task.text(1.5) == f"validating [{'#' * 12}{'-' * 12}]  50% 2/4 1.5s"
    sized = progress.Task("writing m.onnx", unit="B")
    sized.advance(3 * 1024 * 1024)
    assert sized.text(2.0) == "writing m.onnx 3.0 MB 2.0s"
    assert list(progress.track(range(5), "counting")) == [0, 1, 2, 3, 4]  # stderr is no terminal here: no output


def test_off_when_stderr_is_not_a_terminal(capsys):
    with progress.task("work", total=2) as t:
        t.advance(2)
    assert not t.active and capsys.readouterr().err == ""
