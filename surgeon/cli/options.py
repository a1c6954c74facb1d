"""Options shared by several commands, and the plugin set they build from them."""

from __future__ import annotations

import click

from ..errors import SurgeonError
from ..rewrite.plugins import PluginSet
from ..rewrite.shapes import parse_input_shape


def plugin_options(selection: bool = True):
    """--plugin/--prefer (every command), and --only/--skip where patterns are selected."""
    def decorate(f):
        f = click.option("--prefer", multiple=True, metavar="PACKAGE",
                         help="When two plugins provide the same pattern or op, use this package's (repeatable).")(f)
        f = click.option("--plugin", "plugins", multiple=True, metavar="MODULE:NAME",
                         help="Load a pattern (and its kernels) that is not installed (repeatable).")(f)
        if selection:
            f = click.option("--skip", multiple=True, metavar="NAME", help="Disable a pattern by name (repeatable).")(f)
            f = click.option("--only", multiple=True, metavar="NAME", help="Enable only these patterns (repeatable).")(f)
        return f
    return decorate


def plugin_set(plugins=(), only=(), skip=(), prefer=()) -> PluginSet:
    """The one plugin set a command uses; installed plugins that failed to load are warned about."""
    from . import warn

    found = PluginSet.installed(plugins, only=only, skip=skip, prefer=prefer)
    for line in found.warnings:
        warn(line)
    return found


def report_option(f):
    return click.option("--report", "report_path", metavar="FILE",
                        help="Write the report as JSON to FILE ('-': standard output).")(f)


def say_html(path: str | None, report_path: str | None = None) -> None:
    """Where the page went: on stdout after the summary, on stderr when stdout holds the JSON."""
    if path:
        click.echo(f"wrote {path} (HTML report)", err=report_path == "-")


def html_option(f):
    return click.option("--html", "html_path", metavar="FILE",
                        help="Write a self-contained HTML report to FILE: every rewrite drawn before and after, "
                             "near misses, and validation errors with pictures of image-like outputs.")(f)


def _set_quiet(ctx, param, value):
    if value:
        from .. import progress

        progress.set_quiet(True)


def quiet_option(f):
    return click.option("--quiet", "-q", is_flag=True, expose_value=False, is_eager=True, callback=_set_quiet,
                        help="No progress on stderr (it is shown only on a terminal, for work taking over a "
                             "second).")(f)


def write_report(path: str | None, text: str) -> None:
    if not path:
        return
    if path == "-":
        click.echo(text)
        return
    from ..io.save import write_text_atomic

    write_text_atomic(path, text)


def shape_options(f):
    return click.option("--input-shape", "input_shapes", multiple=True, metavar="NAME:D1,D2,...",
                        help="Fix an input's dims so shape computations fold (repeatable).")(f)


def parse_shapes(specs) -> dict[str, list[int]]:
    shapes = {}
    for spec in specs:
        try:
            name, dims = parse_input_shape(spec)
        except SurgeonError as exc:
            raise click.BadParameter(str(exc), param_hint="--input-shape") from None
        shapes[name] = dims
    return shapes


def target_option(f):
    return click.option("--target", metavar="NAME",
                        help="The engine you deploy with (tensorrt, onnxruntime, openvino: the output is checked "
                             "for it), or another output form a pattern offers (e.g. affine-grid).")(f)


def check_target(target: str | None, chosen: PluginSet) -> None:
    """A --target no engine and no enabled pattern knows is a usage error (exit 2), not a run
    that rewrites nothing. The names come from the plugins, so click.Choice cannot list them."""
    from ..lint import ENGINES

    known = tuple(dict.fromkeys(ENGINES + chosen.targets()))
    if target is not None and target not in known:
        raise click.BadParameter(f"{target!r} is not one of {', '.join(map(repr, known))}.", param_hint="'--target'")
