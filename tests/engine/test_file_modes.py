"""Outputs get the permissions any tool's new file gets (0666 less the umask), whatever the
command and kind of file; the temp files they are written to stay private until renamed."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from surgeon.io import atomic as atomicfile

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "models" / "stn_ts_opset20_2d.onnx"


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def surgeon(umask: int, *args) -> None:
    code = f"import os, sys; os.umask({umask}); sys.argv[0] = 'surgeon'; from surgeon.cli import main; main()"
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o002])
def test_every_kind_of_output_follows_the_umask(tmp_path, umask):
    fused = tmp_path / "stn.fused.onnx"
    surgeon(umask, "fuse", SAMPLE, fused, "--validate", "--external-data", "--report", tmp_path / "r.json",
            "--html", tmp_path / "r.html")
    surgeon(umask, "run", fused, "--output-dir", tmp_path / "out")
    surgeon(umask, "unfuse", fused, tmp_path / "std.onnx")
    surgeon(umask, "validate", SAMPLE, fused, "--html", tmp_path / "v.html")
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    names = {p.name for p in written}
    assert {"stn.fused.onnx", "stn.fused.onnx.data", "r.json", "r.html", "std.onnx", "v.html", "y.npy"} <= names
    assert {p.name: oct(mode(p)) for p in written} == {p.name: oct(0o666 & ~umask) for p in written}


def test_the_temp_file_is_private_until_renamed(tmp_path):
    old = os.umask(0o022)
    try:
        seen = []
        target = tmp_path / "out.bin"
        atomicfile.write_file(str(target), lambda f: seen.append(stat.S_IMODE(os.fstat(f.fileno()).st_mode)))
        assert seen == [0o600] and mode(target) == 0o644
    finally:
        os.umask(old)


def test_the_umask_is_read_without_changing_it():
    old = os.umask(0o037)
    try:
        assert atomicfile.umask() == 0o037 and atomicfile.new_file_mode() == 0o640
        assert os.umask(0o037) == 0o037  # still set
    finally:
        os.umask(old)


def test_a_group_appears_whole_or_not_at_all(tmp_path):
    with pytest.raises(RuntimeError):
        with atomicfile.Outputs() as out:
            os.close(out.new(str(tmp_path / "a")))
            os.close(out.new(str(tmp_path / "b")))
            raise RuntimeError("failed half way")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "blocker").mkdir()  # a folder where the second file goes: its rename fails
    with pytest.raises(OSError):
        with atomicfile.Outputs() as out:
            os.close(out.new(str(tmp_path / "a")))
            os.close(out.new(str(tmp_path / "blocker")))
    assert [p.name for p in tmp_path.iterdir()] == ["blocker"]  # "a", renamed first, is gone again
