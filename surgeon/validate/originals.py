"""The original's side of each rewrite: the original's own nodes that compute what the rewrite
computes again (counted for the tolerance), and the rounding probe (rounding.py) run on them,
and on the whole original for the outputs end to end."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import GraphProto, ModelProto, NodeProto, helper

from ..io.load import LoadedModel
from .discontinuous import deciding_inputs
from ..graph.index import proto_reads
from .regions import RewriteRegion, original_slice
from . import rounding, ulps


def original_parts(original: ModelProto, regions: list[RewriteRegion]) -> list[list[NodeProto]]:
    """For each region, the original's nodes computing its values from its leaves, in the
    original's order."""
    graph = original.graph
    nodes = list(graph.node)
    producer = {o: i for i, n in enumerate(nodes) for o in n.output if o}
    stops = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    return [[nodes[i] for i in original_slice(nodes, producer, region, stops)] for region in regions]


def part_values(part: list[NodeProto]) -> list[str]:
    """What the rounding probe moves in ``part``: the values it reads (constants too) and
    computes. The original's run keeps them."""
    return list(dict.fromkeys([r for n in part for r in proto_reads(n)] + [o for n in part for o in n.output if o]))


def parts_graph(original: LoadedModel, regions: list[RewriteRegion], parts: list[list[NodeProto]], reference: dict,
                taken: set[str]) -> tuple[GraphProto, dict[str, str], dict[tuple[int, str], str]]:
    """One graph holding every part, each under names of its own (fresh in ``taken``), reading the
    original's values as inputs (typed after ``reference``). Returns the graph (no outputs yet),
    ``{"k:value": its name}`` for each value region ``k`` produces, and the same for every value
    the parts compute, keyed ``(k, value)``."""
    nodes, inputs, outputs, made_names = [], {}, {}, {}
    for k, (region, part) in enumerate(zip(regions, parts)):
        made = {o for n in part for o in n.output if o}
        local = {o: rounding.fresh(f"{o}@part{k}", taken) for o in made}
        copies = []
        for node in part:
            copy = NodeProto()
            copy.CopyFrom(node)
            copy.name = ""
            copy.output[:] = [local.get(o, o) for o in node.output]
            copies.append(copy)
            inputs.update(dict.fromkeys(r for r in proto_reads(node) if r not in made))
        holder = helper.make_graph(copies, "part", [], [])
        rounding.rewire(holder, local)  # bodies that read a value of the part read its copy
        nodes.extend(holder.node)
        made_names.update({(k, old): new for old, new in local.items()})
        outputs.update({f"{k}:{value}": local[value] for value in region.produces if value in local})
    graph = helper.make_graph(nodes, "surgeon_original_parts", [], [])
    for name in inputs:
        a = np.asarray(reference[name])
        graph.input.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)))
    return graph, outputs, made_names


def model_of(graph: GraphProto, original: ModelProto) -> ModelProto:
    """``graph`` as a model with the original's opsets, functions and IR version."""
    model = helper.make_model(graph, opset_imports=list(original.opset_import), functions=list(original.functions))
    model.ir_version = original.ir_version
    return model


def probe_parts(original: LoadedModel, regions: list[RewriteRegion], parts: list[list[NodeProto]],
                reference: dict, rewritten: dict, tolerances: dict, runner_for,
                seed: int) -> dict[tuple[int, str], "rounding.Sensitivity"]:
    """How rounding moves each value each region produces, ``{(region index, value): Sensitivity}``
    (``rewritten``: the rewrite's values, ``tolerances``: (atol, rtol), same keys),
    from one model holding every part (``parts_graph``). ``reference`` holds every value of the
    parts (``part_values``)."""
    taken = rounding.all_names(original.proto.graph)
    graph, outputs, made = parts_graph(original, regions, parts, reference, taken)
    if not outputs:
        return {}
    inputs = [i.name for i in graph.input]
    values = {name: reference[name] for name in inputs}
    values.update({new: reference[old] for (_, old), new in made.items() if old in reference})
    steps = ulps.steps(graph.node, list(values), values, rounding.AMPLITUDE_ULPS)
    pins = {o: values[o] for o in pinned(graph.node, values) if o in values}
    probe = rounding.RoundingProbe(graph, steps, taken, _opset(original.proto), pins)
    graph.output.extend(onnx.ValueInfoProto(name=probe.moved.get(n, n)) for n in dict.fromkeys(outputs.values()))
    model = model_of(graph, original.proto)
    refs = {key: reference[key.split(":", 1)[1]] for key in outputs}
    keys = {key: (int(key.split(":", 1)[0]), key.split(":", 1)[1]) for key in outputs}
    found = rounding.spreads(runner_for(LoadedModel(model)), {n: reference[n] for n in inputs}, probe, outputs,
                             refs, {k: rewritten[v] for k, v in keys.items()},
                             {k: tolerances[v] for k, v in keys.items()}, seed)
    return {(int(key.split(":", 1)[0]), key.split(":", 1)[1]): spread for key, spread in found.items()}


def probe_model(original: LoadedModel, feeds: dict, names: list[str], moved: list[str], reference: dict,
                rewritten: dict, tolerances: dict, runner_for, seed: int) -> dict[str, "rounding.Sensitivity"]:
    """How rounding moves the original's outputs ``names`` with the values ``moved`` (the
    rewrites' parts: ``reference`` holds them) moved, and everything downstream following."""
    proto = original.proto
    copy = ModelProto()
    copy.CopyFrom(proto)
    steps = ulps.steps(copy.graph.node, moved, reference, rounding.AMPLITUDE_ULPS)
    pins = {o: reference[o] for o in pinned(copy.graph.node, moved)}
    probe = rounding.RoundingProbe(copy.graph, steps, rounding.all_names(copy.graph), _opset(proto), pins)
    del copy.graph.output[:]
    copy.graph.output.extend(onnx.ValueInfoProto(name=probe.moved.get(n, n)) for n in dict.fromkeys(names))
    runner = runner_for(LoadedModel(copy, original.path, dict(original.external)))
    return rounding.spreads(runner, feeds, probe, {n: n for n in names}, reference, rewritten, tolerances, seed)


def pinned(nodes: list[NodeProto], moved) -> list[str]:
    """The outputs of the discontinuous nodes (discontinuous.py) that read a moved value, or one
    computed from one: what a pinned run of the rounding probe holds at the original's result."""
    reached = set(moved)
    found = []
    for node in nodes:  # in graph order: a node's inputs come before it
        if not any(r in reached for r in proto_reads(node)):
            continue
        outputs = [o for o in node.output if o]
        reached.update(outputs)
        if deciding_inputs(node):
            found.extend(outputs)
    return found


def _opset(proto: ModelProto) -> int:
    return next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 1)
