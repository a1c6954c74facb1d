"""onnx-graphsurgeon interop: the library entry points take a ``gs.Graph`` wherever they take a
model, and ``fuse`` hands one back, with no round trip through a file. onnx_graphsurgeon is only
imported when a Graph is handed in."""

from __future__ import annotations

from onnx import ModelProto

from ..errors import InvalidModelError


def is_graph(model) -> bool:
    kind = type(model)
    return kind.__name__ == "Graph" and kind.__module__.startswith("onnx_graphsurgeon")


def to_proto(graph) -> ModelProto:
    import onnx_graphsurgeon as gs

    try:
        return gs.export_onnx(graph)
    except Exception as exc:
        text = str(exc).strip().splitlines()
        raise InvalidModelError(f"the graphsurgeon Graph cannot be exported to ONNX: {text[0] if text else exc}") from None


def from_proto(proto: ModelProto):
    import onnx_graphsurgeon as gs

    return gs.import_onnx(proto)


def as_model(model):
    """A gs.Graph as a ModelProto; anything else as it is."""
    return to_proto(model) if is_graph(model) else model
