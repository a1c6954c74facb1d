"""Which standard and contrib ops onnxruntime can run: what ``fuse`` warns about at once.

A pattern that writes an op onnxruntime does not have (``com.microsoft::SimplifiedLayerNormalization``,
which onnxruntime registers only in the default domain), or one past the model's opset
(``RMSNormalization`` in an opset-18 model), writes a model nothing here can run; ``run`` and
``validate`` would stop at it, so ``fuse`` names it as it does a custom op with no kernel.

The answer comes from onnxruntime's own registries, read once per process: its op schemas (which
ops exist, in which domain, from which opset) and its CPU kernels (for which opsets); an op with
no kernel still runs when its schema has a function body, which onnxruntime inlines (HardSwish,
Mish). Where the registries cannot be read (an onnxruntime without them), or the function body
cannot be told, nothing is said: a warning must be sure.
"""

from __future__ import annotations

import functools

from onnx import ModelProto

from ..graph.node import subgraphs_of
from .schedule import ORT_DOMAINS

_NO_KERNEL_NEEDED = frozenset({"Constant"})  # onnxruntime turns it into an initializer


@functools.lru_cache(maxsize=1)
def _registries() -> tuple[dict, dict] | None:
    """({(domain, op): sorted since-versions}, {(domain, op): [(first, last) opset of a CPU kernel]})."""
    try:
        from onnxruntime.capi import onnxruntime_pybind11_state as ort

        schemas, kernels = {}, {}
        for s in ort.get_all_operator_schema():
            schemas.setdefault((s.domain, s.name), set()).add(int(s.since_version))
        for k in ort.get_all_opkernel_def():
            if k.provider == "CPUExecutionProvider":
                kernels.setdefault((k.domain, k.op_name), []).append(tuple(k.version_range))
    except Exception:  # an onnxruntime without these registries: say nothing
        return None
    return {key: sorted(v) for key, v in schemas.items()}, kernels


@functools.lru_cache(maxsize=512)
def why_not(domain: str, op_type: str, opset: int | None) -> str | None:
    """Why onnxruntime cannot run ``domain::op_type`` in a model importing ``opset`` of that
    domain (None: it can, or that cannot be told)."""
    found = _registries()
    if found is None:
        return None
    schemas, kernels = found
    domain = "" if domain == "ai.onnx" else domain
    label = f"{domain}::{op_type}" if domain else op_type
    versions = schemas.get((domain, op_type))
    if versions is None:
        elsewhere = sorted(d or "the default domain ('')" for d, name in schemas if name == op_type and d != domain)
        return f"onnxruntime has no {label}" + (f"; it has {op_type} in {', '.join(elsewhere)}" if elsewhere else "")
    if opset is None:  # a domain the model does not import: onnxruntime takes its latest
        opset = versions[-1]
    since = max((v for v in versions if v <= opset), default=None)
    if since is None:
        return f"{label} needs opset {versions[0]} of {domain or 'the default domain'}; the model imports {opset}"
    if op_type in _NO_KERNEL_NEEDED or any(lo <= since <= hi for lo, hi in kernels.get((domain, op_type), ())):
        return None
    body = _has_function(domain, op_type, opset)
    if body is None or body:
        return None
    return f"onnxruntime has no CPU kernel for {label} at opset {opset}, and no function body to inline"


def _has_function(domain: str, op_type: str, opset: int) -> bool | None:
    """Whether the op's ONNX schema has a function body (None: the onnx package does not know)."""
    import onnx.defs

    try:
        schema = onnx.defs.get_schema(op_type, opset, domain)
    except Exception:
        return None
    return bool(schema.has_function or schema.has_context_dependent_function)


def unrunnable_written(proto: ModelProto, plugins) -> list[str]:
    """One line per op of onnxruntime's domains that a pattern wrote in ``proto`` (bodies
    included) and onnxruntime cannot run at the model's opset, naming the pattern."""
    opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in proto.opset_import}
    functions = {(f.domain, f.name) for f in proto.functions}
    found: dict[tuple[str, str], tuple[str, str]] = {}

    def walk(graph) -> None:
        for node in graph.node:
            pattern = next((e.value for e in node.metadata_props if e.key == "surgeon.pattern"), "")
            domain = "" if node.domain == "ai.onnx" else node.domain
            key = (domain, node.op_type)
            if pattern and domain in ORT_DOMAINS and key not in found and key not in functions:
                reason = why_not(domain, node.op_type, opsets.get(domain))
                if reason:
                    found[key] = (pattern, reason)
            for body in subgraphs_of(node):
                walk(body)

    walk(proto.graph)
    lines = []
    for (domain, op_type), (pattern, reason) in found.items():
        origin = plugins.origin_label(pattern)
        label = f"{domain}::{op_type}" if domain else op_type
        lines.append(f"pattern {pattern!r} writes {label}{f' (plugin {origin})' if origin else ''}, which onnxruntime "
                     f"cannot run: {reason}; `surgeon run` and `surgeon validate` will stop at it")
    return lines
