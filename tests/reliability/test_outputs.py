"""Where outputs go: never onto an input (through links too), all of a command's outputs or
none, and a clear line when the place cannot be written."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ..builders import weighted_warp_file, weighted_warp_model, write_model
from .harness import check, invoke, listing, snapshot


@pytest.fixture
def src(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    weighted_warp_file(folder)  # m.onnx + m.onnx.data
    return folder


def refused(args, capfd, message, *folders):
    """``surgeon ARGS`` fails with ``message``, and no folder changes."""
    before = snapshot(*folders)
    outcome = invoke(args, capfd)
    check(outcome, 1, message)
    assert snapshot(*folders) == before, outcome.describe()


def test_output_is_the_input(src, capfd):
    refused(["fuse", src / "m.onnx", src / "m.onnx"], capfd, "output is the input file", src)


def test_output_links_to_the_input(src, capfd, tmp_path):
    os.symlink(src / "m.onnx", tmp_path / "soft.onnx")
    os.link(src / "m.onnx", tmp_path / "hard.onnx")
    for out in ("soft.onnx", "hard.onnx"):
        refused(["fuse", src / "m.onnx", tmp_path / out], capfd, "output is the input file", src, tmp_path)


def test_output_data_file_would_be_the_input(tmp_path, capfd):
    """The campaign's case: `fuse m.onnx.data m.onnx --external-data` writes m.onnx.data."""
    write_model(weighted_warp_model(), tmp_path / "m.onnx.data")
    refused(["fuse", tmp_path / "m.onnx.data", tmp_path / "m.onnx", "--external-data"], capfd,
            "output is the input file", tmp_path)


def test_output_data_file_would_be_the_inputs_data(src, capfd, tmp_path):
    os.symlink(src / "m.onnx.data", tmp_path / "o.onnx.data")
    refused(["fuse", src / "m.onnx", tmp_path / "o.onnx"], capfd, "external data", src, tmp_path)
    os.unlink(tmp_path / "o.onnx.data")
    os.rename(src / "m.onnx", src / "in.onnx")  # its data file is now named like m.onnx's would be
    refused(["fuse", src / "in.onnx", src / "m.onnx"], capfd, "external data", src)


def test_report_is_the_input_or_the_output(src, capfd, tmp_path):
    refused(["fuse", src / "m.onnx", tmp_path / "o.onnx", "--report", src / "m.onnx"], capfd,
            "output is the input file", src, tmp_path)
    refused(["fuse", src / "m.onnx", tmp_path / "o.onnx", "--report", tmp_path / "o.onnx"], capfd,
            "given for two outputs", src, tmp_path)


def test_unwritable_report_leaves_no_model(src, capfd, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    refused(["fuse", src / "m.onnx", out / "o.onnx", "--report", tmp_path / "missing" / "r.json"], capfd,
            "does not exist", src, out)
    assert listing(out) == []


def test_report_that_fails_at_rename_takes_the_model_back(src, capfd, tmp_path, monkeypatch):
    (tmp_path / "r.json").mkdir()  # a folder where the report should go: its rename fails last
    (tmp_path / "r.json" / "keep").write_text("x")
    monkeypatch.setattr("surgeon.io.save.check_outputs", lambda *a: None)  # get past the early check
    outcome = invoke(["fuse", src / "m.onnx", tmp_path / "o.onnx", "--report", tmp_path / "r.json"], capfd)
    check(outcome, 1, "cannot write")
    assert listing(tmp_path) == ["r.json", "src"], outcome.describe()


@pytest.mark.parametrize("where, message", [
    ("missing/o.onnx", "does not exist"),
    ("file/o.onnx", "does not exist"),
    ("folder", "is a folder"),
])
def test_bad_output_places(src, capfd, tmp_path, where, message):
    (tmp_path / "file").write_text("not a folder")
    (tmp_path / "folder").mkdir()
    refused(["fuse", src / "m.onnx", tmp_path / where], capfd, message, src, tmp_path)


def _read_only(folder):
    """A folder this process cannot write: chmod, or for root (which ignores it) chattr +i."""
    folder.chmod(0o555)
    if os.geteuid() != 0:
        return True
    if shutil.which("chattr") and subprocess.run(["chattr", "+i", folder], capture_output=True).returncode == 0:
        return True
    return False


def test_read_only_output_folder(src, capfd, tmp_path):
    out = tmp_path / "ro"
    out.mkdir()
    if not _read_only(out):
        pytest.skip("running as root without chattr: no folder is read-only")
    try:
        refused(["fuse", src / "m.onnx", out / "o.onnx"], capfd, "not writable", src, out)
        refused(["run", src / "m.onnx", "--output-dir", out / "npy"], capfd, "", src, out)
    finally:
        subprocess.run(["chattr", "-i", out], capture_output=True)
        out.chmod(0o755)


def test_nothing_but_the_outputs_after_success(src, capfd, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    before = snapshot(src)
    outcome = invoke(["fuse", src / "m.onnx", out / "o.onnx", "--report", out / "r.json"], capfd)
    check(outcome, 0, None)
    assert listing(out) == ["o.onnx", "o.onnx.data", "r.json"]
    assert snapshot(src) == before


def test_other_commands_reports_never_replace_an_input(src, capfd, tmp_path):
    good = write_model(weighted_warp_model(), tmp_path / "good.onnx")
    refused(["inspect", src / "m.onnx", "--report", src / "m.onnx"], capfd, "output is the input file", src)
    refused(["validate", good, src / "m.onnx", "--report", src / "m.onnx.data"], capfd, "external data", src,
            tmp_path)
