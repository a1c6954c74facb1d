"""Each rewrite again, on its own inputs drawn to reveal scale (magnitudes.py).

The model's draws reach a rewrite through whatever comes before it, and all in one range: a
rewrite wrong only on rows of small or large magnitude passes them. So each rewrite's run-time
float inputs (its region's leaves computed from the data of the model's inputs; not sizes,
constants, or values all whole, such as masks) are drawn directly, three times (magnitudes.KINDS),
and the rewrite is held to the original's part computing the same values from them (originals.py),
at the rewrite's tolerance, with the rounding probe explaining what it can (rounding.py). Inputs a
plugin declares a draw for (``CustomOp.draw_inputs``, ``Pattern.draw_inputs``) are drawn by it.
The worst of a value's three comparisons joins the rewrite's check, named after the draw.

Where the original is not finite (an exp past float range at 1e4) the rewrite's value is not
held to it: the original computes no number there. Left out, with a note: a rewrite whose original
part reads run-time data the rewrite does not (the two would not see the same data), and one with
an input the model computes from another (dependence.py). Rewrites alike (alike.py) are drawn
and run once; the original's side runs through the original model where it can (scaledparts.py).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import onnx

from .. import progress
from ..errors import SurgeonError
from ..io.load import LoadedModel, tensor_to_array
from . import magnitudes
from .alike import structure_key
from .compare import compare
from .dependence import SHAPES, computed_from, entangled
from .draws import declared_draws, source
from ..runtime.inputs import describe
from .originals import probe_parts
from ..graph.index import proto_reads
from .regions import check_model, top_level_values
from .scaledparts import OriginalParts

SALT = 41  # the draws' seeds: (seed, SALT, kind, input)


def data_values(graph: onnx.GraphProto) -> set[str]:
    """Top-level values computed from the data of the graph's inputs, not only their shapes."""
    data = {i.name for i in graph.input} - {t.name for t in graph.initializer}
    for node in graph.node:
        if node.op_type not in SHAPES and any(r in data for r in proto_reads(node)):
            data.update(o for o in node.output if o)
    return data


def _drawable(value) -> bool:
    value = np.asarray(value) if value is not None else None
    if value is None or value.dtype.kind != "f" or value.dtype.itemsize < 2 or not value.size:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.any(np.isfinite(value) & (value != np.round(value))))


def check_scales(report, regions: list, parts: list, orig, rew, feeds: dict, reference: dict, plugins, runner_for,
                 probe_runner, tolerance, seed: int) -> None:
    """Add to each passing rewrite's check its worst comparison on scale draws, and a note
    saying what was drawn. ``tolerance(original, ops, declared, atol, rtol)`` -> (atol, rtol)."""
    data = data_values(orig.proto.graph)
    masks, bit = computed_from(orig.proto.graph, [v for r in regions for v in r.leaves if v in data])
    chosen, draws = [], {}
    for k, (region, part) in enumerate(zip(regions, parts)):
        if not region.produces or not report.rewrites[k].passed:
            continue
        if entangled([v for v in region.leaves if v in data], masks, bit):
            report.notes.append(f"{report.rewrites[k].label}: not drawn at scale (the model computes one of its "
                                "inputs from another)")
            continue
        made = {o for n in part for o in n.output if o}
        if any(r in data and r not in region.leaves for n in part if n.op_type not in SHAPES for r in proto_reads(n)
               if r not in made):  # (a shape it reads stays as it was: the drawn inputs keep their shapes)
            report.notes.append(f"{report.rewrites[k].label}: not drawn at scale (its original reads data the "
                                "rewrite does not)")
            continue
        leaves = [v for v in region.leaves if v in data and _drawable(reference.get(v))]
        if leaves:
            chosen.append(k)
            draws.update({v: None for v in leaves if v not in draws})
            producer = {o: n for n in region.nodes for o in n.output if o}
            for value, draw in declared_draws(region.nodes, plugins):
                value = source(value, producer, set(region.leaves))
                if value in leaves and draws[value] is None:
                    draws[value] = draw
    if not chosen:
        return
    try:
        with progress.working(f"drawing the inputs of {len(chosen)} rewrite(s) at scale"):
            kept = _inputs(regions, parts, chosen, orig, rew, feeds, reference)
            groups = _alike(regions, parts, chosen, kept, draws)
            used = {v for k in groups for v in regions[k].leaves}  # one of each kind is drawn and run
            found = _run(report, regions, [regions[k] for k in groups], [parts[k] for k in groups], orig, rew,
                         kept, feeds, {v: d for v, d in draws.items() if v in used}, runner_for, probe_runner,
                         tolerance, seed)
    except SurgeonError as exc:
        report.notes.append(f"scale draws skipped: {str(exc).splitlines()[0]}")
        return
    for first, comparisons in zip(groups, found):
        for k in groups[first]:
            report.rewrites[k].outputs.extend(replace(c, notes=list(c.notes)) for c in comparisons)
    own = [f"{v!r}: {describe(d)}" for v, d in draws.items() if d is not None]
    alike = len(chosen) - len(groups)
    report.notes.append(f"scale draws: each rewrite's inputs from the model's data ({_names(draws)}) drawn again, "
                        "rows or channels at magnitudes 1e-4..1e4: spread, small, large"
                        + (f"; {', '.join(own)}" if own else "")
                        + (f"; {alike} rewrite(s) the same as another checked once with it" if alike else ""))


def _inputs(regions, parts, chosen, orig, rew, feeds, reference) -> dict:
    """The first look's value of everything the chosen rewrites and their parts read."""
    wanted = []
    for k in chosen:
        made = {o for n in parts[k] for o in n.output if o}
        wanted += [r for n in parts[k] for r in proto_reads(n) if r not in made] + regions[k].leaves
    missing = [n for n in dict.fromkeys(wanted) if n not in reference]  # constants, mostly: no run
    kept = {**{n: reference[n] for n in wanted if n in reference}, **(orig.run(feeds, missing) if missing else {})}
    added = {c for k in chosen for c in regions[k].constants}
    kept.update({t.name: tensor_to_array(t, rew.loaded) for t in rew.proto.graph.initializer if t.name in added})
    return kept


def _alike(regions, parts, chosen, kept, draws) -> dict[int, list[int]]:
    """The chosen rewrites by structure (alike.py): ``{first of a kind: all of that kind}``."""
    groups: dict[bytes, list[int]] = {}
    drawn = set(draws)
    for k in chosen:
        key = (structure_key(regions[k].nodes, regions[k].produces, kept, drawn)
               + structure_key(parts[k], regions[k].produces, kept, drawn))
        groups.setdefault(key, []).append(k)
    return {members[0]: members for members in groups.values()}


def _run(report, every, regions, parts, orig, rew, kept, feeds, draws, runner_for, probe_runner, tolerance,
         seed) -> list[list]:
    """Each of ``regions`` (with its ``parts``) on the draws: per region, the worst comparison of
    each value it produces."""
    originals = OriginalParts(orig, regions, parts, kept, feeds, probe_runner)
    runnable = [r for r in every if r.produces]
    whole = len(regions) == len(runnable)  # then the first look's model again, and its runner
    checked = runnable if whole else regions
    leaves = list(dict.fromkeys(v for r in checked for v in r.leaves))
    check, renamed = check_model(checked, rew.loaded, kept, top_level_values(rew.proto.graph)
                                 | top_level_values(orig.proto.graph))
    rewrites = runner_for(check) if whole else probe_runner(LoadedModel(check))
    worst: dict[tuple[int, str], object] = {}
    for kind_index, kind in enumerate(magnitudes.KINDS):
        values = dict(kept)
        for n, (name, draw) in enumerate(draws.items()):
            rng = np.random.default_rng([seed, SALT, kind_index, n])
            shape, dtype = np.shape(kept[name]), np.asarray(kept[name]).dtype
            drawn = draw(shape, dtype, rng) if draw is not None else magnitudes.draw(shape, dtype, rng, kind)
            values[name] = np.asarray(drawn).astype(dtype)
        with np.errstate(all="ignore"):  # a plugin's numpy kernel at 1e4 may overflow an exp: the results judge it
            ran = originals.run(values)
            got = rewrites.run({v: values[v] for v in leaves})

        def second_look(j, name, rewritten, atol, rtol, values=values):  # the rounding probe, on this draw
            part_values = {**values, **originals.computed(values, j)}
            return probe_parts(orig.loaded, [regions[j]], [parts[j]], part_values, {(0, name): rewritten},
                               {(0, name): (atol, rtol)}, probe_runner, seed).get((0, name))

        for j, (region, part) in enumerate(zip(regions, parts)):
            ops = max(len(part), len(region.nodes))
            for name in region.produces:
                if (j, name) not in ran:
                    continue
                c = _compare(name, kind, ran[(j, name)], got[renamed[name]], ops, region.atol,
                             report.max_mismatch, tolerance, lambda *a, j=j, name=name: second_look(j, name, *a))
                seen = worst.get((j, name))
                if seen is None or (seen.passed, -(seen.max_abs or 0)) > (c.passed, -(c.max_abs or 0)):
                    worst[(j, name)] = c
    return [[worst[(j, name)] for name in region.produces if (j, name) in worst] for j, region in enumerate(regions)]


def _compare(name, kind, original, rewritten, ops, declared, max_mismatch, tolerance, second_look):
    """One value of one rewrite on one draw, with the rounding probe's second look
    (``second_look(rewritten, atol, rtol)`` -> a Sensitivity or None)."""
    original, rewritten = np.asarray(original), np.asarray(rewritten)
    what = magnitudes.describe(kind, original.dtype) if original.dtype.kind == "f" else kind
    label = f"{name} on scale draws ({what})"
    blind = ~np.isfinite(original) if original.dtype.kind == "f" and original.shape == rewritten.shape else None
    if blind is not None and blind.any():  # the original computes no number there
        rewritten = np.where(blind, original, rewritten)
    atol, rtol = tolerance(original, ops, declared, None, None)
    c = compare(label, original, rewritten, atol, rtol, max_mismatch)
    if c.mismatched and not c.message:
        seen = second_look(rewritten, atol, rtol)
        if seen is not None:
            c = compare(label, original, rewritten, atol, rtol, max_mismatch, seen)
    if blind is not None and blind.any():
        c.notes.append(f"{int(blind.sum())} element(s) where the original is not finite are not compared")
    return c


def _names(draws: dict) -> str:
    names = [repr(v) for v in draws]
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
