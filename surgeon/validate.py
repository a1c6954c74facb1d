"""``surgeon.validate``: does the rewritten model compute what the original computes?

Two checks on the same inputs:

- per rewrite: each region the rewrite wrote (its custom node, plus any nodes it added around
  it) runs on the original model's own activations, and its outputs are held against the
  original values of the same names (the engine keeps those names). A wrong rewrite is named
  even when its error would fade by the end of the network.
- end to end: every model output, with max abs/rel and mean abs error, the atol that would have
  passed at the given rtol (as Polygraphy reports it) and NaN/Inf counts.

Default tolerances, by the original value's dtype: float32 atol = rtol = 1e-3; float16 1e-2;
bfloat16 5e-2; float64 1e-6; integers and bools exact. Measured on 1x3x1024x1024 warps,
align_corners 0/1 x zeros/border/reflection, onnxruntime's AffineGrid + GridSample against the
surgeon_ops.kernels C++ kernel and against torch:

- correct bilinear, inputs as validate draws them (signed images, thetas that rotate, reflect,
  scale 0.5-2 and shift past the edge; 2x3x1024x1024): max abs error <= 4.9e-4, smallest passing
  atol at rtol 1e-3 <= 4.0e-4; bicubic <= 6.8e-4 / 5.7e-4. With [0, 1) images and near-identity
  thetas: <= 2.0e-4 / 1.1e-4 (bicubic 2.3e-4 / 1.2e-4); at 32x32 <= 6e-6. The error grows with
  the size because float32 pixel coordinates lose precision; 1e-4 at rtol 1e-4 fails correct
  1024x1024 rewrites.
- tampered (align_corners flipped, padding mode changed, theta rows swapped): smallest passing
  atol >= 0.40 at 1024x1024 and >= 0.13 at 32x32; 0.018 for a near-identity STN theta with
  align_corners flipped (identity is the one transform align_corners does not change). A wrong
  output size changes the shape and fails outright.
- inputs far from the defaults (N(0, 1) images and thetas: 3x zoom, much reflection) need up to
  1.14e-3: pass ``--atol 2e-3`` there.

mode=nearest is the exception: at 1024x1024, coordinates within rounding error of a pixel
boundary land on the neighbour in one implementation and not the other (33-291 of 3.1M elements
measured with near-identity thetas, up to 931 of 6.3M with validate's draws), so a correct
rewrite fails by default. ``max_mismatch`` (``--max-mismatch``) allows a
fraction of elements outside tolerance; 1e-3 passes those flips and still fails every tampering
above. It is 0 by default: one wrong border row of a 1024x1024 image is 0.1%.
"""

from __future__ import annotations

import time
from typing import Mapping, Sequence

import numpy as np

from . import graphsurgeon
from .errors import SurgeonError
from .plugins import resolve
from .runtime.compare import compare, missing
from .runtime.draws import describe, input_drawers
from .runtime.inputs import DEFAULT_MAX_BYTES, DEFAULT_SEED, check_feeds, random_inputs
from .runtime.program import Runner, get_runner
from .runtime.regions import Region, check_model, find_regions, top_level_values
from .runtime.pictures import keep_rewrite_pictures, pictures_of
from .runtime.report import RewriteCheck, ValidationReport, describe_models
from . import progress

__all__ = ["validate", "ValidationReport", "RewriteCheck"]


def validate(original, rewritten, feeds: Mapping[str, np.ndarray] | None = None, atol: float | None = None,
             rtol: float | None = None, device: str = "cpu", *,
             input_shapes: Mapping[str, Sequence[int]] | None = None, seed: int = DEFAULT_SEED,
             max_bytes: int = DEFAULT_MAX_BYTES, max_mismatch: float = 0.0,
             plugins=None, engine: str = "auto") -> ValidationReport:
    """Compare ``rewritten`` with ``original`` (each a path, ModelProto or LoadedModel; neither is
    modified or re-read when given in memory). ``feeds=None`` uses seeded random inputs.
    ``atol``/``rtol`` override the per-dtype defaults for every comparison. Custom nodes run on
    the op libraries or kernels of ``plugins`` (a PluginSet; None: the installed plugins), as
    ``engine`` says (see ``surgeon.run``)."""
    plugins = resolve(plugins)
    original, rewritten = graphsurgeon.as_model(original), graphsurgeon.as_model(rewritten)
    if not 0.0 <= max_mismatch <= 1.0:
        raise SurgeonError(f"max_mismatch must be a fraction between 0 and 1, got {max_mismatch}")
    for label, value in (("atol", atol), ("rtol", rtol)):
        if value is not None and not value >= 0:
            raise SurgeonError(f"{label} must be >= 0, got {value}")
    timings: dict[str, float] = {}
    start = time.perf_counter()
    with progress.working("loading the models"):
        orig, rew = get_runner(original, plugins, device, engine), get_runner(rewritten, plugins, device, engine)
    _check_same_inputs(orig, rew)
    orig.plan(), rew.plan()  # a missing kernel or an unsupported body is an error, not a failed rewrite
    report = ValidationReport(atol=atol, rtol=rtol, max_mismatch=max_mismatch, device=device,
                              engine=rew.engine.describe())
    report.notes.extend(rew.engine.notes)
    report.models = describe_models(original=orig, rewritten=rew)
    if feeds is None:
        shapes = {**_fixed_by_rewrite(orig, rew), **dict(input_shapes or {})}
        drawers = input_drawers(rew.proto, plugins)
        feeds, notes = random_inputs(orig.loaded, shapes, seed=seed, max_bytes=max_bytes, drawers=drawers)
        report.notes.extend(notes)
        source = f"random, seed {seed}, uniform [-1, 1)"
    else:
        feeds = dict(feeds)
        check_feeds(orig.specs, feeds)
        source = "given"
    report.inputs = [{"name": k, "shape": list(v.shape), "dtype": v.dtype.name, "source": source}
                     for k, v in feeds.items()]
    if source.startswith("random"):
        for entry in report.inputs:
            if entry["name"] in drawers:
                entry["source"] = f"random, seed {seed}, {describe(drawers[entry['name']])}"
    timings["load"] = time.perf_counter() - start

    regions, dead = find_regions(orig.proto, rew.proto, rew.is_custom)
    if dead:
        report.notes.append(f"{dead} custom node(s) feed no output: never run, not checked")
    declared = [r.atol for r in regions if r.atol is not None]
    end_atol = atol
    if atol is None and declared:  # a rewrite exact only to a tolerance: the outputs after it too
        end_atol = max(declared)
        report.notes.append(f"{len(declared)} rewrite(s) declare they are exact only to atol {end_atol:g}; "
                            "those rewrites and the outputs end to end are held to it")
    keep = list(dict.fromkeys(orig.output_names + [n for r in regions for n in r.leaves + r.produces]))
    t = time.perf_counter()
    with progress.working("running the original model"):
        reference = orig.run(feeds, keep)
    timings["original"] = time.perf_counter() - t

    t = time.perf_counter()
    runner_for = lambda model: get_runner(model, plugins, device, engine)  # noqa: E731
    with progress.working(f"checking {len(regions)} rewrite(s)"):
        report.rewrites = _check_rewrites(regions, orig, rew, reference, atol, rtol, max_mismatch, runner_for)
    timings["rewrites"] = time.perf_counter() - t
    _note_unchecked(report, rew)

    t = time.perf_counter()
    try:
        with progress.working("running the rewritten model"):
            result = rew.run(feeds)
    except SurgeonError as exc:
        report.error = str(exc)
        result = None
    timings["rewritten"] = time.perf_counter() - t
    if result is not None:
        for name in orig.output_names:
            if name not in result:
                report.outputs.append(missing(name, "rewritten"))
                continue
            report.outputs.append(compare(name, reference[name], result[name], end_atol, rtol, max_mismatch))
        report.pictures = pictures_of(orig.output_names, reference, result)
        extra = [n for n in rew.output_names if n not in orig.output_names]
        if extra:
            report.notes.append(f"the rewritten model has outputs the original lacks: {', '.join(extra)}")
    timings["total"] = time.perf_counter() - start
    report.timings = timings
    return report


def _fixed_by_rewrite(orig: Runner, rew: Runner) -> dict[str, list[int]]:
    """Dims the rewritten model fixed (``fuse --input-shape``) where the original's are dynamic:
    random inputs must fit both."""
    fixed = {}
    theirs = {s.name: s.dims for s in rew.specs}
    for spec in orig.specs:
        dims = theirs.get(spec.name)
        if (dims and spec.dims and len(dims) == len(spec.dims) and all(isinstance(d, int) and d > 0 for d in dims)
                and not all(isinstance(d, int) and d > 0 for d in spec.dims)):
            fixed[spec.name] = list(dims)
    return fixed


def _check_same_inputs(orig: Runner, rew: Runner) -> None:
    a = {s.name: s for s in orig.specs}
    b = {s.name: s for s in rew.specs}
    if set(a) != set(b):
        only_a = sorted(set(a) - set(b))
        only_b = sorted(set(b) - set(a))
        raise SurgeonError("the two models take different inputs"
                           + (f"; only the original has {', '.join(only_a)}" if only_a else "")
                           + (f"; only the rewritten has {', '.join(only_b)}" if only_b else ""))
    for name, spec in a.items():
        if spec.elem_type != b[name].elem_type:
            raise SurgeonError(f"input {name!r} is {spec.type_name} in the original but "
                               f"{b[name].type_name} in the rewritten model")


def _check_rewrites(regions: list[Region], orig: Runner, rew: Runner, reference: dict, atol, rtol,
                    max_mismatch: float, runner_for) -> list[RewriteCheck]:
    checks = [RewriteCheck(r.names, r.ops, r.patterns) for r in regions]
    runnable = []
    for region, check in zip(regions, checks):
        if region.produces:
            runnable.append((region, check))
        else:
            check.note = "its outputs have no counterpart in the original; checked end to end only"
    if not runnable:
        return checks
    taken = top_level_values(rew.proto.graph) | top_level_values(orig.proto.graph)
    try:  # all regions in one model: its standard parts share sessions
        _run_regions(runnable, rew, reference, taken, atol, rtol, max_mismatch, runner_for)
    except SurgeonError:
        for pair in runnable:  # one region broke: run them one by one to name it
            try:
                _run_regions([pair], rew, reference, set(taken), atol, rtol, max_mismatch, runner_for)
            except SurgeonError as exc:
                pair[1].error = str(exc)
    return checks


def _run_regions(pairs, rew: Runner, reference: dict, taken: set[str], atol, rtol, max_mismatch: float,
                 runner_for) -> None:
    regions = [r for r, _ in pairs]
    model, renamed = check_model(regions, rew.loaded, reference, taken)
    runner = runner_for(model)
    leaves = {name: reference[name] for r in regions for name in r.leaves}
    values = runner.run(leaves)
    for region, check in pairs:
        held = atol if atol is not None else region.atol  # the user's tolerance, else what the rewrite declared
        check.outputs = [compare(name, reference[name], values[renamed[name]], held, rtol, max_mismatch)
                         for name in region.produces]
    keep_rewrite_pictures(pairs, reference, values, renamed)


def _note_unchecked(report: ValidationReport, rew: Runner) -> None:
    """Custom nodes inside If branches are checked together with their If: say so."""
    top = sum(1 for n in rew.proto.graph.node if rew.is_custom(n))
    inside = len(rew.custom_nodes()) - top
    if inside:
        report.notes.append(f"{inside} custom node(s) inside If branches are checked together with their If")
