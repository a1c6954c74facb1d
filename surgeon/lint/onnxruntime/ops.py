"""onnxruntime and the ops it ships (standard and contrib domains): a node the installed version
cannot run at the model's opset (no kernel, a type it lacks, a mode name of another opset),
found by asking onnxruntime itself."""

from __future__ import annotations

from onnx import helper

from ...graph.node import subgraphs_of
from .probe import OrtNodeProbe
from ..report import Hazard

BUILTIN_DOMAINS = ("", "ai.onnx", "ai.onnx.ml", "com.microsoft", "ai.onnx.preview.training")
# GridSample's mode names per opset (16-19, 20+): onnxruntime checks them strictly.
_MODES = {16: {"linear": "bilinear", "cubic": "bicubic"}, 20: {"bilinear": "linear", "bicubic": "cubic"}}


def check(view, ctx):
    import onnxruntime

    version = onnxruntime.__version__
    probe = OrtNodeProbe(view)
    refused = probe.model_error()
    if refused:
        yield Hazard("ort-opset", "(model)", "", "", f"onnxruntime {version} loads no model with these opsets "
                     f"({refused})", "convert the model to an opset it knows (onnx.version_converter) or upgrade "
                     "onnxruntime")
        return
    unknown = 0
    for site in view.sites:
        node = site.node
        if node.domain not in BUILTIN_DOMAINS or subgraphs_of(node):
            continue
        reason = probe.error(site)
        if reason is False:
            unknown += 1
        elif reason:
            yield Hazard("ort-cannot-run", site.name, node.op_type, site.domain,
                         f"onnxruntime {version} cannot run it at opset {view.opset(site.domain)}: {reason}",
                         _fix(view, site), site.graph)
    if unknown:
        ctx.note(f"{unknown} node(s) not checked against onnxruntime: their input types are unknown")


def _fix(view, site) -> str:
    node = site.node
    if node.op_type == "GridSample" and not site.domain:
        mode = next((helper.get_attribute_value(a).decode() for a in node.attribute if a.name == "mode"), "")
        names = _MODES[20 if (view.opset("") or 0) >= 20 else 16]
        if mode in names:
            return f"name the mode '{names[mode]}', as opset {view.opset('')} does"
    return "write the op as this onnxruntime runs it at this opset (types, attributes), or upgrade onnxruntime"
