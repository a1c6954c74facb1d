"""``lint(model, target)``: run the target engine's rules over the model."""

from __future__ import annotations

import os

from ..io import graphsurgeon
from ..errors import SurgeonError, ort_message
from ..io.load import load_model_proto
from .onnxruntime import domains as ort_domains, ops as ort_ops
from .openvino import ops as ov_ops, precision as ov_precision
from .tensorrt import ops as trt_ops, plugins as trt_plugins, sampling as trt_sampling
from .context import LintContext
from .openvino.probe import require_openvino
from .report import LintReport
from .view import ModelView

RULES = {"tensorrt": (trt_sampling, trt_ops, trt_plugins), "onnxruntime": (ort_ops, ort_domains),
         "openvino": (ov_ops, ov_precision)}
ENGINES = tuple(RULES)


def lint(model, target: str, *, plugins=None, ort_libraries=(), ov_extensions=(), label: str | None = None,
         after_fuse: bool = False) -> LintReport:
    """What ``target`` ("tensorrt", "onnxruntime" or "openvino") will do with ``model`` (a path,
    ModelProto, LoadedModel or graphsurgeon Graph), one hazard per node and rule.

    ``plugins`` (None: the installed ones) tells what surgeon can provide for custom ops;
    ``ort_libraries`` are onnxruntime op libraries the deployment registers (paths, or
    "surgeon" for the plugin set's own), with which custom nodes are checked (target
    "onnxruntime" only); ``ov_extensions`` likewise OpenVINO extensions the deployment adds to
    its Core (target "openvino", which needs the openvino package). ``label`` is the
    path the fix commands name (default: the model's path); ``after_fuse``: the model is what
    ``fuse --target`` wrote from ``label`` (no fix suggests running fuse again)."""
    if target not in RULES:
        raise SurgeonError(f"unknown lint target {target!r} (known: {', '.join(ENGINES)})")
    path = os.fspath(model) if isinstance(model, (str, os.PathLike)) else ""
    loaded = load_model_proto(graphsurgeon.as_model(model))
    view = ModelView(loaded.proto)
    ctx = LintContext(model=label or path or "MODEL", plugins=plugins, after_fuse=after_fuse, target=target,
                      source=path, loaded=loaded)
    # Only the engine linted for is asked for its files (a TensorRT user has no OpenVINO); what
    # fuse --target wrote runs with the library or extension of the plugins that wrote it.
    ours = ("surgeon",) if after_fuse else ()
    if target == "onnxruntime":
        ctx.ort_libraries = _libraries(view, ctx, ort_libraries or ours)
    if target == "openvino":
        ctx.ov_extensions = _extensions(view, ctx, ov_extensions or ours)
        require_openvino(target)
    report = LintReport(target, model=path)
    for rules in RULES[target]:
        report.hazards.extend(rules.check(view, ctx))
    report.notes.extend(ctx.notes)
    return report


def _libraries(view, ctx, given) -> tuple:
    """Paths of the onnxruntime op libraries to check with ("surgeon": the plugin set's)."""
    return _plugin_files(view, ctx, given, "--ort-library", "op library", lambda op: op.ort_library and
                         (lambda: op.ort_library("cpu")), _loads)


def _extensions(view, ctx, given) -> tuple:
    """Paths of the OpenVINO extensions to check with ("surgeon": the plugin set's, as installed
    for this OpenVINO)."""
    def loads(path: str) -> None:
        from ..runtime.openvino import new_core

        new_core([os.path.abspath(path)])  # one line when OpenVINO cannot load it

    return _plugin_files(view, ctx, given, "--ov-extension", "OpenVINO extension",
                         lambda op: op.openvino_extension, loads)


def _plugin_files(view, ctx, given, option: str, what: str, getter, loads) -> tuple:
    """The files given (each checked to exist and to load), and for "surgeon", the plugin set's
    file for each custom op of the model that has one (``getter(op)``: a function giving its
    path, or None)."""
    paths = []
    asked = f"--target {ctx.target}" if ctx.after_fuse else f"{option} surgeon"  # what the user typed
    for item in given:
        if item != "surgeon":
            if not os.path.isfile(item):
                raise SurgeonError(f"{option} {item}: no such file")
            loads(item)
            paths.append(os.path.abspath(item))
            continue
        keys = {(s.node.domain, s.node.op_type) for s in view.sites if s.domain}
        for key in sorted(keys):
            op = ctx.custom_op(*key)
            find = getter(op) if op is not None else None
            if find:
                try:
                    paths.append(find())
                except Exception as exc:
                    text = str(exc).strip().splitlines()
                    raise SurgeonError(f"{asked}: cannot have the {what} for {key[0]}::{key[1]}: "
                                       f"{text[0] if text else exc}") from None
    return tuple(dict.fromkeys(paths))


def _loads(path: str) -> None:
    """onnxruntime takes ``path`` as a custom-op library (it has RegisterCustomOps and it succeeds)."""
    import onnxruntime as ort

    try:
        ort.SessionOptions().register_custom_ops_library(os.path.abspath(path))
    except Exception as exc:
        raise SurgeonError(f"--ort-library {path}: onnxruntime cannot load it as an op library "
                           f"({ort_message(exc)})") from None
