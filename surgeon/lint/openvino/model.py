"""The whole model in OpenVINO, as a user's Core meets it: ``core.read_model(path)`` on the file
(for a model not written yet, such as what ``fuse --target openvino`` is about to write: the file
surgeon's writer makes of it, in a private folder), the extensions given added, then
``core.compile_model(model, "CPU")``. Nodes that convert one by one can still fail here (the file
itself, an If or Loop body, shapes only the whole model has): this is what makes "no hazards"
mean that both calls succeed."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile

from ...errors import SurgeonError
from ...runtime.openvino import ov_message
from .sniff import not_recognised
from ..report import Hazard


UNRECOGNISED = "ov-file-not-recognised"  # the file itself, whatever its nodes


def read_and_compile(view, ctx, core, version: str):
    """(the model OpenVINO read, None) when both calls succeed; (None, a Hazard) when one fails;
    (None, None) when the model could not be given to OpenVINO as a file (a note says why)."""
    failed = "read_model fails"
    try:
        with tempfile.TemporaryDirectory(prefix="surgeon-lint-") as folder:
            path = ctx.source or _written(ctx, folder)
            with _native_stderr_quiet():
                model = core.read_model(path)
            failed = "it reads the model, and compile_model for the CPU fails"
            core.compile_model(model, "CPU")
    except SurgeonError as exc:  # the model could not be written for it (no room for its weights...)
        ctx.note(f"the whole model was not read in OpenVINO: {exc}")
        return None, None
    except Exception as exc:
        unread = ctx.source and not_recognised(ctx.source)
        if unread:
            out = ctx.path("ordered")
            return None, Hazard(UNRECOGNISED, "(model)", "", "", f"OpenVINO {version}: read_model fails: {unread}",
                                "save it again with its fields in order: `python -c \"import onnx; onnx.save("
                                f"onnx.load('{ctx.model}'), '{out}')\"`")
        return None, Hazard("ov-model", "(model)", "", "", f"OpenVINO {version}: {failed}: {ov_message(exc)}",
                            _fix(view, ctx))
    return model, None  # (weights read from the private folder stay mapped once it is gone)


@contextlib.contextmanager
def _native_stderr_quiet():
    """Where the ONNX frontend refuses a file, OpenVINO tries its TensorFlow frontend, which logs
    parse errors straight to file descriptor 2; the exception says what matters."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _written(ctx, folder: str) -> str:
    """The model as ``surgeon fuse`` writes it, external weights in a .data file beside it."""
    from ...io.save import save_model

    path = os.path.join(folder, "model.onnx")
    save_model(ctx.loaded, path)
    return path


def _fix(view, ctx) -> str:
    fix = "re-export the model without what OpenVINO's message names, or use an OpenVINO release that takes it"
    if ctx.unfusable(view):
        fix = f"`surgeon unfuse {ctx.model} {ctx.path('std')}` (the custom nodes as standard ONNX); or {fix}"
    return fix
