"""custom.ops::FusedGridSample and custom.ops::AffineGrid (ops/OPS.md) in onnxruntime: a custom-op
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


OPS = ("custom.ops::FusedGridSample", "custom.ops::AffineGrid")  # what the library implements


def session(model, device: str = "cpu", sess_options=None, providers=None, **kwargs):
    """An onnxruntime.InferenceSession of `model` (a path, bytes or a ModelProto) with the op
    library registered in `sess_options` (a new SessionOptions if None; yours is changed).
    providers default to the CPU, or CUDA then CPU for device="cuda"; other keyword arguments
    go to InferenceSession. A model holding an op the library does not implement, or a library
    that cannot be built here, is a SurgeonError saying what to do instead (one line)."""
    import onnxruntime as ort

    path = os.fspath(model) if isinstance(model, (str, os.PathLike)) else None
    opts = sess_options if sess_options is not None else ort.SessionOptions()
    try:
        library = library_path(device)
    except Exception as exc:
        raise _error(f"surgeon's op library cannot be had here ({_first(exc)}); run the model without it: "
                     + _offline(path)) from None
    opts.register_custom_ops_library(library)
    if providers is None:
        providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if device == "cuda" else ["CPUExecutionProvider"]
    if not isinstance(model, (str, bytes, os.PathLike)):
        model = model.SerializeToString()  # a ModelProto (a model over 2 GB must come as a path)
    elif isinstance(model, os.PathLike):
        model = os.fspath(model)
    try:
        return ort.InferenceSession(model, sess_options=opts, providers=providers, **kwargs)
    except Exception as exc:
        from surgeon.errors import unregistered_op

        missing = unregistered_op(exc)
        if missing is None:
            raise
        raise _error(f"surgeon's op library implements {' and '.join(OPS)}, not {missing[0]}::{missing[1]}: "
                     "register the library of the plugin that wrote it too (sess_options.register_custom_ops_library"
                     "(path); `surgeon ort-lib` prints the installed plugins' libraries), or " + _offline(path)) from None


def _first(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _offline(path: str | None) -> str:
    """The two ways to run a fused file with no op library, as commands."""
    m = path or "MODEL"
    stem = os.path.splitext(m)[0] if path else "MODEL"
    return (f"add function bodies onnxruntime inlines (`surgeon fuse {m} {stem}.functions.onnx --functions "
            f"--raise-opset`) or write it back as standard ONNX (`surgeon unfuse {m} {stem}.std.onnx`)")


def _error(text: str) -> Exception:
    from surgeon import SurgeonError

    return SurgeonError(text)
