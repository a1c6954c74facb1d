"""Fixtures for the plugin tests: the example plugin installed by pip (into a private folder
put on sys.path, so its entry point is discovered exactly as in a user's environment, but it
does not leak into other test packages or into the machine's site-packages)."""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_SRC = ROOT / "samples" / "plugin-example"


def _source_digest() -> str:
    """Changes whenever the plugin's code or metadata does: the install is redone then."""
    digest = hashlib.sha256()
    for path in sorted(PLUGIN_SRC.glob("surgeon_flowwarp/*.py")) + [PLUGIN_SRC / "pyproject.toml"]:
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def install_plugin() -> Path:
    """pip-install the example plugin once per source version; later calls reuse it (~0 s)."""
    target = Path(tempfile.gettempdir()) / f"surgeon-flowwarp-{_source_digest()}"
    if not (target / "surgeon_flowwarp").is_dir():
        work = Path(tempfile.mkdtemp(prefix="surgeon-flowwarp-build-"))
        # Build from a copy: pip builds in the source folder, and a surgeon_flowwarp.egg-info
        # left in the repository would look like a second installed copy to whoever puts the
        # folder on sys.path.
        source = work / "src"
        shutil.copytree(PLUGIN_SRC, source, ignore=shutil.ignore_patterns(
            "build", "*.egg-info", "__pycache__", "models"))
        partial = work / "site"
        result = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-q",
             "--disable-pip-version-check", "--target", str(partial), str(source)],
            capture_output=True, text=True)
        if result.returncode != 0:
            shutil.rmtree(work, ignore_errors=True)
            pytest.fail(f"pip install of {PLUGIN_SRC} failed:\n{result.stdout}\n{result.stderr}")
        try:
            os.replace(partial, target)  # atomic: an interrupted install never looks complete
        except OSError:  # another run finished first
            pass
        shutil.rmtree(work, ignore_errors=True)
    return target


@pytest.fixture(scope="package")
def plugin_site():
    """The folder the plugin is installed in, on sys.path for this test package only."""
    target = install_plugin()
    sys.path.insert(0, str(target))
    importlib.invalidate_caches()
    stale = [m for m in sys.modules if m == "surgeon_flowwarp" or m.startswith("surgeon_flowwarp.")]
    for name in stale:  # imported from somewhere else earlier: take the installed copy
        del sys.modules[name]
    yield target
    sys.path.remove(str(target))
    importlib.invalidate_caches()


@pytest.fixture(scope="package")
def plugin_env(plugin_site):
    """Environment for a `surgeon` subprocess that sees the installed plugin."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(plugin_site), str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env
