"""OpenVINO and what its ONNX frontend converts: standard and contrib nodes it cannot convert (a
5-D GridSample, com.microsoft ops it has no rule for...), custom-domain nodes no extension given
converts (ATen fallbacks, a plugin's ops), and nodes defined by model-local functions, which the
frontend does not use. Asked of the installed OpenVINO, node by node (lint/openvino/probe.py); then the whole
model as a user's Core reads and compiles it (lint/openvino/model.py), and, where it does, for values whose
shape OpenVINO infers other than ONNX does."""

from __future__ import annotations

from ...graph.node import subgraphs_of
from .model import UNRECOGNISED, read_and_compile
from .probe import OvProbe, openvino_version
from ..report import Hazard

# Domains the ONNX frontend has conversions of its own for; any other is a custom domain.
BUILTIN_DOMAINS = ("", "ai.onnx", "ai.onnx.ml", "com.microsoft", "org.openvinotoolkit")


def check(view, ctx):
    version = openvino_version()  # (lint checked it is installed)
    probe = OvProbe(view, ctx.ov_extensions)
    unknown, explained = 0, False
    for site in view.sites:
        node = site.node
        if subgraphs_of(node):
            continue  # an If/Loop is converted with its bodies, whose nodes are sites of their own
        builtin = node.domain in BUILTIN_DOMAINS
        reason = probe.error(site)
        if reason is False:
            unknown += 1
            continue
        if not reason:
            continue
        explained = True
        if builtin:
            yield Hazard("ov-cannot-convert", site.name, node.op_type, site.domain,
                         f"OpenVINO {version} cannot convert it: {reason}", _fuse_fix(ctx), site.graph)
        elif (node.domain, node.op_type) in view.functions:
            yield Hazard("ov-local-function", site.name, node.op_type, site.domain,
                         "OpenVINO's ONNX frontend does not use model-local functions: the node has no conversion "
                         "and read_model fails", _custom_fix(ctx, site), site.graph)
        else:
            what = ("no OpenVINO conversion for it: read_model fails ('Model wasn't fully converted')"
                    if not ctx.ov_extensions else f"OpenVINO cannot convert it with the extensions given: {reason}")
            yield Hazard("ov-custom-op", site.name, node.op_type, site.domain, what, _custom_fix(ctx, site),
                         site.graph)
    if unknown:
        ctx.note(f"{unknown} node(s) not checked against OpenVINO: their input types are unknown")
    model, failure = read_and_compile(view, ctx, probe.core, version)
    if failure is not None and (not explained or failure.rule == UNRECOGNISED):  # else the nodes above are why
        yield failure
    if model is not None:
        yield from _shapes(view, ctx, model, version)


def _shapes(view, ctx, model, version):
    """Values whose shape OpenVINO, reading the whole model, infers other than ONNX does (a dim
    both know): OpenVINO then computes something else, silently (2026.4: a standard AffineGrid
    with a unit-size dim and align_corners=1 makes two rows)."""
    seen = set()
    for op in model.get_ordered_ops():
        for port in op.outputs():
            shape = port.get_partial_shape()
            for name in port.get_names():
                site, dims = view.producer.get(name), view.dims(name)
                if site is None or dims is None or name in seen or shape.rank.is_dynamic or len(dims) != shape.rank.get_length():
                    continue
                ov_dims = [d.get_length() if d.is_static else None for d in shape]
                if any(isinstance(a, int) and isinstance(b, int) and a != b for a, b in zip(dims, ov_dims)):
                    seen.add(name)
                    if any(v in seen for v in site.node.input):
                        continue  # follows from a value already named: its line is the cause
                    yield Hazard("ov-shape", site.name, site.node.op_type, site.domain,
                                 f"OpenVINO {version} computes {name!r} with shape "
                                 f"{[d if d is not None else '?' for d in ov_dims]}, ONNX says "
                                 f"{[d if isinstance(d, int) else '?' for d in dims]}: its values differ too, silently",
                                 _fuse_fix(ctx), site.graph)


def _custom_fix(ctx, site) -> str:
    op = ctx.custom_op(site.node.domain, site.node.op_type)
    m = ctx.model
    fixes = []
    if op is not None and op.openvino_extension is not None:
        fixes.append("add surgeon's OpenVINO extension (`core.add_extension(surgeon_ops.openvino.library_path())`; "
                     f"`surgeon lint {m} --target openvino --ov-extension surgeon` checks with it)")
    else:
        fixes.append("add an extension that converts it (`--ov-extension PATH` checks with it)")
    if op is not None and op.to_standard is not None:
        fixes.append(f"`surgeon unfuse {m} {ctx.path('std')}` (standard ONNX)")
    elif op is None or op.openvino_extension is None:
        fixes.append(_fuse_fix(ctx))
    return "; or ".join(fixes)


def _fuse_fix(ctx) -> str:
    m = ctx.model
    if ctx.after_fuse:
        return "a plugin for it with an OpenVINO extension (fuse left it as it was: its report says why)"
    return (f"`surgeon fuse {m} {ctx.path('fused')}` if an installed pattern covers it (`surgeon inspect {m}` says), "
            "then its extension; else re-export the model without it")
