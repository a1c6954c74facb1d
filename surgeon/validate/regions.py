"""Where the rewritten graph differs from the original, cut into one region per rewrite.

The engine keeps the names of the values a rewrite replaces, and gives every value it adds a
fresh name. So a region is a node a rewrite wrote (see ``written.py``: any node no node of the
original equals, whatever its domain; or an ``If`` whose branches changed) plus the nodes linked
to it through values the original does not have (a Slice of theta, a size computed for the
kernel, a Reshape after it). What it reads from the original are its leaves; the original
values it produces are what the per-rewrite check compares, and ``original_slice`` finds the
original's own nodes computing them from the same leaves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import GraphProto, ModelProto, NodeProto, helper, numpy_helper

from ..graph.index import free_values
from ..io.load import LoadedModel, tensor_to_array
from ..reportfields import NodeRef
from ..graph.index import proto_reads
from ..graph.node import subgraphs_of
from ..runtime.schedule import node_label
from .written import WrittenNodes

SUFFIX = "@rewritten"


@dataclass
class RewriteRegion:
    """What one rewrite replaced, as the rewritten graph holds it (engine-internal; a plugin's
    ``surgeon.recognise.Region`` is another thing: the part of a graph a recogniser reads)."""

    nodes: list[NodeProto]  # in the rewritten graph's order
    written: list[NodeProto]  # the nodes a rewrite wrote, also those inside If branches
    custom: list[NodeProto] = field(default_factory=list)  # the custom-op ones among them
    leaves: list[str] = field(default_factory=list)  # original values it reads
    produces: list[str] = field(default_factory=list)  # original values it computes again
    constants: list[str] = field(default_factory=list)  # initializers the rewrite added
    scopes: dict[int, str] = field(default_factory=dict)  # id of a written node -> its graph's path

    @property
    def named(self) -> list[NodeProto]:
        """The nodes that name the rewrite in reports: its custom nodes, else all it wrote."""
        return self.custom or self.written

    @property
    def names(self) -> list[str]:
        return [node_label(n) for n in self.named]

    @property
    def refs(self) -> list[NodeRef]:
        """The nodes of ``named`` as fields (name, op type, graph...), for the JSON report."""
        return [NodeRef.of(n, self.scopes.get(id(n), "main")) for n in self.named]

    @property
    def patterns(self) -> list[str]:
        found = []
        for n in self.named:
            p = next((e.value for e in n.metadata_props if e.key == "surgeon.pattern"), "")
            found.append(p or "?")
        return found

    @property
    def atol(self) -> float | None:
        """The tolerance its rewrite declared (``surgeon.atol``: exact only to this), if any."""
        found = [float(e.value) for n in self.written for e in n.metadata_props if e.key == "surgeon.atol"]
        return max(found) if found else None

    @property
    def ops(self) -> list[str]:
        return [f"{n.domain}::{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type
                for n in self.named]


def top_level_values(graph: GraphProto) -> set[str]:
    names = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    names.update(o for n in graph.node for o in n.output if o)
    return names


def _live(reads: list[list[str]], producer: dict[str, int], outputs: list[str]) -> set[int]:
    """The nodes some graph output depends on."""
    live: set[int] = set()
    stack = [producer[o] for o in outputs if o in producer]
    while stack:
        i = stack.pop()
        if i not in live:
            live.add(i)
            stack.extend(producer[r] for r in reads[i] if r in producer)
    return live


def find_regions(original: ModelProto, rewritten: ModelProto, is_custom) -> tuple[list[RewriteRegion], int]:
    """One region per rewrite; ``is_custom(node)`` tells the custom-op nodes (they name a
    region). Also returns how many written nodes no output depends on: never run, so never
    checked (a dead branch may compute what cannot be computed, a division by zero, which the
    model never does)."""
    written = WrittenNodes(original)
    known = top_level_values(original.graph)
    graph = rewritten.graph
    nodes = list(graph.node)
    inits = {t.name for t in graph.initializer}
    producer = {o: i for i, n in enumerate(nodes) for o in n.output if o}
    reads = [proto_reads(n) for n in nodes]
    live = _live(reads, producer, [o.name for o in graph.output])
    new = [written.is_new(n) for n in nodes]
    dead = sum(len(written.within(n)) for i, n in enumerate(nodes) if i not in live and new[i])
    consumers: dict[str, list[int]] = {}
    for i, names in enumerate(reads):
        for r in names:
            consumers.setdefault(r, []).append(i)

    taken: set[int] = set()
    regions = []
    for seed, node in enumerate(nodes):
        if seed in taken or seed not in live or not new[seed]:
            continue
        members: set[int] = set()
        constants: dict[str, None] = {}
        stack = [seed]
        while stack:  # grow through values the original does not have, both ways
            i = stack.pop()
            if i in members:
                continue
            members.add(i)
            for r in reads[i]:
                if r in known:
                    continue
                if r in producer:
                    stack.append(producer[r])
                elif r in inits:
                    constants[r] = None  # validate checked that both models take the same inputs
            for o in nodes[i].output:
                if o and o not in known:
                    stack.extend(consumers.get(o, ()))
        taken |= members
        order = sorted(members)
        scoped = [pair for i in order if new[i] for pair in written.within(nodes[i])]
        wrote = [w for w, _ in scoped]
        region = RewriteRegion([nodes[i] for i in order], wrote, [w for w in wrote if is_custom(w)],
                        constants=list(constants), scopes={id(w): scope for w, scope in scoped})
        made = {o for i in order for o in nodes[i].output if o}
        region.produces = [o for i in order for o in nodes[i].output if o and o in known]
        leaves: dict[str, None] = {}
        for i in order:
            direct = [n for n in nodes[i].input if n]
            for r in direct:
                if r in known and r not in made:
                    leaves[r] = None
            for body in subgraphs_of(nodes[i]):  # bodies' outer reads are not renamed: they see the original's
                for r in sorted(free_values(body)):
                    if r in known:
                        leaves[r] = None
        region.leaves = list(leaves)
        regions.append(region)
    return regions, dead


def check_model(regions: list[RewriteRegion], rewritten: LoadedModel, leaf_values: dict[str, np.ndarray],
                taken_names: set[str]) -> tuple[ModelProto, dict[str, str]]:
    """One model computing every region from the original's values: leaves are its inputs,
    and each value a region produces comes out renamed (``name@rewritten``), so one region's
    output never stands in for the original value another region reads.

    Returns the model and ``{original name: output name}``.
    """
    renamed: dict[str, str] = {}
    for region in regions:
        for name in region.produces:
            new, k = name + SUFFIX, 1
            while new in taken_names:
                k += 1
                new = f"{name}{SUFFIX}{k}"
            taken_names.add(new)
            renamed[name] = new
    nodes = []
    for region in regions:
        for node in region.nodes:
            copy = NodeProto()
            copy.CopyFrom(node)
            copy.input[:] = [renamed[n] if n in region.produces else n for n in node.input]
            copy.output[:] = [renamed.get(n, n) for n in node.output]
            nodes.append(copy)
    leaves = list(dict.fromkeys(leaf for r in regions for leaf in r.leaves))
    graph = helper.make_graph(nodes, "surgeon_rewrite_checks", [], [])
    for leaf in leaves:
        a = leaf_values[leaf]
        graph.input.append(helper.make_tensor_value_info(leaf, helper.np_dtype_to_tensor_dtype(a.dtype),
                                                         list(a.shape)))
    tensors = {t.name: t for t in rewritten.proto.graph.initializer}
    for name in dict.fromkeys(c for r in regions for c in r.constants):
        graph.initializer.append(numpy_helper.from_array(tensor_to_array(tensors[name], rewritten), name))
    graph.output.extend(onnx.ValueInfoProto(name=renamed[p]) for r in regions for p in r.produces)
    model = helper.make_model(graph, opset_imports=list(rewritten.proto.opset_import),
                              functions=list(rewritten.proto.functions))
    model.ir_version = rewritten.proto.ir_version
    return model, renamed



def original_slice(nodes: list[NodeProto], producer: dict[str, int], region: RewriteRegion,
                   stops: set[str]) -> list[int]:
    """The positions of the original's nodes computing ``region.produces`` back to the region's
    leaves (or to ``stops``: graph inputs and initializers), in graph order. ``producer`` maps
    the original's top-level values to their positions in ``nodes``."""
    leaves = set(region.leaves)
    found: set[int] = set()
    stack = list(region.produces)
    seen: set[str] = set()
    while stack:
        value = stack.pop()
        if value in seen or value in leaves or value in stops:
            continue
        seen.add(value)
        i = producer.get(value)
        if i is None or i in found:
            continue
        found.add(i)
        stack.extend(proto_reads(nodes[i]))
    return sorted(found)


def undefined_sizes(proto) -> dict[str, int]:
    """Input dims (``"x[2]"``) and the size at which a rewrite says the original is undefined
    (``surgeon.undefined_at``, written from ``Match.undefined_at``): draws avoid them."""
    return _sizes(proto, "surgeon.undefined_at")


def pinned_sizes(proto) -> dict[str, int]:
    """Input dims and the one size a rewrite says the original runs at (``surgeon.runs_at``,
    from ``Match.runs_at``: sizes baked into its constants): draws take it."""
    return _sizes(proto, "surgeon.runs_at")


def _sizes(proto, key: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for node in proto.graph.node:
        for entry in node.metadata_props:
            if entry.key == key:
                for item in entry.value.split(","):
                    dim, _, size = item.rpartition("=")
                    if dim and size.isdigit():
                        found[dim] = int(size)
    return found
