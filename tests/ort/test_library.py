"""The op library as installed: one exported symbol, loading into onnxruntime, the CUDA variant
(no GPU needed); and the build's onnxruntime headers (cmake/ort_headers.py): where they come
from, the pinned package, one-line errors."""

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
from surgeon_ops.kernels import LibraryNotInstalled, installed

from .. import toolchain
from ..builders import fused_grid_sample_model

headers = toolchain.load_script("cmake/ort_headers.py")


def exported(path) -> set[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def test_the_library_loads_and_exports_only_its_entry_point(library):
    assert os.path.basename(library) == installed.library_name("surgeon_ort_cpu")
    assert exported(library) == {"RegisterCustomOps"}
    opts = ort.SessionOptions()
    opts.register_custom_ops_library(library)
    x, theta = np.ones((1, 1, 4, 4), np.float32), np.eye(2, 3, dtype=np.float32)[None]
    y = ort.InferenceSession(fused_grid_sample_model(output_size=[2, 2]).SerializeToString(), opts,
                             providers=["CPUExecutionProvider"]).run(None, dict(x=x, theta=theta))[0]
    np.testing.assert_allclose(y, np.ones((1, 1, 2, 2)), atol=1e-6)


def test_session_takes_a_path_bytes_or_a_model(tmp_path):
    model = fused_grid_sample_model(output_size=[2, 2])
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    x, theta = np.ones((1, 1, 4, 4), np.float32), np.eye(2, 3, dtype=np.float32)[None]
    for m in (model, model.SerializeToString(), str(path), path):
        assert surgeon_ops.ort.session(m).run(None, dict(x=x, theta=theta))[0].shape == (1, 1, 2, 2)


def test_headers_override_and_their_absence(monkeypatch, tmp_path):
    monkeypatch.setenv("ONNXRUNTIME_INCLUDE_DIR", str(tmp_path))
    with pytest.raises(headers.HeadersNotFound, match="ONNXRUNTIME_INCLUDE_DIR=.* holds no onnxruntime_c_api.h") as e:
        headers.find_or_fetch()
    assert "\n" not in str(e.value)
    monkeypatch.delenv("ONNXRUNTIME_INCLUDE_DIR")
    monkeypatch.setenv("SURGEON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(headers, "SYSTEM_PREFIXES", ())
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    with pytest.raises(headers.HeadersNotFound, match="set ONNXRUNTIME_INCLUDE_DIR") as e:
        headers.find()
    assert "\n" not in str(e.value)


def test_the_build_script_prints_the_folder_and_the_api(tmp_path):
    (tmp_path / headers.HEADER).write_text("#define ORT_API_VERSION 23\n")
    env = dict(os.environ, ONNXRUNTIME_INCLUDE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, headers.__file__], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [str(tmp_path), "23"]
    env["ONNXRUNTIME_INCLUDE_DIR"] = str(tmp_path / "none")
    done = subprocess.run([sys.executable, headers.__file__], env=env, capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout == "" and len(done.stderr.splitlines()) == 1


def test_an_unwritable_cache_fetches_into_the_build_folder(monkeypatch, tmp_path):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("SURGEON_CACHE_DIR", str(tmp_path / "file" / "cache"))
    assert headers.fetched_dir(tmp_path / "build") == tmp_path / "build" / "onnxruntime-headers" / "1.21.0"
    monkeypatch.setenv("SURGEON_CACHE_DIR", str(tmp_path / "cache"))
    assert headers.fetched_dir(tmp_path / "build") == tmp_path / "cache" / "onnxruntime-headers" / "1.21.0"


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


def test_the_cuda_variant_exports_only_its_entry_point():
    try:
        path = surgeon_ops.ort.library_path("cuda")
    except LibraryNotInstalled:
        if toolchain.find_nvcc():
            pytest.fail("nvcc is on this machine but the install has no CUDA op library: reinstall (pip install -e .)")
        pytest.skip("no nvcc here at build time: the CUDA variants are not built (README)")
    assert os.path.basename(path) == installed.library_name("surgeon_ort_cuda")
    assert exported(path) == {"RegisterCustomOps"}
    # Its CPU kernels run without a GPU (the CUDA ones need onnxruntime's CUDA provider).
    x, theta = np.ones((1, 1, 4, 4), np.float32), np.eye(2, 3, dtype=np.float32)[None]
    opts = ort.SessionOptions()
    opts.register_custom_ops_library(path)
    sess = ort.InferenceSession(fused_grid_sample_model(output_size=[2, 2]).SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, dict(x=x, theta=theta))[0], np.ones((1, 1, 2, 2)), atol=1e-6)
