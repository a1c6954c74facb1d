"""Headless Chromium (Debian's `chromium`, installed by .ci/run) for the HTML report's tests: the
page as the browser built it (DOM after the scripts ran) and a screenshot."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars", "--mute-audio"]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "chromium is not installed: .ci/run installs it (apt-get install chromium)"
    return found


def _run(page: Path, extra: list[str], hash_: str = "", timeout: int = 120) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="surgeon-chromium-") as profile:
        cmd = [chromium(), *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=10000",
               "--enable-logging=stderr", "--v=0", *extra, page.resolve().as_uri() + hash_]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def dom(page: Path, hash_: str = "#render-all") -> tuple[str, str]:
    """The serialised DOM once the page's scripts ran, and Chromium's log (console messages)."""
    done = _run(page, ["--dump-dom"], hash_)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


def screenshot(page: Path, out: Path, width: int = 1400, height: int = 2400, hash_: str = "#render-all") -> Path:
    done = _run(page, [f"--window-size={width},{height}", f"--screenshot={out}"], hash_)
    assert done.returncode == 0 and out.exists(), done.stderr[-2000:]
    return out
