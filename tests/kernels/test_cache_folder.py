"""An unusable $SURGEON_CACHE_DIR: one warning line naming it, and builds go to a private
temp folder that works, instead of a raw NotADirectoryError."""

from __future__ import annotations

import os
import stat

import pytest

from surgeon_ops.kernels import cache


@pytest.fixture
def fresh_checks():
    cache._usable.cache_clear()
    yield
    cache._usable.cache_clear()


def _fallback(capsys):
    root = cache.cache_root()
    err = capsys.readouterr().err.splitlines()
    assert root.is_dir() and os.access(root, os.W_OK)
    assert stat.S_IMODE(os.stat(root).st_mode) & 0o077 == 0  # private
    return root, err


def test_a_file_in_the_way(tmp_path, monkeypatch, capsys, fresh_checks):
    blocker = tmp_path / "cache"
    blocker.write_text("not a folder")
    monkeypatch.setenv("SURGEON_CACHE_DIR", str(blocker))
    root, err = _fallback(capsys)
    assert root != blocker and len(err) == 1
    assert err[0].startswith("warning: ") and str(blocker) in err[0] and "is not a folder" in err[0]
    assert blocker.read_text() == "not a folder"


def test_a_folder_that_cannot_be_created(tmp_path, monkeypatch, capsys, fresh_checks):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("SURGEON_CACHE_DIR", str(tmp_path / "file" / "cache"))
    root, err = _fallback(capsys)
    assert len(err) == 1 and "cannot be created" in err[0] and "SURGEON_CACHE_DIR" in err[0]
    cache.cache_root()
    assert capsys.readouterr().err == ""  # said once per process


def test_a_usable_folder_is_used_quietly(tmp_path, monkeypatch, capsys, fresh_checks):
    monkeypatch.setenv("SURGEON_CACHE_DIR", str(tmp_path / "new" / "cache"))
    assert cache.cache_root() == tmp_path / "new" / "cache" and (tmp_path / "new" / "cache").is_dir()
    assert capsys.readouterr().err == ""


def test_a_planted_shared_folder_is_not_used(tmp_path, monkeypatch, fresh_checks):
    # another user's (or a world-writable) surgeon-cache-<uid> in the shared temp dir
    monkeypatch.setattr(cache.tempfile, "tempdir", str(tmp_path))
    planted = tmp_path / f"surgeon-cache-{os.getuid()}"
    planted.mkdir(mode=0o777)
    os.chmod(planted, 0o777)
    private = cache._private_temp()
    assert private != planted and stat.S_IMODE(os.stat(private).st_mode) & 0o077 == 0
