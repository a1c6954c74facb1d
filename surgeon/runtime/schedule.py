"""Split a graph at its custom nodes into steps, fewest onnxruntime stages first.

Scheduling is as-soon-as-possible: a standard node joins the earliest stage after every custom
node it depends on; custom nodes run in waves between stages, in graph order within a wave. Two
independent custom nodes therefore share the stages around them: a model with k custom nodes
side by side needs 2 sessions, a chain of k needs k+1.
"""

from __future__ import annotations

import heapq
from typing import Iterable

import numpy as np
import onnx
from onnx import GraphProto, NodeProto, TensorProto, helper, numpy_helper

from ..graph.attrs import read_attribute
from ..errors import PluginError, SurgeonError
from ..graph.index import free_values, proto_reads
from ..graph.node import subgraphs_of
from ..io.load import tensor_to_array
from .steps import IfStep, KernelStep, ModelContext, OrtStep

# Domains onnxruntime implements itself; any other domain is custom unless a model-local
# function defines the op (onnxruntime inlines those).
ORT_DOMAINS = frozenset({
    "", "ai.onnx", "ai.onnx.ml", "com.microsoft", "com.microsoft.nchwc", "com.microsoft.experimental",
    "ai.onnx.training", "ai.onnx.preview.training", "com.ms.internal.nhwc",
})

INLINE_EXTERNAL_BYTES = 1 << 16


def node_label(node: NodeProto) -> str:
    return node.name or f"{node.op_type}->{node.output[0] if node.output else '?'}"


class GraphPlan:
    """The steps that compute ``wanted`` from ``needs`` (values given by the caller) and constants."""

    def __init__(self, ctx: ModelContext, wanted: list[str], needs: list[str], steps: list,
                 drops: list[list[str]], consts: dict[str, TensorProto]):
        self.ctx = ctx
        self.wanted = wanted
        self.needs = needs
        self.steps = steps
        self.drops = drops
        self.consts = consts
        self._const_arrays: dict[str, np.ndarray] = {}

    def _fetch(self, env: dict, name: str) -> np.ndarray:
        if name in env:
            return env[name]
        if name in self.consts:
            if name not in self._const_arrays:
                self._const_arrays[name] = tensor_to_array(self.consts[name], self.ctx.loaded)
            return self._const_arrays[name]
        raise SurgeonError(f"internal: value {name!r} was not computed before it was needed")

    def run(self, feeds: dict) -> dict[str, np.ndarray]:
        env = dict(feeds)
        fetch = lambda name: self._fetch(env, name)  # noqa: E731
        for step, drop in zip(self.steps, self.drops):
            step.run(env, fetch)
            for name in drop:  # free what no later step reads, so peak memory stays near ORT's own
                env.pop(name, None)
        return {w: fetch(w) for w in self.wanted}

    @property
    def ort_stages(self) -> list[OrtStep]:
        return [s for s in self.steps if isinstance(s, OrtStep)]

    def describe(self) -> list[str]:
        lines = []
        for step in self.steps:
            if isinstance(step, IfStep):
                lines.append(f"{step.label}: evaluated in Python; then: {len(step.then_plan.steps)} step(s), "
                             f"else: {len(step.else_plan.steps)} step(s)")
            elif isinstance(step, KernelStep):
                lines.append(f"{step.label}: reference kernel")
            else:
                lines.append(f"{step.label}: onnxruntime")
        return lines


class Planner:
    """Compiles graphs of one model into plans."""

    def __init__(self, ctx: ModelContext, function_keys: Iterable[tuple[str, str]], plugins,
                 served: Iterable[tuple[str, str]] = ()):
        """``plugins`` answers ``op(domain, op_type)`` with a CustomOp (a PluginSet); ``served``
        ops run inside onnxruntime, on the libraries the sessions register."""
        self.ctx = ctx
        self.function_keys = set(function_keys) | set(served)
        self.plugins = plugins

    def is_custom(self, node: NodeProto) -> bool:
        """A node onnxruntime cannot run here: it goes to a reference kernel."""
        return node.domain not in ORT_DOMAINS and (node.domain, node.op_type) not in self.function_keys

    def find_custom(self, graph: GraphProto) -> NodeProto | None:
        """The first custom node in ``graph`` or any body nested in it."""
        for node in graph.node:
            if self.is_custom(node):
                return node
            for body in subgraphs_of(node):
                found = self.find_custom(body)
                if found is not None:
                    return found
        return None

    def _kernel_step(self, node: NodeProto) -> KernelStep:
        op = self.plugins.op(node.domain, node.op_type)
        kernel = op.kernel if op is not None else None
        if kernel is None:
            raise PluginError(f"no reference kernel for {node.domain}::{node.op_type} (node {node_label(node)!r}): "
                               f"{self._whose(node)}")
        attrs = {a.name: read_attribute(a) for a in node.attribute}
        return KernelStep(self.ctx, node, kernel, attrs)

    def _whose(self, node: NodeProto) -> str:
        """Where a kernel for the node would come from, in words."""
        pattern = next((e.value for e in node.metadata_props if e.key == "surgeon.pattern"), "")
        origin = self.plugins.origin_label(pattern) if pattern and hasattr(self.plugins, "origin_label") else ""
        if origin:
            return (f"pattern {pattern!r} (plugin {origin}) wrote it but brings no kernel for it: give the "
                    f"pattern ops = [CustomOp({node.domain!r}, {node.op_type!r}, kernel=fn)]")
        if pattern:
            return f"pattern {pattern!r} wrote it: install or --plugin the plugin that gives that pattern"
        return "install or --plugin the plugin whose pattern writes it"

    def _kind(self, node: NodeProto) -> str:
        if self.is_custom(node):
            return "custom"
        inner = [self.find_custom(b) for b in subgraphs_of(node)]
        inner = [n for n in inner if n is not None]
        if not inner:
            return "std"
        if node.op_type == "If" and node.domain in ("", "ai.onnx"):
            return "if"
        raise SurgeonError(f"node {node_label(node)!r} ({node.op_type}): its body holds custom node "
                           f"{inner[0].domain}::{inner[0].op_type} ({node_label(inner[0])!r}); running custom "
                           f"nodes inside {node.op_type} bodies is not supported")

    def compile(self, graph: GraphProto, wanted: list[str], available: set[str],
                outer_consts: dict[str, TensorProto] | None = None, scope: str = "the model") -> GraphPlan:
        consts = dict(outer_consts or {})
        consts.update({t.name: t for t in graph.initializer})
        nodes = list(graph.node)
        producer = {o: i for i, n in enumerate(nodes) for o in n.output if o}
        reads = [proto_reads(n) for n in nodes]

        # Only what the wanted values depend on is planned (and needs kernels).
        needed: set[int] = set()
        needs: list[str] = []
        stack = [(w, None) for w in reversed(wanted)]
        seen: set[str] = set()
        while stack:
            value, reader = stack.pop()
            if value in seen:
                continue
            seen.add(value)
            if value in producer:
                i = producer[value]
                if i not in needed:
                    needed.add(i)
                    stack.extend((r, i) for r in reversed(reads[i]))
            elif value in available:
                needs.append(value)
            elif value not in consts:
                if reader is None:
                    raise SurgeonError(f"{scope} has no value named {value!r}")
                raise SurgeonError(f"{scope}: node {node_label(nodes[reader])!r} reads {value!r}, "
                                   "which nothing defines")

        order = _toposort(sorted(needed), reads, producer)
        kind = {i: self._kind(nodes[i]) for i in order}
        level: dict[int, int] = {}
        for i in order:
            preds = [producer[r] for r in reads[i] if r in producer]
            if kind[i] == "std":
                level[i] = max((level[p] + (kind[p] != "std") for p in preds), default=0)
            else:
                level[i] = max((level[p] for p in preds), default=0)

        buckets: dict[int, tuple[list[int], list[int]]] = {}
        for i in order:
            std, special = buckets.setdefault(level[i], ([], []))
            (std if kind[i] == "std" else special).append(i)
        groups: list[tuple[str, list[int]]] = []
        for lv in sorted(buckets):
            std, special = buckets[lv]
            if std:
                groups.append(("std", std))
            groups.extend(("special", [i]) for i in special)

        last_read: dict[str, int] = {}  # value -> the last step that reads it
        for k, (_, members) in enumerate(groups):
            for i in members:
                for r in reads[i]:
                    last_read[r] = k
        wanted_set = set(wanted)
        steps = []
        stage_index = 0
        for k, (what, members) in enumerate(groups):
            if what == "std":
                def needed_later(value: str, k: int = k) -> bool:
                    return last_read.get(value, -1) > k or value in wanted_set

                steps.append(self._ort_step(stage_index, graph.name, [nodes[i] for i in members], producer,
                                            available, consts, needed_later))
                stage_index += 1
                continue
            node = nodes[members[0]]
            if kind[members[0]] == "custom":
                steps.append(self._kernel_step(node))
            else:
                steps.append(self._if_step(node, consts, scope))
        drops = _drops(steps, last_read, wanted_set)
        return GraphPlan(self.ctx, list(wanted), needs, steps, drops, consts)

    def _ort_step(self, index: int, graph_name: str, members: list[NodeProto], producer: dict,
                  available: set[str], consts: dict[str, TensorProto], read_later) -> OrtStep:
        made = {o for n in members for o in n.output if o}
        inputs: dict[str, None] = {}
        inits: dict[str, TensorProto] = {}
        for n in members:
            for r in proto_reads(n):
                if r in made or r in inputs or r in inits:
                    continue
                if r in producer or r in available or r not in consts:
                    inputs[r] = None
                else:
                    inits[r] = self._stage_initializer(consts[r])
        outputs = [o for n in members for o in n.output if o and read_later(o)]
        stage = helper.make_graph(members, f"{graph_name or 'graph'}_stage{index}", [], [], list(inits.values()))
        stage.output.extend(onnx.ValueInfoProto(name=o) for o in outputs)
        return OrtStep(self.ctx, index, stage, list(inputs), outputs)

    def _stage_initializer(self, tensor: TensorProto) -> TensorProto:
        """Small external tensors are read in: onnxruntime's shape inference cannot see into
        external data of a model given as bytes (a Reshape's shape, a Slice's starts)."""
        if tensor.data_location != TensorProto.EXTERNAL:
            return tensor
        ref = self.ctx.loaded.external.get(tensor.name) if self.ctx.loaded else None
        if ref is not None and ref.length > INLINE_EXTERNAL_BYTES:
            return tensor
        return numpy_helper.from_array(tensor_to_array(tensor, self.ctx.loaded), tensor.name)

    def _if_step(self, node: NodeProto, consts: dict[str, TensorProto], scope: str) -> IfStep:
        plans = {}
        for a in node.attribute:
            if a.name in ("then_branch", "else_branch"):
                body = a.g
                outer = free_values(body) - set(consts)  # outer constants travel as constants
                plans[a.name] = self.compile(body, [o.name for o in body.output], outer, consts,
                                             f"{scope} > {node_label(node)}.{a.name}")
        return IfStep(node, plans["then_branch"], plans["else_branch"])


def _toposort(indices: list[int], reads: list[list[str]], producer: dict[str, int]) -> list[int]:
    """Kahn's algorithm keyed on graph position: the model's own order wherever data allows."""
    members = set(indices)
    waiting = {i: 0 for i in indices}
    dependents: dict[int, list[int]] = {i: [] for i in indices}
    for i in indices:
        for p in {producer[r] for r in reads[i] if r in producer}:
            if p in members and p != i:
                waiting[i] += 1
                dependents[p].append(i)
    heap = [i for i in indices if waiting[i] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        i = heapq.heappop(heap)
        order.append(i)
        for k in dependents[i]:
            waiting[k] -= 1
            if waiting[k] == 0:
                heapq.heappush(heap, k)
    if len(order) != len(indices):
        raise SurgeonError("the graph has a cycle; it cannot be run")
    return order


def _drops(steps: list, last_read: dict[str, int], wanted: set[str]) -> list[list[str]]:
    """For each step, the values no later step reads (and nobody asked for)."""
    last = dict(last_read)
    for k, step in enumerate(steps):
        for o in step.outputs:
            if o:
                last.setdefault(o, k)  # produced but never read: dropped at once
    drops: list[list[str]] = [[] for _ in steps]
    for name, k in last.items():
        if name not in wanted:
            drops[k].append(name)
    return drops
