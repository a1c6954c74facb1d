"""The library entry points: ``fuse`` and ``inspect``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Sequence

from onnx import ModelProto

from .modelio import LoadedModel, load_model_proto, save_model
from .errors import SurgeonError
from .rewrite.driver import Driver
from .rewrite.pattern import Pattern
from .rewrite.plugins import Discovery, InstalledPattern, discover, select
from .rewrite.report import Report
from .shapes import apply_input_shapes


@dataclass
class FuseResult:
    """What ``fuse`` returns: the rewritten ``model``, its ``report``, and plugin-loading ``warnings``."""

    model: ModelProto
    report: Report
    warnings: list[str]
    validation: object = None  # a ValidationReport when fuse(validate=True)


def _patterns(patterns, only, skip, plugins) -> tuple[list[Pattern], list[str]]:
    if patterns is not None:  # given patterns are selected like discovered ones
        found = Discovery([InstalledPattern(p() if isinstance(p, type) else p, "-", "-", "patterns=")
                           for p in patterns])
        return select(found, only, skip), []
    found = discover(plugins)
    return select(found, only, skip), found.errors


def _loaded(model) -> LoadedModel:
    if isinstance(model, ModelProto):
        copy = ModelProto()
        copy.CopyFrom(model)  # the caller's model is never modified
        return load_model_proto(copy)
    return load_model_proto(model)


def fuse(model: ModelProto | str | os.PathLike, output: str | os.PathLike | None = None, *,
         patterns: Sequence[Pattern] | None = None, only: Iterable[str] = (), skip: Iterable[str] = (),
         plugins: Iterable[str] = (), target: str | None = None, input_shapes: dict | None = None,
         dry_run: bool = False, external_data: bool | None = None, options: dict | None = None,
         validate: bool = False, force: bool = False, atol: float | None = None,
         rtol: float | None = None, keep_model: bool = True) -> FuseResult:
    """Rewrite every match of the enabled patterns.

    ``model`` is a path or a ModelProto (never modified). ``patterns`` overrides discovery;
    ``only``/``skip`` select by name; ``plugins`` adds ``module:Name`` patterns; ``target``
    asks patterns for an alternative form; ``input_shapes`` fixes input dims first so shape
    computations fold. With ``output``, the result is written atomically (unless ``dry_run``).
    ``validate`` checks the result against the original on the reference kernels first and
    refuses to write one that fails (unless ``force``). ``keep_model=False`` lets the writer
    move weights out of the returned model instead of copying them (for callers that discard it).
    """
    loaded = _loaded(model)
    chosen, warnings = _patterns(patterns, list(only), list(skip), list(plugins))
    if input_shapes:
        apply_input_shapes(loaded.proto, input_shapes)
    opts = dict(options or {})
    if target:
        opts["target"] = target
    report = Driver(loaded, chosen, opts, dry_run=dry_run).run()
    validation = None
    if validate and report.rewrites and not dry_run:
        from .validate import validate as check

        # The loaded model was rewritten in place: the original comes from the caller again.
        original = model if isinstance(model, ModelProto) else load_model_proto(model)
        validation = check(original, loaded, input_shapes=input_shapes, plugins=plugins, atol=atol, rtol=rtol)
        if not validation.passed and not force:
            failures = validation.failures()
            raise SurgeonError(f"validation failed: {failures[0] if failures else 'nothing compared'}; "
                               "output not written (--force writes it anyway)")
    if output is not None and not dry_run:
        save_model(loaded, output, external_data=external_data, restore=keep_model)
    return FuseResult(loaded.proto, report, warnings, validation)


def inspect(model: ModelProto | str | os.PathLike, **kwargs) -> Report:
    """What ``fuse`` would rewrite, and the reasons for the near misses; changes nothing."""
    return fuse(model, None, dry_run=True, **kwargs).report
