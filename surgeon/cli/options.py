"""Options shared by the commands that select patterns."""

from __future__ import annotations

import click

from ..shapes import parse_input_shape
from ..errors import SurgeonError


def pattern_options(f):
    f = click.option("--plugin", "plugins", multiple=True, metavar="MODULE:NAME",
                     help="Load a pattern that is not installed (repeatable).")(f)
    f = click.option("--skip", multiple=True, metavar="NAME", help="Disable a pattern by name (repeatable).")(f)
    f = click.option("--only", multiple=True, metavar="NAME", help="Enable only these patterns (repeatable).")(f)
    return f


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
