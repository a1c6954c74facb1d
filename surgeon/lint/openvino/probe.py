"""Asks the installed OpenVINO itself whether it converts a node: the same one-node model as the
onnxruntime probe (the node's opsets, attributes, input types and shapes, small constants) is
read by OpenVINO's ONNX frontend with the deployment's extensions added, and, where every input's
rank is known, compiled for the CPU. Answers are cached by the node's signature."""

from __future__ import annotations

from ...errors import SurgeonError
from ...runtime.openvino import new_core, ov_message
from ..onnxruntime.probe import OrtNodeProbe


class OvProbe(OrtNodeProbe):
    def __init__(self, view, extensions=()):
        super().__init__(view)
        self.core = new_core(extensions)

    def _session(self, model, feeds) -> str | None:
        try:
            converted = self.core.read_model(model.SerializeToString(), b"")
            if all(vi.type.tensor_type.HasField("shape") for vi in model.graph.input):
                self.core.compile_model(converted, "CPU")  # the CPU plugin refuses unknown ranks itself
        except Exception as exc:  # OpenVINO's own words are the finding
            return ov_message(exc)
        return None


def openvino_version() -> str | None:
    """The installed OpenVINO release, None when the package is missing."""
    try:
        import openvino
    except ImportError:
        return None
    return openvino.__version__.split("-")[0]


def require_openvino(target: str) -> None:
    """Linting for OpenVINO asks OpenVINO itself: without it, one line saying what to install
    (rather than a lint that checked nothing and says "no hazards")."""
    if openvino_version() is None:
        raise SurgeonError(f"target {target}: the openvino package is not installed, and this check asks OpenVINO "
                           "itself whether it reads and compiles the model (`pip install openvino`)")
