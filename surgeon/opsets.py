"""A model's default-domain opset: reading it, converting it (onnx.version_converter on a
weight-free copy), and dropping imports and functions nothing uses any more."""

from __future__ import annotations

from onnx import ModelProto, helper, version_converter

from .errors import SurgeonError
from .graph.node import subgraphs_of
from .modelio import skeleton_model

_DEFAULT = ("", "ai.onnx")
SMALL = 64  # initializers up to this many elements go through the converter (axes, shapes)


def default_opset(proto: ModelProto) -> int | None:
    for o in proto.opset_import:
        if o.domain in _DEFAULT:
            return o.version
    return None


def convert(proto: ModelProto, target: int) -> None:
    """Convert ``proto`` in place to default-domain opset ``target``. Weights stay where they
    are: only a skeleton (nodes, small constants) goes through the converter, which leaves
    custom-domain nodes as they are."""
    have = default_opset(proto)
    skeleton = skeleton_model(proto, keep_small=SMALL)
    try:
        converted = version_converter.convert_version(skeleton, target)
    except Exception as exc:
        text = str(exc).strip().splitlines()
        why = text[0].split("Assertion `false` failed: ")[-1] if text else type(exc).__name__
        raise SurgeonError(f"cannot convert the model from opset {have} to {target} "
                           f"(onnx.version_converter: {why})") from None
    graph, new = proto.graph, converted.graph
    passed = {t.name for t in skeleton.graph.initializer}  # came back, possibly rewritten
    weights = {t.name for t in graph.initializer}
    listed = {i.name for i in graph.input}
    inits = graph.initializer
    for i in reversed(range(len(inits))):  # one by one: rebuilding the list would copy every weight
        if inits[i].name in passed:
            del inits[i]
    inits.extend(new.initializer)
    inputs = [i for i in new.input if i.name in listed or i.name not in weights]
    for field, values in (("node", new.node), ("input", inputs), ("output", new.output),
                          ("value_info", new.value_info)):
        container = getattr(graph, field)
        del container[:]
        container.extend(values)
    del proto.opset_import[:]
    proto.opset_import.extend(converted.opset_import)
    needed = helper.find_min_ir_version_for(list(proto.opset_import), ignore_unknown=True)
    proto.ir_version = max(proto.ir_version, needed)


def _walk(nodes):
    """Nodes and the nodes of their bodies (If/Loop/Scan), recursively."""
    for node in nodes:
        yield node
        for body in subgraphs_of(node):
            yield from _walk(body.node)


def drop_unused(proto: ModelProto, ops: set[tuple[str, str]]) -> list[str]:
    """After the nodes of ``ops`` (``(domain, op_type)``) were rewritten away: drop their
    model-local functions when nothing calls them, then the import of each of their domains
    that no node (of the graphs or of the remaining functions) uses. Returns those domains."""
    def calls() -> set:
        found = {(n.domain, n.op_type) for n in _walk(proto.graph.node)}
        return found | {(n.domain, n.op_type) for f in proto.functions for n in _walk(f.node)}

    called = calls()
    keep = [f for f in proto.functions if (f.domain, f.name) not in ops or (f.domain, f.name) in called]
    if len(keep) != len(proto.functions):
        del proto.functions[:]
        proto.functions.extend(keep)
    used = {domain for domain, _ in calls()} | {f.domain for f in proto.functions}
    domains = {domain for domain, _ in ops}
    dropped = [o.domain for o in proto.opset_import if o.domain in domains and o.domain not in used]
    if dropped:
        kept = [o for o in proto.opset_import if o.domain not in dropped]
        del proto.opset_import[:]
        proto.opset_import.extend(kept)
    return dropped
