"""TensorRT and op types: standard ops its parser has no importer for, and custom ops named like
standard ones (the parser ignores the domain, so those never reach a plugin)."""

from __future__ import annotations

import onnx.defs

from ..report import Hazard
from .facts import IMPORTERS, REFUSED, SOURCE


def check(view, ctx):
    command = ctx.tensorrt_command(view)
    fuse = (f"`{command}` if an installed pattern covers it (`surgeon inspect {ctx.model} --target tensorrt` "
            "says), else a plugin for it" if command else "a plugin for it (fuse left it as it was: its report says "
            "why)")
    for site in view.sites:
        op = site.node.op_type
        if not site.domain:
            if op in REFUSED:
                what = f"TensorRT has no importer for {op} ({SOURCE} refuses the node): parsing fails"
            elif op not in IMPORTERS and onnx.defs.has(op):
                what = f"{op} has no importer in {SOURCE}: the parser looks for a plugin named {op}"
            else:
                continue
            yield Hazard("trt-unsupported-op", site.name, op, "", what, fuse, site.graph)
        elif op in REFUSED or onnx.defs.has(op) or (op in IMPORTERS and not op.startswith("TRT_")):
            verdict = ("refuses the node and never looks for a plugin" if op in REFUSED else
                       "imports it as the standard op and never looks for a plugin" if op in IMPORTERS else
                       "finds a plugin only until it gains an importer for the standard op")
            yield Hazard("trt-shadowed-op-type", site.name, op, site.domain,
                         f"TensorRT ignores the domain: {op} is a standard op's name, so the parser {verdict}",
                         "give the op (and its plugin) a name no standard op has"
                         + (f"; `{command}` writes surgeon's ops that way" if command else ""),
                         site.graph)
