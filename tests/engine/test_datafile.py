"""The external-data file writer: layout, background copies, fallbacks and errors."""

import os

import pytest

from surgeon import datafile
from surgeon.datafile import DataFileWriter, ExternalRef
from surgeon.errors import SurgeonError


@pytest.fixture
def sources(tmp_path):
    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    a.write_bytes(os.urandom(100_000))
    b.write_bytes(os.urandom(9_000))
    return str(a), str(b)


def build(path, steps):
    """Run (kind, arg) steps through a writer; returns the offsets it gave."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        writer = DataFileWriter(fd)
        offsets = [writer.copy(arg) if kind == "copy" else writer.write(arg) for kind, arg in steps]
        writer.close()
    finally:
        os.close(fd)
    return offsets


@pytest.mark.parametrize("part", [DataFileWriter.PART, 1000])  # runs copied whole, or in parts
def test_layout_and_contents(tmp_path, sources, monkeypatch, part):
    monkeypatch.setattr(DataFileWriter, "PART", part)
    a, b = sources
    data_a, data_b = open(a, "rb").read(), open(b, "rb").read()
    steps = [("copy", ExternalRef(a, 0, 4000)),
             ("copy", ExternalRef(a, 4000, 1000)),     # adjacent: same run, layout kept
             ("copy", ExternalRef(a, 7000, 500)),      # within GAP: copied along
             ("write", b"inline-bytes"),
             ("copy", ExternalRef(b, 100, 8000)),
             ("copy", ExternalRef(a, 90_000, 10_000)),  # far away: a new run
             ("write", b"tail")]
    out = tmp_path / "out.bin"
    offsets = build(out, steps)
    got = out.read_bytes()
    assert offsets[:3] == [0, 4000, 7000]
    assert offsets[3] % 64 == 0 and offsets[4] % 4096 == 0 and offsets[5] % 4096 == 0
    for (kind, arg), at in zip(steps, offsets):
        want = arg if kind == "write" else (data_a if arg.path == a else data_b)[arg.offset:arg.offset + arg.length]
        assert got[at:at + len(want)] == want
    assert len(got) == offsets[-1] + len(b"tail")


def test_without_copy_file_range(tmp_path, sources, monkeypatch):
    def refuse(*args):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(datafile.os, "copy_file_range", refuse)
    monkeypatch.setattr(datafile, "_CHUNK", 1000)  # several chunks per range
    a, _ = sources
    out = tmp_path / "out.bin"
    build(out, [("copy", ExternalRef(a, 10, 5_555))])
    assert out.read_bytes() == open(a, "rb").read()[10:5_565]


def test_source_shorter_than_promised(tmp_path, sources, monkeypatch):
    monkeypatch.setattr(datafile.os, "copy_file_range", lambda *args: 0)  # what EOF looks like
    _, b = sources
    with pytest.raises(SurgeonError, match="ended early"):
        build(tmp_path / "out.bin", [("copy", ExternalRef(b, 0, 20_000))])


def test_a_failed_copy_is_raised_by_close(tmp_path, sources):
    a, _ = sources
    steps = [("copy", ExternalRef(str(tmp_path / "gone.bin"), 0, 10)), ("copy", ExternalRef(a, 0, 10))]
    with pytest.raises(FileNotFoundError):
        build(tmp_path / "out.bin", steps)
