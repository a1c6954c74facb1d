"""onnxruntime and custom domains: a node no kernel of onnxruntime's implements runs only with an
op library registered (or a model-local function body, which onnxruntime inlines). The plugin set
says what surgeon can provide (CustomOp.ort_library, a function body, a standard form)."""

from __future__ import annotations

from .ops import BUILTIN_DOMAINS
from .probe import OrtNodeProbe
from ..report import Hazard


def check(view, ctx):
    probe = OrtNodeProbe(view, ctx.ort_libraries) if ctx.ort_libraries else None
    for site in view.sites:
        node = site.node
        if node.domain in BUILTIN_DOMAINS or (node.domain, node.op_type) in view.functions:
            continue
        if probe is not None:
            reason = probe.error(site)
            if reason is None or reason is False:
                if reason is False:
                    ctx.note(f"{site.name}: not checked with the op libraries (its input types are unknown)")
                continue
            what = f"onnxruntime cannot run it with the op libraries given: {reason}"
        else:
            what = "no kernel of onnxruntime's implements it: a session without an op library refuses the model"
        yield Hazard("ort-custom-op", site.name, node.op_type, site.domain, what, _fix(ctx, site), site.graph)


def _fix(ctx, site) -> str:
    op = ctx.custom_op(site.node.domain, site.node.op_type)
    m = ctx.model
    offline = []
    if op is not None and op.function is not None:
        offline.append(f"`surgeon fuse {m} {ctx.path('functions')} --functions --raise-opset` (bodies "
                       "onnxruntime inlines)")
    if op is not None and op.to_standard is not None:
        offline.append(f"`surgeon unfuse {m} {ctx.path('std')}` (standard ONNX)")
    if op is not None and op.ort_library is not None:
        first = ("register surgeon's op library (`surgeon ort-lib` prints its path; "
                 f"`surgeon lint {m} --target onnxruntime --ort-library surgeon` checks with it)")
    else:
        first = "register the library that implements it (`--ort-library PATH` checks with it)"
    return "; or ".join([first, *offline])
