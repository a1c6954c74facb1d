"""The rewrite driver: match everywhere, check, rewrite, repeat to a fixpoint; then one cleanup,
one topological sort and one shape repair per graph. Recurses into If/Loop/Scan bodies."""

from __future__ import annotations

import os
import sys
import time
import traceback

import onnx
from onnx import GraphProto, ModelProto

from ..errors import PluginError, SurgeonError
from ..graph import GraphIndex, Node
from ..graph.index import reads_of
from ..graph.node import subgraphs_of
from ..graph.fold import ConstantFolder
from ..graph.order import toposort
from ..io.load import LoadedModel, model_data_bytes, tensor_nbytes, tensor_to_array
from .. import progress
from ..graph.prune import drop_unused
from .shapes import ShapeTable, make_value_info
from .context import MatchContext, RewriteContext, Session
from .gcpause import cyclic_gc_paused
from .match import Match, Refusal
from .pattern import Pattern
from .template import tracer
from . import capture
from .report import NearMiss, Report, Rewrite
from .plugins import pattern_label
from ..reportfields import NodeRef, body_scope
from .repair import repair_shapes

MAX_PASSES = 32
_ASK = object()  # a pattern whose own accepts() decides which nodes it is offered
MAX_PICTURED = 500  # rewrites and near misses whose regions the report keeps (for the HTML page)


class _Unwritable(Exception):
    """A rewrite that would write a broken model: its message is the near-miss reason."""


class NameAllocator:
    """Fresh names that clash with no node or value name anywhere in the model.

    Built on the first request from the main graph's index (bodies are scanned): runs that
    rewrite nothing never pay for it. Each hint remembers the last suffix it handed out, so the
    k-th name from one hint costs O(1), not k tries (4,000 rewrites naming their node
    ``gelu/Gelu`` would otherwise try 8 million names)."""

    def __init__(self, proto: ModelProto):
        self.proto = proto
        self.root: GraphIndex | None = None  # set by the driver once the main graph is indexed
        self._used: set[str] | None = None
        self._next: dict[str, int] = {}  # hint -> the suffix to try first

    def _scan(self) -> set[str]:
        root = self.root
        used = set(root.producer) | set(root.initializers) | set(root.input_names)
        stack = []
        for node in root.nodes:
            used.add(node.proto.name)
            stack.extend(node.subgraphs())
        while stack:
            g = stack.pop()
            used.update(i.name for i in g.input)
            used.update(t.name for t in g.initializer)
            for n in g.node:
                used.add(n.name)
                used.update(n.output)
                stack.extend(subgraphs_of(n))
        return used

    def fresh(self, hint: str) -> str:
        if self._used is None:
            self._used = self._scan()
        k = self._next.get(hint, 0)
        name = f"{hint}_{k}" if k else hint
        while name in self._used or not name:
            k += 1
            name = f"{hint}_{k}"
        self._next[hint] = k + 1
        self._used.add(name)
        return name


def _node_constant_bytes(node: Node) -> int:
    if not node.is_op("Constant"):
        return 0
    return sum(tensor_nbytes(a.t) for a in node.proto.attribute if a.type == onnx.AttributeProto.TENSOR)


def _node_ref(node: Node, scope: str) -> NodeRef:
    """``NodeRef.of(node, scope)``, each field read once (a report holds one per node rewritten)."""
    proto = node.proto
    domain = proto.domain
    outputs = node.outs
    first = outputs[0] if outputs and outputs[0] else next((o for o in outputs if o), "")
    return NodeRef(proto.name, proto.op_type, "" if domain == "ai.onnx" else domain, scope, first)


def count_nodes(graph: GraphProto) -> int:
    return len(graph.node) + sum(count_nodes(b) for n in graph.node for b in subgraphs_of(n))


def _engine_refusal(index: GraphIndex, match: Match) -> str | None:
    """Self-contained, producing its outputs, and acyclic once rewritten."""
    members = {id(n) for n in match.nodes}
    produced = {o for n in match.nodes for o in n.outs if o}
    outputs = match.outputs
    for out in outputs:
        if out not in produced:
            return f"match output {out!r} is not computed by the matched nodes"
    consumers = index.consumers
    for node in match.nodes:
        for out in node.outs:
            if not out or out in outputs:
                continue
            if index.is_output(out):
                return f"intermediate {out!r} is a graph output"
            for key, reader in (consumers.get(out) or {}).items():
                if key not in members:
                    return f"intermediate {out!r} is also read by {reader.label}"
    # A cycle would need a path leaving the region and coming back into it. Positions are a
    # topological order, so the walk back only visits nodes placed after the region starts.
    # (BackWalk's walk, inlined: this runs once per match.)
    start = min(n.position for n in match.nodes)
    producer = index.producer
    stack = [v for n in match.nodes for v in n.ins if v and v not in produced]
    seen: set[str] = set()
    while stack:
        value = stack.pop()
        if not value or value in seen:
            continue
        seen.add(value)
        node = producer.get(value)
        if node is None or node.position < start:
            continue
        if id(node) in members:
            return "rewriting would create a cycle (a path leaves the match and re-enters it)"
        stack.extend(node.ins)
    return None


class Driver:
    """Rewrites one model with ``plugins`` (each with ``.pattern`` and ``.origin``, as a
    PluginSet's ``enabled()`` gives them); ``domains`` are the versions the patterns write."""

    def __init__(self, loaded: LoadedModel, plugins: list, domains: dict[str, int] | None = None,
                 options: dict | None = None):
        self.loaded = loaded
        self.plugins = list(plugins)
        self.patterns: list[Pattern] = [p.pattern for p in self.plugins]
        self._origin = {id(p.pattern): p.origin for p in self.plugins}
        self._labels = {id(p.pattern): p.label for p in self.plugins if hasattr(p, "label")}
        proto = loaded.proto
        shapes = ShapeTable(proto)
        opsets = {o.domain: o.version for o in proto.opset_import}
        folder = ConstantFolder(lambda t: tensor_to_array(t, loaded), shapes.get,
                                opsets.get("", opsets.get("ai.onnx", 17)))
        self.session = Session(loaded, shapes, folder, NameAllocator(proto), dict(options or {}))
        self.report = Report(patterns=[p.name for p in self.patterns])
        self.new_shapes: dict[str, tuple] = {}
        self.rewritten_outputs: set[str] = set()
        self._refused: set[tuple] = set()
        self._failed: set[tuple[int, int]] = set()  # (pattern, anchor) whose rewrite raised
        self._dead_initializers: set[str] = set()
        self._node_delta = 0
        self._domain_versions: dict[str, int] = dict(domains or {})
        self._removed_ops: set[tuple[str, str]] = set()  # custom-domain ops of replaced nodes
        self._checkers: dict[frozenset, object] = {}  # the ONNX checker's context per set of domains written

    def run(self) -> Report:
        with cyclic_gc_paused():
            return self._run()

    def _run(self) -> Report:
        proto = self.loaded.proto
        start = time.perf_counter()
        self.report.nodes_before = count_nodes(proto.graph)
        self.report.bytes_before = model_data_bytes(self.loaded)
        changed = self._rewrite_graph(proto.graph, None, "main")
        if changed:
            self._add_opset_imports()
            drop_unused(proto, self._removed_ops)  # e.g. the ATen import once no ATen node is left
            # Downstream shapes can only be stale where a rewrite's output now has another shape
            # than the model stated (e.g. an exporter's placeholder symbols): repair from there.
            shapes = self.session.shapes
            changed = {name for name in self.rewritten_outputs
                       if name not in self.new_shapes or shapes.declared(name) != self.new_shapes[name]}
            if changed:
                repair_shapes(proto, self.new_shapes, changed)
        self.report.nodes_after = self.report.nodes_before + self._node_delta  # no second walk
        self.report.bytes_after = model_data_bytes(self.loaded) if changed else self.report.bytes_before
        self.report.seconds = time.perf_counter() - start
        return self.report

    # -- one graph ---------------------------------------------------------------------------

    def _rewrite_graph(self, graph: GraphProto, parent: GraphIndex | None, scope: str) -> bool:
        index = GraphIndex(graph, parent, self.loaded.proto.ir_version if parent is None else None)
        if parent is None:
            self.session.names.root = index
        changed = False
        orphans: set[str] = set()  # values whose readers went away: their producers may be dead
        for passes in range(MAX_PASSES + 1):
            if parent is None:
                self.report.passes = passes + 1
            found = self._collect(index, scope)
            if not found:
                break
            if passes == MAX_PASSES:  # a pattern that keeps matching its own output
                self.report.notes.append(
                    f"{scope}: stopped after {MAX_PASSES} passes with matches left "
                    f"({', '.join(sorted({p.name for p, _ in found}))}): a pattern matches its own output")
                break
            applied, in_order = self._apply(index, found, scope, orphans)
            if not applied:
                continue  # every rewrite of this pass failed: each is a near miss now
            nodes = index.compact()
            index.reorder(sorted(nodes, key=lambda n: n.position) if in_order else toposort(nodes))
            changed = True
        if changed:
            self._remove_dead(index, orphans)
            self._write_nodes(graph, index.compact())
            self._write_value_info(index)
        for node in list(index.nodes):
            for attr in node.proto.attribute:
                if attr.type not in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                    continue
                bodies = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
                for k, body in enumerate(bodies):
                    changed |= self._rewrite_graph(body, index, body_scope(scope, node, attr.name, k, len(bodies)))
        return changed

    def _collect(self, index: GraphIndex, scope: str) -> list[tuple[Pattern, Match]]:
        ctx = MatchContext(index, self.session)
        claimed: set[int] = set()
        found = []
        # Pattern.accepts, inlined for patterns that keep it: a set lookup per pattern and node
        # instead of a call (every anchor of every pattern is offered to every pattern).
        offers = [(p, p.anchor_types() if type(p).accepts is Pattern.accepts else _ASK) for p in self.patterns]
        failed = self._failed
        for node in progress.track(self._anchors(index), f"matching ({scope})"):
            if id(node) in claimed:
                continue
            proto = node.proto
            kind = ("" if proto.domain == "ai.onnx" else proto.domain, proto.op_type)
            for pattern, types in offers:
                if types is _ASK:
                    if not pattern.accepts(node):
                        continue
                elif types is not None and kind not in types:
                    continue
                if failed and (id(pattern), id(node)) in failed:
                    continue
                result, candidate = self._ask(pattern, ctx, node)
                if result is None:
                    continue
                if isinstance(result, Refusal):
                    if result.near_miss:
                        self._refuse(pattern, node, scope, result.reason, index, candidate)
                    else:
                        self._not_mine(pattern, ctx, node, result.reason)
                    continue
                result.nodes = list({id(n): n for n in result.nodes}.values())  # a node listed twice is one node
                reason = _engine_refusal(index, result)
                if reason:
                    self._refuse(pattern, node, scope, reason, index, result)
                    continue
                if any(id(n) in claimed for n in result.nodes):
                    continue  # overlaps an earlier match: looked at again in the next pass
                claimed.update(id(n) for n in result.nodes)
                found.append((pattern, result))
                break
        return found

    def _ask(self, pattern: Pattern, ctx: MatchContext, node: Node) -> tuple:
        """``match()`` then ``check()``: a Match, a Refusal or None, and the match check()
        refused (the region it looked at). An exception is a near miss naming the hook that
        raised it; a hook returning what its contract does not allow is an error naming the
        plugin (a bug to fix, not a near miss to read past)."""
        try:
            result = pattern.match(ctx, node)
        except SurgeonError as exc:
            return Refusal(str(exc)), None
        except Exception as exc:  # a plugin bug must not take the whole run down
            return Refusal(self._raised(pattern, "match", exc)), None
        if result is not None and not isinstance(result, (Match, Refusal)):
            raise PluginError(self._broken(pattern, "match", result,
                                           "a surgeon.Match, a surgeon.refuse(reason) or None"),
                              plugin=self._plugin_label(pattern))
        if not isinstance(result, Match):
            return result, None
        try:
            reason = pattern.check(ctx, result)
        except SurgeonError as exc:
            return Refusal(str(exc)), result
        except Exception as exc:
            return Refusal(self._raised(pattern, "check", exc)), result
        if reason is not None and not isinstance(reason, str):
            raise PluginError(self._broken(pattern, "check", reason, "None to go ahead or a str saying why not"),
                              plugin=self._plugin_label(pattern))
        return (Refusal(reason), result) if reason else (result, None)

    @staticmethod
    def _not_mine(pattern: Pattern, ctx: MatchContext, node: Node, reason: str) -> None:
        log = tracer(ctx)
        if log is not None:
            log(f"[trace] {pattern.name}: {node.label}: not mine: {reason}")

    def _broken(self, pattern: Pattern, hook: str, value, allowed: str) -> str:
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        return (f"plugin {self._plugin_label(pattern)}: pattern {pattern.name!r}: {hook}() returned {shown} "
                f"({type(value).__name__}); it must return {allowed}")

    def _plugin_label(self, pattern: Pattern) -> str:
        """The plugin a pattern came from (``Plugin.label``): reports, errors and near misses name it so."""
        return self._labels.get(id(pattern)) or pattern_label(pattern, self._origin.get(id(pattern)))

    def _raised(self, pattern: Pattern, where: str, exc: Exception) -> str:
        """A near-miss reason for a plugin's exception; SURGEON_DEBUG=1 prints the traceback."""
        if os.environ.get("SURGEON_DEBUG", "") not in ("", "0"):
            traceback.print_exception(exc, file=sys.stderr)
        text = str(exc).strip().splitlines()
        return (f"{where}() raised {type(exc).__name__}: {text[0] if text else ''} "
                f"(plugin {self._plugin_label(pattern)})")

    def _anchors(self, index: GraphIndex) -> list[Node]:
        """Nodes some pattern may anchor on, in graph order: one pass over the op types instead
        of asking every pattern about every node."""
        wanted = [p.anchor_types() for p in self.patterns]
        if any(w is None for w in wanted):
            return index.nodes
        types = set().union(*wanted)
        return [n for n in index.nodes if (n.proto.domain if n.proto.domain != "ai.onnx" else "", n.proto.op_type)
                in types]

    def _refuse(self, pattern: Pattern, node: Node, scope: str, reason: str, index: GraphIndex | None = None,
                candidate: Match | None = None) -> None:
        key = (pattern.name, node.label, scope, reason)
        if key not in self._refused:
            self._refused.add(key)
            miss = NearMiss(pattern.name, node.label, scope, reason, plugin=self._plugin(pattern),
                            node_ref=NodeRef.of(node, scope))
            if index is not None and len(self.report.refusals) < MAX_PICTURED:
                try:
                    nodes = candidate.nodes if candidate is not None else capture.neighbourhood(node, index.find_producer)
                    miss.region = capture.describe(nodes, self._shape_of, lambda v: self._constant_label(index, v))
                    miss.region_kind = "matched" if candidate is not None else "neighbourhood"
                except Exception:  # the picture is a nicety: a plugin's odd match must not stop the run
                    miss.region = None
            self.report.refusals.append(miss)

    def _plugin(self, pattern: Pattern) -> str:
        return self._plugin_label(pattern) if id(pattern) in self._origin else ""

    def _shape_of(self, value: str):
        return self.session.shapes._known(value)  # declared or set: no shape inference for a picture

    def _constant_label(self, index: GraphIndex, value: str) -> str | None:
        tensor = index.find_initializer(value)
        return capture.tensor_label(tensor) if tensor is not None else None

    def _record(self, pattern: Pattern, match: Match, scope: str, written: list[Node], index: GraphIndex,
                ctx: RewriteContext) -> None:
        replaced_refs = [_node_ref(n, scope) for n in match.nodes]
        written_refs = [_node_ref(n, scope) for n in written]
        rewrite = Rewrite(
            pattern=pattern.name,
            anchor=match.anchor.label,
            graph=scope,
            replaced=[r.op_type for r in replaced_refs],
            written=[f"{n.proto.domain + '::' if n.proto.domain else ''}{r.op_type} {r.name}"
                     for n, r in zip(written, written_refs)],
            warnings=list(match.warnings),
            plugin=self._plugin(pattern),
            anchor_ref=_node_ref(match.anchor, scope),
            replaced_refs=replaced_refs,
            written_refs=written_refs,
        )
        if len(self.report.rewrites) < MAX_PICTURED:
            new = {t.name: capture.tensor_label(t) for t in ctx.new_initializers}
            constant = lambda v: new.get(v) or self._constant_label(index, v)  # noqa: E731
            rewrite.region = {"before": capture.describe(match.nodes, self._shape_of, constant),
                              "after": capture.describe(written, self._shape_of, constant),
                              "outputs": list(match.outputs)}
        self.report.rewrites.append(rewrite)

    def _apply(self, index: GraphIndex, found, scope: str, orphans: set[str]) -> tuple[int, bool]:
        """Rewrite every match; how many were applied, and whether sorting by position still
        gives a topological order. A rewrite that fails is a near miss and changes nothing."""
        in_order, applied = True, 0
        for pattern, match in found:
            position = max(n.position for n in match.nodes)
            ctx = RewriteContext(index, self.session, pattern.name, position)
            try:
                pattern.rewrite(ctx, match)
                self._check_written(index, pattern, match, ctx)
            except Exception as exc:
                self._failed.add((id(pattern), id(match.anchor)))
                reason = str(exc) if isinstance(exc, _Unwritable) else self._raised(pattern, "rewrite", exc)
                self._refuse(pattern, match.anchor, scope, reason)
                continue
            applied += 1
            if match.atol is not None:
                for node in ctx.new_nodes:
                    entry = node.proto.metadata_props.add()
                    entry.key, entry.value = "surgeon.atol", repr(float(match.atol))
            for key, sizes in (("surgeon.undefined_at", match.undefined_at), ("surgeon.runs_at", match.runs_at)):
                if sizes:
                    where = ",".join(f"{dim}={size}" for dim, size in sorted(sizes.items()))
                    for node in ctx.new_nodes:
                        entry = node.proto.metadata_props.add()
                        entry.key, entry.value = key, where
            in_order = in_order and self._fits_at(index, match, ctx.new_nodes, position)
            for node in match.nodes:
                proto = node.proto
                if proto.op_type == "Constant":
                    self.report.constant_bytes_removed += _node_constant_bytes(node)
                if proto.domain not in ("", "ai.onnx"):
                    self._removed_ops.add((proto.domain, proto.op_type))
                orphans.update(reads_of(node) if node.subgraphs() else [v for v in node.ins if v])
            index.remove(match.nodes)
            self._node_delta += len(ctx.new_nodes) - len(match.nodes)
            for node in ctx.new_nodes:
                node.forget_io()  # read from the proto as the rewrite left it
                index.add(node)
            new_constants = set()
            for tensor in ctx.new_initializers:
                index.add_initializer(tensor)
                new_constants.add(tensor.name)
            for name, (elem, dims) in ctx.new_shapes.items():
                self.session.shapes.set(name, elem, dims)
                if name not in new_constants:
                    self.new_shapes[name] = (elem, dims)
            self.session.domains_used.update(ctx.domains)
            for node in ctx.new_nodes:
                self.rewritten_outputs.update(node.outs)
            self._record(pattern, match, scope, ctx.new_nodes, index, ctx)
        return applied, in_order

    @staticmethod
    def _fits_at(index: GraphIndex, match: Match, new_nodes: list[Node], position: float) -> bool:
        """New nodes placed at ``position`` read only earlier values and are read only later."""
        members = {id(n) for n in match.nodes}
        made: set[str] = set()
        producers = index.producer
        for node in new_nodes:
            for value in node.ins:
                if value and value not in made:
                    producer = producers.get(value)
                    if producer is not None and id(producer) not in members and producer.position >= position:
                        return False
            made.update(node.outs)
        consumers = index.consumers
        for out in match.outputs:
            for key, reader in (consumers.get(out) or {}).items():
                if reader.position <= position and key not in members:
                    return False
        return True

    def _check_written(self, index: GraphIndex, pattern: Pattern, match: Match, ctx: RewriteContext) -> None:
        """A pattern bug must not reach disk: the match's outputs are produced, each new node
        passes the ONNX checker, reads only values that exist, and writes a domain at the
        version the model imports. (Cheaper than checking the whole model again.)"""
        made = {o for n in ctx.new_nodes for o in n.outputs}
        missing = [o for o in match.outputs if o not in made]
        if missing:
            raise _Unwritable(f"rewrite did not produce {missing}")
        for domain in ctx.domains:
            have, writes = self.session.opsets.get(domain), self._domain_versions.get(domain, 1)
            if have is not None and have != writes and not self._uses_domain(domain):
                self._reimport(domain, writes)  # an import no node uses (onnxruntime writes its registry's)
                have = writes
            if have is not None and have != writes:
                raise _Unwritable(f"the model imports domain {domain!r} at version {have}; pattern "
                                  f"{pattern.name!r} writes version {writes}")
        key = frozenset(ctx.domains)
        checker = self._checkers.get(key)
        if checker is None:  # one per set of domains written, not one per rewrite
            checker = onnx.checker.C.CheckerContext()
            checker.ir_version = self.loaded.proto.ir_version
            written = {d: self._domain_versions.get(d, 1) for d in ctx.domains}
            checker.opset_imports = {**written, **self.session.opsets}
            self._checkers[key] = checker
        known = made | {t.name for t in ctx.new_initializers}
        for node in ctx.new_nodes:
            for value in node.inputs:
                if value and value not in known and not index.is_defined(value):
                    raise _Unwritable(f"rewrite wrote {node.label} reading {value!r}, which does not exist")
            try:
                onnx.checker.check_node(node.proto, checker)
            except onnx.checker.ValidationError as exc:
                first = str(exc).strip().splitlines()[0]
                raise _Unwritable(f"rewrite wrote an invalid node {node.label}: {first}") from None

    @staticmethod
    def _write_nodes(graph: GraphProto, nodes: list[Node]) -> None:
        protos = [n.proto for n in nodes]
        del graph.node[:]
        graph.node.extend(protos)

    def _remove_dead(self, index: GraphIndex, orphans: set[str]) -> None:
        """Drop what only the replaced regions read: nodes and initializers nothing reads now."""
        work = sorted(orphans)
        dead_nodes: list[Node] = []
        while work:
            value = work.pop()
            if index.is_output(value) or index.consumers_of(value):
                continue
            node = index.find_producer(value)
            if node is None:
                if value in index.input_names:
                    continue  # a graph input's default (an overridable initializer) stays with its input
                tensor = index.initializers.pop(value, None)
                if tensor is not None:
                    self.report.constant_bytes_removed += tensor_nbytes(tensor)
                    self._dead_initializers.add(value)
                continue
            if any(index.is_output(o) or index.consumers_of(o) for o in node.outputs if o):
                continue
            self.report.constant_bytes_removed += _node_constant_bytes(node)
            index.remove([node])
            self._node_delta -= 1
            dead_nodes.append(node)
            work.extend(reads_of(node))
        # Deleted one by one: rebuilding the list would copy every weight in the model.
        inits = index.graph.initializer
        for i in reversed(range(len(inits))):
            if inits[i].name in self._dead_initializers:
                del inits[i]

    def _write_value_info(self, index: GraphIndex) -> None:
        """Value_info for declared shapes; none left for values that no longer exist."""
        graph = index.graph
        outputs = set(index.output_names)
        keep = [vi for vi in graph.value_info if vi.name in index.producer and vi.name not in self.new_shapes]
        if len(keep) != len(graph.value_info):
            del graph.value_info[:]
            graph.value_info.extend(keep)
        for name, (elem, dims) in self.new_shapes.items():
            if name in index.producer and name not in outputs:
                graph.value_info.append(make_value_info(name, elem, dims))

    def _uses_domain(self, domain: str) -> bool:
        """Some node of the model (a body's, a function's) is of ``domain``."""
        proto = self.loaded.proto
        graphs = [proto.graph]
        while graphs:
            graph = graphs.pop()
            for node in graph.node:
                if node.domain == domain:
                    return True
                graphs.extend(subgraphs_of(node))
        return any(n.domain == domain for f in proto.functions for n in f.node)

    def _reimport(self, domain: str, version: int) -> None:
        self.session.opsets[domain] = version
        for o in self.loaded.proto.opset_import:
            if o.domain == domain:
                o.version = version

    def _add_opset_imports(self) -> None:
        proto = self.loaded.proto
        have = {o.domain for o in proto.opset_import}
        for domain in sorted(self.session.domains_used - have):
            proto.opset_import.append(onnx.helper.make_opsetid(domain, self._domain_versions.get(domain, 1)))
