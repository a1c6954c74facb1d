"""What a rewrite leaves unused: the model-local functions of ops no node calls any more, and the
import of each domain no node uses."""

from __future__ import annotations

from onnx import ModelProto

from .walk import walk_nodes

def drop_unused(proto: ModelProto, ops: set[tuple[str, str]]) -> list[str]:
    """After the nodes of ``ops`` (``(domain, op_type)``) were rewritten away: drop their
    model-local functions when nothing calls them, then the import of each of their domains
    that no node (of the graphs or of the remaining functions) uses. Returns those domains."""
    def calls() -> set:
        found = {(n.domain, n.op_type) for n in walk_nodes(proto.graph.node)}
        return found | {(n.domain, n.op_type) for f in proto.functions for n in walk_nodes(f.node)}

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
