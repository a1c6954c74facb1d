"""``surgeon.save``: write a model surgeon handed back (or any model) to a new place, with its
external data.

``onnx.save(result.model, elsewhere)`` writes only the graph: the weights of a model whose data
stays in external data are still named relative to the input's folder, so the copy points at a
file that is not there. ``save`` copies them, file to file (no weight passes through memory),
into ``OUT.data`` beside ``OUT``, atomically and never onto the input (modelsave.py).
"""

from __future__ import annotations

import os

from . import arguments, graphsurgeon
from .modelio import load_copy
from .modelsave import save_model


def save(model, path: str | os.PathLike, *, external_data: bool | None = None) -> None:
    """Write ``model`` (a FuseResult or UnfuseResult, or a model: ``result.model``, a
    ModelProto, a gs.Graph, a path) to ``path``. ``external_data``: weights in ``PATH.data``
    (default: as the model keeps them, and past 2 GB); ``False`` reads them into one file.
    ``model`` is never modified."""
    if hasattr(model, "report") and hasattr(model, "model"):  # a FuseResult / UnfuseResult
        model = model.model
    arguments.check_model(model)
    arguments.check_path(path, "path")
    arguments.check_type(external_data, bool, "external_data", "a bool", optional=True)
    loaded = load_copy(graphsurgeon.as_model(model))  # a ModelProto is copied: the caller's stays as it is
    save_model(loaded, path, external_data=external_data, restore=loaded is model)  # a LoadedModel is put back
