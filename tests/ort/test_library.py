"""Building the op library: where the headers come from, one-line errors when something is
missing, one line on stderr while compiling, one exported symbol, the CUDA variant compiling
with nvcc (no GPU needed), and loading into onnxruntime."""

import io
import lzma
import os
import subprocess
import sys
import tarfile

import numpy as np
import onnxruntime as ort
import pytest

import surgeon_ops.ort
from surgeon_ops.kernels import build as kbuild
from surgeon_ops.ort import build, headers

from . import models
from .conftest import new_session


def exported(path) -> set[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def test_the_library_loads_and_exports_only_its_entry_point(library):
    assert os.path.basename(library) == build.library_name("cpu")
    assert exported(library) == {"RegisterCustomOps"}
    opts = ort.SessionOptions()
    opts.register_custom_ops_library(library)
    x, theta = np.ones((1, 1, 4, 4), np.float32), np.eye(2, 3, dtype=np.float32)[None]
    y = ort.InferenceSession(models.fused(output_size=[2, 2]).SerializeToString(), opts,
                             providers=["CPUExecutionProvider"]).run(None, dict(x=x, theta=theta))[0]
    np.testing.assert_allclose(y, np.ones((1, 1, 2, 2)), atol=1e-6)


def test_session_takes_a_path_bytes_or_a_model(tmp_path):
    model = models.fused(output_size=[2, 2])
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    x, theta = np.ones((1, 1, 4, 4), np.float32), np.eye(2, 3, dtype=np.float32)[None]
    for m in (model, model.SerializeToString(), str(path), path):
        assert surgeon_ops.ort.session(m).run(None, dict(x=x, theta=theta))[0].shape == (1, 1, 2, 2)


def test_headers_override_and_their_absence(monkeypatch, tmp_path):
    monkeypatch.setenv("ONNXRUNTIME_INCLUDE_DIR", str(tmp_path))
    with pytest.raises(headers.HeadersNotFound, match="ONNXRUNTIME_INCLUDE_DIR=.* holds no onnxruntime_c_api.h") as e:
        surgeon_ops.ort.library_path()
    assert "\n" not in str(e.value)
    monkeypatch.delenv("ONNXRUNTIME_INCLUDE_DIR")
    monkeypatch.setenv("SURGEON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(headers, "SYSTEM_PREFIXES", ())
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    with pytest.raises(headers.HeadersNotFound, match="python -m surgeon_ops.ort.headers") as e:
        surgeon_ops.ort.library_path()
    assert "\n" not in str(e.value) and isinstance(e.value, kbuild.KernelBuildError)


def test_headers_newer_than_onnxruntime_are_refused(monkeypatch, tmp_path):
    (tmp_path / headers.HEADER).write_text("#define ORT_API_VERSION 99\n")
    monkeypatch.setenv("ONNXRUNTIME_INCLUDE_DIR", str(tmp_path))
    with pytest.raises(headers.HeadersNotFound, match=f"API 99 .* onnxruntime {ort.__version__} is installed"):
        surgeon_ops.ort.library_path()


def test_missing_compiler(monkeypatch, tmp_path):
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-g++"))
    with pytest.raises(kbuild.KernelBuildError, match="C\\+\\+ compiler .* not found"):
        build.build("cpu")


def test_compiling_says_so_on_stderr(monkeypatch, tmp_path):
    include = headers.find()
    cc = tmp_path / "cc"  # a stand-in compiler: builds nothing real, quickly
    cc.write_text(f"#!{sys.executable}\nimport sys\nif '--version' in sys.argv: print('fake 1.0'); sys.exit(0)\n"
                  "open(sys.argv[sys.argv.index('-o') + 1], 'w').write('x')\n")
    cc.chmod(0o755)
    env = dict(os.environ, CXX=str(cc), SURGEON_CACHE_DIR=str(tmp_path / "cache"), ONNXRUNTIME_INCLUDE_DIR=str(include))
    code = "import surgeon_ops.ort as o; print(o.library_path())"
    first, second = (subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
                     for _ in range(2))
    cache = tmp_path / "cache"
    assert first.stderr.splitlines() == [
        f"surgeon: compiling the CPU kernels (once, up to a minute; cached in {cache / 'kernels'})...",
        f"surgeon: compiling the onnxruntime op library (once, about 10 s; cached in {cache / 'ort'})..."]
    assert second.stderr == "" and second.stdout == first.stdout


def fake_deb(files: dict) -> bytes:
    """A .deb (an ar archive) whose data.tar.xz holds `files`."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo("./" + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    members = {"debian-binary": b"2.0\n", "control.tar.xz": lzma.compress(b""),
               "data.tar.xz": lzma.compress(buf.getvalue())}
    out = b"!<arch>\n"
    for name, body in members.items():
        header = f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(body):<10}`\n".encode()
        out += header + body + (b"\n" if len(body) % 2 else b"")
    return out


def test_fetch_checks_the_pinned_hash_and_unpacks_only_the_headers(monkeypatch, tmp_path):
    deb = fake_deb({"usr/include/onnxruntime/onnxruntime_c_api.h": b"#define ORT_API_VERSION 21\n",
                    "usr/include/onnxruntime/core/providers/resource.h": b"//\n", "usr/lib/libx.so": b"elf"})
    monkeypatch.setenv("SURGEON_CACHE_DIR", str(tmp_path / "cache"))

    def download(tmp):
        path = os.path.join(tmp, "pkg.deb")
        open(path, "wb").write(deb)
        return headers.Path(path)

    monkeypatch.setattr(headers, "_download", download)
    with pytest.raises(headers.HeadersNotFound, match="has sha256 .* expected 14f7d959"):
        headers.fetch()
    monkeypatch.setattr(headers, "SHA256", __import__("hashlib").sha256(deb).hexdigest())
    folder = headers.fetch()
    assert folder == headers.fetched_dir() and headers.api_version(folder) == 21
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == [
        "core/providers/resource.h", "onnxruntime_c_api.h"]
    assert headers.find() == folder


def test_the_cuda_variant_compiles_with_nvcc():
    try:
        kbuild.find_nvcc()
    except kbuild.KernelBuildError as exc:
        pytest.fail(f"nvcc is part of this project's toolchain: {exc}")
    path = surgeon_ops.ort.library_path("cuda", ["sm_90"])
    assert os.path.basename(path) == build.library_name("cuda")
    assert exported(path) == {"RegisterCustomOps"}
    # Its CPU kernels run without a GPU (the CUDA ones need onnxruntime's CUDA provider).
    x, theta = np.ones((1, 1, 4, 4), np.float32), np.eye(2, 3, dtype=np.float32)[None]
    opts = ort.SessionOptions()
    opts.register_custom_ops_library(path)
    sess = ort.InferenceSession(models.fused(output_size=[2, 2]).SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, dict(x=x, theta=theta))[0], np.ones((1, 1, 2, 2)), atol=1e-6)
