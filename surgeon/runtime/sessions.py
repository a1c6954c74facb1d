"""onnxruntime sessions for the standard parts of a model, counted so tests can see reuse."""

from __future__ import annotations

from onnx import ModelProto

from ..errors import SurgeonError, ort_message
from ..forksafe import ForkSafeSession

_total = 0


def sessions_created() -> int:
    """How many sessions this process has built (all models)."""
    return _total


def build_session(model: ModelProto, providers: list[str], external_dir: str | None, label: str,
                  libraries: tuple[str, ...] = (), path: str | None = None, optimize: bool = True):
    """One InferenceSession; ``external_dir`` is where external-data tensors are found;
    ``libraries`` are custom-op libraries to register; ``path`` the model's file, which the
    advice for an op onnxruntime has no kernel for names in its commands. ``optimize=False``
    runs the graph as written (no graph optimisation: onnxruntime would otherwise fuse an erf
    GELU or a LayerNorm decomposition into the very op a rewrite writes, and the reference
    would be rewritten too)."""
    import onnxruntime as ort

    global _total
    options = ort.SessionOptions()
    # Fatal only: what goes wrong comes back as the exception, reported as one line; ORT's own
    # log lines (errors too, with colour codes) would be extra lines on stderr.
    options.log_severity_level = 4
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    # Idle ORT workers otherwise spin for a while after each run, starving the kernel that runs
    # next on the same cores (measured: a 32x32 torch kernel went from ~1 ms to ~40 ms).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if external_dir:
        options.add_session_config_entry("session.model_external_initializers_file_folder_path", external_dir)
    try:
        for library in libraries:
            options.register_custom_ops_library(library)
        session = ort.InferenceSession(model.SerializeToString(), options, providers=providers)
    except Exception as exc:
        raise SurgeonError(f"onnxruntime cannot load {label}: {ort_message(exc, path)}") from None
    _total += 1
    return ForkSafeSession(session)  # a fork child must not free it (surgeon/forksafe.py)


def run_session(session, outputs: list[str], feeds: dict, label: str) -> list:
    try:
        return session.run(outputs, feeds)
    except Exception as exc:
        raise SurgeonError(f"onnxruntime failed in {label}: {ort_message(exc)}") from None
