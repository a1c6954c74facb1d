"""``surgeon.validate``: does the rewritten model compute what the original computes?

Two checks on the same inputs:

- per rewrite: each region a rewrite wrote (whatever it writes: a custom op, a contrib op such as
  ``com.microsoft::Gelu``, standard ops such as ``Gemm``; see validate/written.py) runs on the
  original model's own activations, and its outputs are held against the original values of
  the same names (the engine keeps those names). A wrong rewrite is named, with its pattern and
  plugin, even when its error would fade by the end of the network.
- end to end: every model output, with max abs/rel and mean abs error, the atol that would have
  passed at the given rtol (as Polygraphy reports it) and NaN/Inf counts.

The original is evaluated as written: onnxruntime with graph optimisations off
(``ORT_DISABLE_ALL``), so an optimiser that fuses an erf GELU into ``Gelu`` or a LayerNorm
decomposition into ``LayerNormalization`` cannot turn the reference into the rewrite.

Sampling, twice. Drawn inputs are checked a second time far away (``far=True``, the default):
dynamic dims past 64, transform matrices of scales 4-12 and shifts of 10-30 (coordinates past
+-20) with NaN in the rows no affine map reads, integers from -1: where a rewrite could differ
only past what its matcher's probes tried (a clamp at 20, ``min(W, 64)``, a gate on an integer
at 0, a map that multiplies an element the original never reads). Where the original itself
does not run on them, that round is skipped with a note. And each rewrite runs once more on its
own inputs drawn per row or channel at magnitudes 1e-4 to 1e4 (validate/scaled.py): an epsilon
outside a square root shows only on small rows. Validation samples; the matchers prove.

Tolerances. Each rewrite is held to what exact float math allows (validate/tolerance.py: 4 ulps
per op of the region, scaled by the output's magnitude; a float32 erf GELU with values up to 8:
1.9e-5), or to what its pattern declared (``Match.atol``), or to the user's ``atol``/``rtol``.
End to end: float32 atol = rtol = 1e-3; float16 1e-2; bfloat16 5e-2; float64 1e-6; integers and
bools exact (the declared tolerances too, when larger). An element outside them still passes
when the original itself moves that far under a few ulps of rounding (validate/rounding.py):
bilinear sampling at large coordinates; and, a tie, only where a discontinuous op on the element's
path flips (nearest sampling at a pixel boundary); the report counts those elements and says what
they are. A tolerance the user gives is taken as given, without
that explanation. Measured on a 1x3x1024x1024 warp (validate's draws, seed 0: images of
magnitude up to 8, thetas of every kind), onnxruntime's AffineGrid + GridSample against torch's
pair as the rewrite's kernel:

- correct bilinear: max abs 3.1e-3; 242,828 of 3.1M elements beyond the rewrite's exact-float
  tolerance (7.5e-6) and 93 beyond 1e-3 end to end, every one explained by rounding (float32
  pixel coordinates near 1024 keep 6e-5 of a pixel, times image gradients up to 16).
- correct nearest: 36 elements differ by up to 13.7, every one a rounding tie.
- wrong (align_corners flipped): 312,153 elements outside tolerance, 1.6% of those explained;
  fails. A wrong output size changes the shape and fails outright.

``max_mismatch`` (``--max-mismatch``) allows a fraction of elements outside tolerance that
nothing explains; it is 0 by default.
"""

from __future__ import annotations

import logging
import numbers
import time
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

import numpy as np

from .. import arguments
from ..io import graphsurgeon
from ..io.load import check_model_argument
from ..errors import InvalidArgumentError, SurgeonError
from ..logs import log_lines
from ..rewrite.plugins import PluginSet, resolve
from .compare import compare, missing
from .draws import far_drawers, input_drawers
from ..runtime.inputs import (DEFAULT_MAX_BYTES, DEFAULT_SEED, check_feeds, describe, describe_floats,
                              random_inputs)
from .explain import explain_outputs, explain_rewrites
from .originals import original_parts
from ..runtime.program import Runner
from ..runtime.runners import get_runner, make_runner
from .regions import RewriteRegion, check_model, find_regions, pinned_sizes, top_level_values, undefined_sizes
from .scaled import check_scales
from .pictures import keep_rewrite_pictures, pictures_of
from .report import RewriteCheck, ValidationReport, describe_models
from .tolerance import rounding_tolerance
from .. import progress

__all__ = ["validate", "ValidationReport", "RewriteCheck"]

log = logging.getLogger("surgeon.validate")  # the name it has always logged under


@dataclass(frozen=True)
class ValidationSettings:
    """What one ``validate`` call was asked, as one value its rounds share: the tolerances (None:
    per rewrite and per dtype, and beyond them what rounding explains), the fraction of elements
    allowed outside them, where the models run (``plugins``, ``device``, ``engine``), how inputs
    are drawn (``shapes``: dims fixed by the user or by the rewrite; ``seed``; ``max_bytes``) and
    whether drawn inputs are checked again far away (``far``). The far round takes a copy with
    the next seed."""

    atol: float | None
    rtol: float | None
    max_mismatch: float
    device: str
    engine: str
    plugins: PluginSet  # resolved by ``_validate`` (until then, what the caller gave)
    shapes: Mapping[str, Sequence[int]]
    seed: int
    max_bytes: int
    far: bool

    @property
    def explain(self) -> bool:
        """Whether rounding may explain an element outside tolerance: a tolerance the user gave
        is taken as given."""
        return self.atol is None and self.rtol is None

    def report(self, engine: str) -> ValidationReport:
        """An empty report of a round under these settings."""
        return ValidationReport(atol=self.atol, rtol=self.rtol, max_mismatch=self.max_mismatch, device=self.device,
                                engine=engine)

    def runner_for(self, model) -> Runner:
        """The cached runner of ``model``, run as written (no graph optimisation)."""
        return get_runner(model, self.plugins, self.device, self.engine, optimize=False)

    def probe_runner(self, loaded) -> Runner:
        """A new runner (not cached) of a probe's model, run as written."""
        return make_runner(loaded, self.plugins, self.device, self.engine, optimize=False)


def validate(original, rewritten, feeds: Mapping[str, np.ndarray] | None = None, atol: float | None = None,
             rtol: float | None = None, device: str = "cpu", *,
             input_shapes: Mapping[str, Sequence[int]] | None = None, seed: int = DEFAULT_SEED,
             max_bytes: int = DEFAULT_MAX_BYTES, max_mismatch: float = 0.0,
             plugins=None, engine: str = "auto", far: bool = True, quiet: bool = False) -> ValidationReport:
    """Compare ``rewritten`` with ``original`` (each a path, ModelProto or LoadedModel; neither is
    modified or re-read when given in memory). ``feeds=None`` uses seeded random inputs.
    ``atol``/``rtol`` override the tolerances for every comparison, taken as given (default: per
    rewrite, what exact float math allows; end to end, per dtype; and beyond them, elements the
    original's own rounding explains). Custom nodes run on the op libraries or
    kernels of ``plugins`` (a PluginSet; None: the installed plugins), as ``engine`` says (see
    ``surgeon.run``); the original runs as written, with no graph optimisation. ``rewritten`` may
    be ``fuse(...).model`` (its external data is found where it is). ``quiet``: no progress on
    stderr. Returns the report, passed or not (``fuse(validate=True)`` is what raises
    ``ValidationFailed``)."""
    _check_arguments(original, rewritten, feeds, atol, rtol, device, input_shapes, seed, max_mismatch)
    how = ValidationSettings(atol=atol, rtol=rtol, max_mismatch=max_mismatch, device=device, engine=engine,
                             plugins=plugins, shapes=dict(input_shapes or {}), seed=seed, max_bytes=max_bytes,
                             far=far)
    with progress.quieted(quiet):
        report = _validate(original, rewritten, feeds, how)
    failures = report.failures()
    log_lines(log, report.notes + (report.far.notes if report.far is not None else []),
              [f"validation failed: {line}" for line in failures[:12]])
    return report


def _check_arguments(original, rewritten, feeds, atol, rtol, device, input_shapes, seed, max_mismatch) -> None:
    check_model_argument(original, "original")
    check_model_argument(rewritten, "rewritten")
    arguments.check_mapping(feeds, "feeds")
    arguments.check_mapping(input_shapes, "input_shapes")
    arguments.check_type(device, str, "device", "'cpu' or 'cuda'")
    arguments.check_type(seed, numbers.Integral, "seed", "an int")
    arguments.check_type(max_mismatch, numbers.Real, "max_mismatch", "a fraction (float)")
    if not 0.0 <= max_mismatch <= 1.0:
        raise InvalidArgumentError(f"max_mismatch must be a fraction between 0 and 1, got {max_mismatch}")
    for label, value in (("atol", atol), ("rtol", rtol)):
        arguments.check_type(value, numbers.Real, label, "a number", optional=True)
        if value is not None and not value >= 0:
            raise InvalidArgumentError(f"{label} must be >= 0, got {value}")


def _validate(original, rewritten, feeds, how: ValidationSettings) -> ValidationReport:
    how = replace(how, plugins=resolve(how.plugins))
    original, rewritten = graphsurgeon.as_model(original), graphsurgeon.as_model(rewritten)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    with progress.working("loading the models"):
        orig = how.runner_for(original)
        rew = how.runner_for(rewritten)
    _check_same_inputs(orig, rew)
    orig.plan(), rew.plan()  # a missing kernel or an unsupported body is an error, not a failed rewrite
    report = how.report(rew.engine.describe())
    report.notes.extend(rew.engine.notes)
    report.models = describe_models(original=orig, rewritten=rew)
    drawn = feeds is None
    how = replace(how, shapes={**_fixed_by_rewrite(orig, rew), **how.shapes})
    _round(report, orig, rew, how, feeds, timings, far=False)
    if drawn and how.far and report.passed:
        _far_round(report, orig, rew, how)
    timings["total"] = time.perf_counter() - start
    report.timings = timings
    return report


def _far_round(report: ValidationReport, orig: Runner, rew: Runner, how: ValidationSettings) -> None:
    """The same checks on inputs far past the near draws and past any probe of the matchers: what
    bends only there (a clamp at 20, ``min(W, 64)``, a gate on an integer at 0) shows. Skipped,
    with a note, where the original itself does not run on them."""
    far = how.report(report.engine)
    try:
        _round(far, orig, rew, replace(how, seed=how.seed + 1), None, {}, far=True)
    except SurgeonError as exc:
        report.notes.append(f"far draws skipped: {str(exc).splitlines()[0]}")
        return
    report.far = far


def _round(report: ValidationReport, orig: Runner, rew: Runner, how: ValidationSettings, feeds, timings: dict,
           far: bool) -> None:
    """One comparison of the two models, every rewrite and end to end, on ``feeds`` (None: drawn;
    ``far``: drawn far)."""
    plugins, seed, atol, rtol = how.plugins, how.seed, how.atol, how.rtol
    start = time.perf_counter()
    drawers = {}
    if feeds is None:
        drawers = far_drawers(rew.proto, plugins) if far else input_drawers(rew.proto, plugins)
        feeds, notes = random_inputs(orig.loaded, how.shapes, seed=seed, max_bytes=how.max_bytes, drawers=drawers,
                                     far=far, avoid=undefined_sizes(rew.proto), pinned=pinned_sizes(rew.proto))
        report.notes.extend(notes)
        source = f"random, seed {seed}, {describe_floats(far)}"
    else:
        feeds = dict(feeds)
        check_feeds(orig.specs, feeds)
        source = "given"
    report.inputs = [{"name": k, "shape": list(v.shape), "dtype": v.dtype.name, "source": source}
                     for k, v in feeds.items()]
    if source.startswith("random"):
        for entry in report.inputs:
            if entry["name"] in drawers:
                draw = drawers[entry["name"]]
                entry["source"] = f"random, seed {seed}, {describe(getattr(draw, 'far', draw) if far else draw)}"
    timings.setdefault("load", time.perf_counter() - start)

    regions, dead = find_regions(orig.proto, rew.proto, rew.is_custom)
    if dead:
        report.notes.append(f"{dead} rewritten node(s) feed no output: never run, not checked")
    parts = original_parts(orig.proto, regions)
    declared = [r.atol for r in regions if r.atol is not None]
    end_atol = atol
    if atol is None and declared:  # a rewrite exact only to a tolerance: the outputs after it too
        end_atol = max(declared)
        report.notes.append(f"{len(declared)} rewrite(s) declare they are exact only to atol {end_atol:g}; "
                            "those rewrites and the outputs end to end are held to it")
    keep = list(dict.fromkeys(orig.output_names + [n for r in regions for n in r.leaves + r.produces]))
    t = time.perf_counter()
    with progress.working("running the original model"):
        try:
            reference = orig.run(feeds, keep)
        except SurgeonError as exc:
            raise SurgeonError(f"the original does not run as written (no graph optimisation): {exc}") from None
    timings["original"] = time.perf_counter() - t

    t = time.perf_counter()
    explain = how.explain
    with progress.working(f"checking {len(regions)} rewrite(s)"):
        report.rewrites = _check_rewrites(regions, parts, orig, rew, reference, how)
        for check, region in zip(report.rewrites, regions):
            check.plugins = [plugins.origin_label(p) for p in region.patterns]
        if explain:
            explain_rewrites(report, regions, parts, orig, feeds, reference, how.probe_runner, seed)
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
            report.outputs.append(compare(name, reference[name], result[name], end_atol, rtol, how.max_mismatch))
        if explain:
            explain_outputs(report, parts, orig, feeds, reference, result, end_atol, rtol, how.probe_runner, seed)
        report.pictures = pictures_of(orig.output_names, reference, result)
        extra = [n for n in rew.output_names if n not in orig.output_names]
        if extra:
            report.notes.append(f"the rewritten model has outputs the original lacks: {', '.join(extra)}")
    if explain and not far and source != "given":  # each rewrite on its own inputs at scale (validate/scaled.py)
        t = time.perf_counter()
        check_scales(report, regions, parts, orig, rew, feeds, reference, plugins, how.runner_for, how.probe_runner,
                     _tolerance, seed)
        timings["scales"] = time.perf_counter() - t


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


def _check_rewrites(regions: list[RewriteRegion], parts: list, orig: Runner, rew: Runner, reference: dict,
                    how: ValidationSettings) -> list[RewriteCheck]:
    checks = [RewriteCheck(r.names, r.ops, r.patterns, refs=r.refs) for r in regions]
    runnable = []
    for region, part, check in zip(regions, parts, checks):
        if region.produces:
            runnable.append((region, part, check))
        else:
            check.note = "its outputs have no counterpart in the original; checked end to end only"
    if not runnable:
        return checks
    taken = top_level_values(rew.proto.graph) | top_level_values(orig.proto.graph)
    try:  # all regions in one model: its standard parts share sessions
        _run_regions(runnable, rew, reference, taken, how)
    except SurgeonError:
        for triple in runnable:  # one region broke: run them one by one to name it
            try:
                _run_regions([triple], rew, reference, set(taken), how)
            except SurgeonError as exc:
                triple[2].error = str(exc)
    return checks


def _run_regions(triples, rew: Runner, reference: dict, taken: set[str], how: ValidationSettings) -> None:
    regions = [r for r, _, _ in triples]
    model, renamed = check_model(regions, rew.loaded, reference, taken)
    runner = how.runner_for(model)
    leaves = {name: reference[name] for r in regions for name in r.leaves}
    values = runner.run(leaves)
    for region, part, check in triples:
        ops = max(len(part), len(region.nodes))
        check.rewritten = {name: values[renamed[name]] for name in region.produces}
        check.outputs = [compare(name, reference[name], check.rewritten[name],
                                 *_tolerance(reference[name], ops, region.atol, how.atol, how.rtol), how.max_mismatch)
                         for name in region.produces]
    keep_rewrite_pictures([(r, c) for r, _, c in triples], reference, values, renamed)


def _tolerance(original, ops: int, declared: float | None, atol, rtol) -> tuple[float, float]:
    """The user's tolerance where given, else what exact float math allows (or what the rewrite
    declared, when larger)."""
    exact_atol, exact_rtol = rounding_tolerance(original, ops)
    if declared is not None:
        exact_atol = max(exact_atol, declared)
    return (atol if atol is not None else exact_atol, rtol if rtol is not None else exact_rtol)


def _note_unchecked(report: ValidationReport, rew: Runner) -> None:
    """Custom nodes inside If branches are checked together with their If: say so."""
    top = sum(1 for n in rew.proto.graph.node if rew.is_custom(n))
    inside = len(rew.custom_nodes()) - top
    if inside:
        report.notes.append(f"{inside} custom node(s) inside If branches are checked together with their If")
