"""The original's side of each rewrite: the original's own nodes that compute what the rewrite
computes again (counted for the tolerance), and the rounding probe (rounding.py) run on them,
and on the whole original for the outputs end to end."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import ModelProto, NodeProto, helper

from ..modelio import LoadedModel
from .plan import _reads
from .regions import Region, original_slice
from . import rounding


def original_parts(original: ModelProto, regions: list[Region]) -> list[list[NodeProto]]:
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
    return list(dict.fromkeys([r for n in part for r in _reads(n)] + [o for n in part for o in n.output if o]))


def probe_parts(original: LoadedModel, regions: list[Region], parts: list[list[NodeProto]], reference: dict,
                rewritten: dict, tolerances: dict, runner_for, seed: int) -> dict[tuple[int, str], "rounding.Sensitivity"]:
    """How rounding moves each value each region produces, ``{(region index, value): Sensitivity}``
    (``rewritten``: the rewrite's values, ``tolerances``: (atol, rtol), same keys),
    from one model holding every part (each under names of its own, reading the original's
    values as inputs). ``reference`` holds every value of the parts (``part_values``)."""
    nodes, inputs, outputs, moves = [], {}, {}, {}
    taken = rounding.all_names(original.proto.graph)
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
            inputs.update(dict.fromkeys(r for r in _reads(node) if r not in made))
        holder = helper.make_graph(copies, "part", [], [])
        rounding.rewire(holder, local)  # bodies that read a value of the part read its copy
        nodes.extend(holder.node)
        moves.update({new: reference[old] for old, new in local.items() if old in reference})
        outputs.update({f"{k}:{value}": local[value] for value in region.produces if value in local})
    if not outputs:
        return {}
    graph = helper.make_graph(nodes, "surgeon_rounding_probe", [], [])
    for name in inputs:
        a = np.asarray(reference[name])
        graph.input.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)))
        moves[name] = a
    probe = rounding.Probe(graph, moves, taken, _opset(original.proto))
    graph.output.extend(onnx.ValueInfoProto(name=probe.moved.get(n, n)) for n in dict.fromkeys(outputs.values()))
    model = helper.make_model(graph, opset_imports=list(original.proto.opset_import),
                              functions=list(original.proto.functions))
    model.ir_version = original.proto.ir_version
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
    probe = rounding.Probe(copy.graph, {name: reference[name] for name in moved}, rounding.all_names(copy.graph),
                           _opset(proto))
    del copy.graph.output[:]
    copy.graph.output.extend(onnx.ValueInfoProto(name=probe.moved.get(n, n)) for n in dict.fromkeys(names))
    runner = runner_for(LoadedModel(copy, original.path, dict(original.external)))
    return rounding.spreads(runner, feeds, probe, {n: n for n in names}, reference, rewritten, tolerances, seed)


def _opset(proto: ModelProto) -> int:
    return next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 1)
