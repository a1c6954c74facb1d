"""custom.ops::FusedGridSample and custom.ops::AffineGrid (OPS.md) in onnxruntime: a custom-op
library that any onnxruntime (the release of its headers or later) loads through the standard
``SessionOptions.register_custom_ops_library``, in Python, C++, C# or Java alike.

    import surgeon_ops.ort
    sess = surgeon_ops.ort.session("model.fused.onnx")            # a plain InferenceSession
    opts.register_custom_ops_library(surgeon_ops.ort.library_path())  # or into your own options

The library calls the same kernel code as ``surgeon_ops.kernels`` (their static archive), on
onnxruntime's own intra-op threads.  It is compiled when the package is installed
(CMakeLists.txt beside this file; the build fetches onnxruntime's C API headers) and lies in
this package's folder.  ``device="cuda"``: the same ops with CUDA-provider kernels too, built
when nvcc was there at install time.
"""

from __future__ import annotations

import os

from surgeon_ops.kernels import installed


def library_path(device: str = "cpu") -> str:
    """Path to the installed op library for `device` ("cpu" or "cuda");
    LibraryNotInstalled (one line) when the install has none."""
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    hint = installed.HOW_TO_BUILD_CUDA if device == "cuda" else installed.HOW_TO_BUILD
    return str(installed.find(__package__, f"surgeon_ort_{device}", hint))


def session(model, device: str = "cpu", sess_options=None, providers=None, **kwargs):
    """An onnxruntime.InferenceSession of `model` (a path, bytes or a ModelProto) with the op
    library registered in `sess_options` (a new SessionOptions if None; yours is changed).
    providers default to the CPU, or CUDA then CPU for device="cuda"; other keyword arguments
    go to InferenceSession."""
    import onnxruntime as ort

    opts = sess_options if sess_options is not None else ort.SessionOptions()
    opts.register_custom_ops_library(library_path(device))
    if providers is None:
        providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if device == "cuda" else ["CPUExecutionProvider"]
    if not isinstance(model, (str, bytes, os.PathLike)):
        model = model.SerializeToString()  # a ModelProto (a model over 2 GB must come as a path)
    elif isinstance(model, os.PathLike):
        model = os.fspath(model)
    return ort.InferenceSession(model, sess_options=opts, providers=providers, **kwargs)
