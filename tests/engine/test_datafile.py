"""The external-data file writer: layout, background copies, fallbacks and errors."""

import os

import pytest

from surgeon.io import datafile
from surgeon.io.datafile import DataFileWriter, ExternalRef
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


def _external(location, dims=(4,), offset=None, length=None, dtype=1):
    from onnx import TensorProto

    tensor = TensorProto(name="w", data_type=dtype, dims=list(dims), data_location=TensorProto.EXTERNAL)
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            tensor.external_data.add(key=key, value=value)
    return tensor


def test_resolve_checks_the_range_against_dims_and_file(tmp_path):
    (tmp_path / "w.bin").write_bytes(bytes(20))
    assert datafile.resolve(_external("w.bin", offset="4"), str(tmp_path)) == \
        ExternalRef(str((tmp_path / "w.bin").resolve()), 4, 16)
    assert datafile.resolve(_external("w.bin", dims=(5,), dtype=22), str(tmp_path)).length == 3  # int4: packed
    for bad, message in [(_external("w.bin", offset="8"), "too short"),
                         (_external("w.bin", length="12"), "is not the 16 bytes"),
                         (_external("w.bin", offset="+4"), "not a whole number"),
                         (_external("w.bin", dtype=8), "fixed-size element type")]:
        with pytest.raises(SurgeonError, match=message):
            datafile.resolve(bad, str(tmp_path))


def test_resolve_follows_links_only_inside_the_folder(tmp_path):
    model_dir, outside = tmp_path / "m", tmp_path / "o"
    model_dir.mkdir(), outside.mkdir()
    (outside / "secret.bin").write_bytes(bytes(64))
    (model_dir / "real.bin").write_bytes(bytes(64))
    os.symlink(outside / "secret.bin", model_dir / "out.bin")
    os.symlink(model_dir / "real.bin", model_dir / "in.bin")
    os.symlink(outside, model_dir / "sub")
    assert datafile.resolve(_external("in.bin"), str(model_dir)).path == str((model_dir / "real.bin").resolve())
    for location in ("out.bin", "sub/secret.bin", "../o/secret.bin", str(outside / "secret.bin")):
        with pytest.raises(SurgeonError, match="symbolic link|leaves the model's folder"):
            datafile.resolve(_external(location), str(model_dir))
