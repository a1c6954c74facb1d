"""onnxruntime sessions for the standard parts of a model, counted so tests can see reuse."""

from __future__ import annotations

from onnx import ModelProto

from ..errors import SurgeonError

_total = 0


def sessions_created() -> int:
    """How many sessions this process has built (all models)."""
    return _total


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def build_session(model: ModelProto, providers: list[str], external_dir: str | None, label: str):
    """One InferenceSession; ``external_dir`` is where external-data tensors are found."""
    import onnxruntime as ort

    global _total
    options = ort.SessionOptions()
    options.log_severity_level = 3  # ORT's warnings about unused initializers are noise here
    # Idle ORT workers otherwise spin for a while after each run, starving the kernel that runs
    # next on the same cores (measured: a 32x32 torch kernel went from ~1 ms to ~40 ms).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if external_dir:
        options.add_session_config_entry("session.model_external_initializers_file_folder_path", external_dir)
    try:
        session = ort.InferenceSession(model.SerializeToString(), options, providers=providers)
    except Exception as exc:
        raise SurgeonError(f"onnxruntime cannot load {label}: {_first_line(exc)}") from None
    _total += 1
    return session


def run_session(session, outputs: list[str], feeds: dict, label: str) -> list:
    try:
        return session.run(outputs, feeds)
    except Exception as exc:
        raise SurgeonError(f"onnxruntime failed in {label}: {_first_line(exc)}") from None
