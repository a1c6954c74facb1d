"""The library entry points: ``fuse``, ``inspect`` and ``run`` (``validate`` is in validate/check.py).

Each takes the plugin set to use (``plugins``: None for the installed plugins, a
``PluginSet``, or a list of patterns) and a model as a path, a ModelProto or an
onnx-graphsurgeon ``Graph`` (never modified).
"""

from __future__ import annotations

import logging
import numbers
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
from onnx import ModelProto

from . import arguments, progress
from .io import graphsurgeon
from .errors import InvalidArgumentError, PluginError, SurgeonError, ValidationFailed
from .deploy.functions import attach_functions
from .logs import log_lines
from .io.load import check_model_argument, input_files, load_copy, load_model_proto, remember_home
from .io.save import save_model
from .rewrite.plugins import resolve
from .rewrite.driver import Driver
from .rewrite.report import Report
from .runtime.inputs import DEFAULT_MAX_BYTES, DEFAULT_SEED
from .runtime.run import run as run_model
from .rewrite.shapes import apply_input_shapes

log = logging.getLogger(__name__)


@dataclass
class ValidateOptions:
    """How ``fuse(validate=...)`` checks its result (``validate=True`` takes these defaults):
    tolerances (None: per dtype, see ``surgeon.validate``), the fraction of elements allowed
    outside them, and the inputs (``feeds``, else drawn with ``seed``)."""

    atol: float | None = None
    rtol: float | None = None
    max_mismatch: float = 0.0
    seed: int = DEFAULT_SEED
    feeds: Mapping[str, np.ndarray] | None = None


@dataclass
class FuseResult:
    """What ``fuse`` returns: the rewritten ``model`` (a ModelProto, or a graphsurgeon Graph when
    one was given), its ``report``, plugin-loading ``warnings`` and, when asked, ``validation``.

    A model whose weights stay in external data still reads them where they were: ``data_dir``
    is that folder (None: the model holds its weights). ``run``, ``validate``, ``unfuse``,
    ``inspect`` and ``fuse`` take ``result.model`` as they take a path, and
    ``surgeon.save(result, path)`` writes it elsewhere with its data."""

    model: Any
    report: Report
    warnings: list[str]
    validation: object = None  # a ValidationReport when fuse(validate=...)
    hazards: list[str] = field(default_factory=list)  # what the engine ``target`` names would do wrong
    data_dir: str | None = None

    def to_html(self, title: str | None = None) -> str:
        """The HTML report: summary, every rewrite drawn before and after, near misses, and the
        validation's error table and pictures when there was one."""
        from .visual import render

        return render(self.report, self.validation, title=title)


def fuse(model, output: str | os.PathLike | None = None, *, plugins=None, target: str | None = None,
         options: dict | None = None, input_shapes: Mapping[str, Sequence[int]] | None = None,
         validate: bool | ValidateOptions = False, external_data: bool | None = None,
         functions: bool = False, raise_opset: bool = False, force: bool = False, quiet: bool = False) -> FuseResult:
    """Rewrite every match of the plugin set's enabled patterns.

    ``target`` asks patterns for another output form (e.g. ``"affine-grid"``); an engine's name
    (``"tensorrt"``) also lints the result for that engine (``surgeon.lint``), and a hazard
    refuses to write it. ``options`` are further pattern options (``trace``); ``input_shapes``
    fixes input dims first so shape computations fold. ``validate`` checks the result against
    the original and refuses to write one that fails (see ``ValidateOptions``); ``force`` writes
    it anyway. With ``output``, the result is written atomically, weights in ``OUT.data`` when
    ``external_data`` (default: as the input, and past 2 GB). ``functions`` adds model-local
    function bodies for the custom ops (from their plugins), so onnxruntime and
    ``onnx.reference`` run the result with no library; where a body needs a later opset than
    the model's, ``raise_opset`` converts the model to it (else that is an error). ``quiet``: no
    progress on stderr (as ``SURGEON_QUIET=1``).

    Raises ``ValidationFailed`` (its ``report`` attached) when validation refuses the result, and
    the other ``SurgeonError`` kinds of docs/errors.md.
    """
    return fuse_model(model, output, plugins=plugins, target=target, options=options, input_shapes=input_shapes,
                      validate=validate, external_data=external_data, functions=functions, raise_opset=raise_opset,
                      force=force, quiet=quiet)


def fuse_model(model, output=None, *, plugins=None, target=None, options=None, input_shapes=None,
               validate: bool | ValidateOptions = False, external_data=None, keep_model: bool = True,
               dry_run: bool = False, functions: bool = False, raise_opset: bool = False,
               report_path: str | None = None, html_path: str | None = None, force: bool = False,
               quiet: bool = False) -> FuseResult:
    """``fuse`` for the command line: ``keep_model=False`` lets the writer move weights out of
    the returned model instead of copying them; ``dry_run`` marks the report as a preview;
    ``report_path`` gets the JSON report, written with ``output`` (both appear, or neither);
    ``html_path`` the HTML report, written also when validation fails (that is when it shows
    most)."""
    _check_fuse_arguments(model, output, target, options, input_shapes, validate)
    with progress.quieted(quiet):
        result = _fuse(model, output, plugins=plugins, target=target, options=options, input_shapes=input_shapes,
                       validate=validate, external_data=external_data, keep_model=keep_model, dry_run=dry_run,
                       functions=functions, raise_opset=raise_opset, report_path=report_path, html_path=html_path,
                       force=force)
    log_lines(log, result.report.notes, [*result.warnings, *result.hazards,
                                         *(f"{r.anchor}: {w}" for r in result.report.rewrites for w in r.warnings)])
    return result


def _check_fuse_arguments(model, output, target, options, input_shapes, validate) -> None:
    check_model_argument(model)
    arguments.check_path(output, "output", optional=True)
    arguments.check_type(target, str, "target", "an engine or output form (str)", optional=True)
    arguments.check_mapping(options, "options")
    arguments.check_mapping(input_shapes, "input_shapes")
    arguments.check_type(validate, (bool, ValidateOptions), "validate", "a bool or a surgeon.ValidateOptions")


def _fuse(model, output, *, plugins, target, options, input_shapes, validate, external_data, keep_model, dry_run,
          functions, raise_opset, report_path, html_path, force) -> FuseResult:
    plugins = resolve(plugins)
    graph_in = graphsurgeon.is_graph(model)
    source = graphsurgeon.as_model(model)
    name = os.fspath(source) if isinstance(source, (str, os.PathLike)) else ""
    with progress.working(f"loading {os.path.basename(name) or 'the model'}"):
        loaded = load_copy(source)
    if input_shapes:
        apply_input_shapes(loaded.proto, input_shapes)
    opts = dict(options or {})
    if target:
        opts["target"] = target
    report = Driver(loaded, plugins.enabled(), plugins.domains(), opts).run()
    report.dry_run = dry_run
    report.model = name
    if raise_opset and not functions:
        raise InvalidArgumentError("--raise-opset raises the opset for function bodies: give it with --functions")
    if functions:
        report.notes.extend(attach_functions(loaded.proto, plugins, raise_opset=raise_opset))
    warnings = list(plugins.warnings) + unrunnable_ops(loaded.proto, plugins)
    validation = None
    if validate and report.rewrites and len(warnings) > len(plugins.warnings):
        raise PluginError(f"cannot validate: {warnings[len(plugins.warnings)]}")
    if validate and report.rewrites:
        from .validate.check import validate as check

        how = validate if isinstance(validate, ValidateOptions) else ValidateOptions()
        # The loaded model was rewritten in place: the original comes from the caller again.
        original = source if isinstance(source, ModelProto) else load_model_proto(source)
        validation = check(original, loaded, how.feeds, how.atol, how.rtol, input_shapes=input_shapes,
                           seed=how.seed, max_mismatch=how.max_mismatch, plugins=plugins)
        if not validation.passed and not force:
            if html_path:
                from .visual import write as write_html

                write_html(html_path, report, validation, inputs=input_files(loaded))
            failures = validation.failures()
            page = f"; the HTML report is in {html_path}" if html_path else ""
            raise ValidationFailed(f"validation failed: {failures[0] if failures else 'nothing compared'}; "
                                   f"output not written (--force writes it anyway){page}",
                                   report=validation, fuse_report=report)
    hazards = _engine_hazards(loaded, target, plugins, name, report, refuse=output is not None and not force,
                              output=os.fspath(output) if output is not None else None, shapes=input_shapes)
    if output is not None:
        texts = {report_path: report.to_json()} if report_path else {}
        if html_path:  # written with the model: both appear, or neither
            from .visual import render

            texts[html_path] = render(report, validation)
        with progress.working(f"writing {os.path.basename(os.fspath(output))}"):
            save_model(loaded, output, external_data=external_data, restore=keep_model, texts=texts or None)
    elif html_path:
        from .visual import write as write_html

        write_html(html_path, report, validation, inputs=input_files(loaded))
    if graph_in:
        return FuseResult(graphsurgeon.from_proto(loaded.proto), report, warnings, validation, hazards)
    if keep_model:  # handed back: when it comes back in memory, its external data is found where it is
        remember_home(loaded)
    return FuseResult(loaded.proto, report, warnings, validation, hazards,
                      data_dir=loaded.base_dir if loaded.external else None)


def unrunnable_ops(proto: ModelProto, plugins) -> list[str]:
    """One line per custom op in ``proto`` (bodies included) that no plugin of the set can run
    and no model-local function defines, naming the pattern that wrote it: `run` and
    `validate` would stop there, so `fuse` says it at once."""
    from .graph.node import subgraphs_of
    from .runtime.schedule import ORT_DOMAINS
    from .runtime.ortops import unrunnable_written

    functions = {(f.domain, f.name) for f in proto.functions}
    found: dict[tuple[str, str], str] = {}

    def walk(graph) -> None:
        for node in graph.node:
            key = (node.domain, node.op_type)
            if node.domain not in ORT_DOMAINS and key not in functions and key not in found \
                    and not plugins.can_run(*key):
                found[key] = next((e.value for e in node.metadata_props if e.key == "surgeon.pattern"), "")
            for body in subgraphs_of(node):
                walk(body)
    walk(proto.graph)
    lines = []
    for (domain, op_type), pattern in found.items():
        who = f"pattern {pattern!r} writes" if pattern else "the model holds"
        origin = plugins.origin_label(pattern) if pattern else ""
        lines.append(f"{who} {domain}::{op_type}{f' (plugin {origin})' if origin else ''}, which no loaded plugin can "
                     "run (no kernel, onnxruntime library or function body): `surgeon run` and `surgeon validate` "
                     f"will stop at it; give the pattern ops = [CustomOp({domain!r}, {op_type!r}, kernel=fn)]")
    return lines + unrunnable_written(proto, plugins)  # standard and contrib ops onnxruntime lacks


def _engine_hazards(loaded, target, plugins, name: str, report: Report, refuse: bool, output: str | None = None,
                    shapes=None) -> list[str]:
    """When ``target`` names an engine: what it would do wrong with the result. A hazard refuses
    the write (``refuse``) with the first one and why chains stayed as they were."""
    from .lint import ENGINES, lint

    if target not in ENGINES:
        return []
    lines = lint(loaded, target, plugins=plugins, label=name or None, after_fuse=True).lines()
    if lines and refuse:
        again = " ".join(["surgeon fuse", name or "IN", output or "OUT", "--target", target,
                          *(f"--input-shape {k}:{','.join(str(d) for d in v)}" for k, v in (shapes or {}).items()),
                          "--dry-run"])
        more = f" (and {len(lines) - 1} more; `{again}` lists them)" if len(lines) > 1 else ""
        why = "".join(f"; not rewritten: {r.node}: {r.reason}" for r in report.refusals[:2])
        raise SurgeonError(f"the {target} output has a hazard, nothing written (--force writes it){why}; "
                           f"{lines[0]}{more}")
    return lines


def inspect(model, *, plugins=None, target: str | None = None, options: dict | None = None,
            input_shapes: Mapping[str, Sequence[int]] | None = None, quiet: bool = False) -> Report:
    """What ``fuse`` would rewrite (the whole run, every pass) and the reasons for the near
    misses; writes nothing. ``quiet``: no progress on stderr."""
    return fuse_model(model, plugins=plugins, target=target, options=options, input_shapes=input_shapes,
                      dry_run=True, keep_model=False, quiet=quiet).report


def run(model, feeds: Mapping[str, np.ndarray] | None = None, *, plugins=None, device: str = "cpu",
        outputs: Sequence[str] | None = None, input_shapes: Mapping[str, Sequence[int]] | None = None,
        seed: int = DEFAULT_SEED, max_bytes: int = DEFAULT_MAX_BYTES, quiet: bool = False) -> dict[str, np.ndarray]:
    """Run ``model`` (a path, ModelProto, LoadedModel or gs.Graph; ``fuse(...).model`` too),
    custom nodes on the plugin set's reference kernels; returns ``{name: array}``.
    ``feeds=None`` draws seeded random inputs (``input_shapes`` fixes dynamic dims; the rest are
    1). ``outputs`` may name intermediate values of the top-level graph as well as graph
    outputs. ``quiet``: no progress on stderr."""
    check_model_argument(model)
    arguments.check_mapping(feeds, "feeds")
    arguments.check_names(outputs, "outputs")
    arguments.check_mapping(input_shapes, "input_shapes")
    arguments.check_type(device, str, "device", "'cpu' or 'cuda'")
    arguments.check_type(seed, numbers.Integral, "seed", "an int")
    arguments.check_type(max_bytes, numbers.Integral, "max_bytes", "an int")
    with progress.quieted(quiet):
        return run_model(graphsurgeon.as_model(model), resolve(plugins), feeds, device, outputs,
                         input_shapes=input_shapes, seed=seed, max_bytes=max_bytes)
