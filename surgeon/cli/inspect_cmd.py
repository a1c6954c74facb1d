from __future__ import annotations

import click

from .. import api
from . import cli, warn
from .options import parse_shapes, pattern_options, shape_options


@cli.command()
@click.argument("input_path", metavar="IN", type=click.Path(dir_okay=True))
@pattern_options
@shape_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def inspect(input_path, only, skip, plugins, input_shapes, as_json):
    """Show what would match in IN, and why near misses were refused. Writes nothing.

    \b
    Example:
      surgeon inspect model.onnx
    """
    result = api.fuse(input_path, None, only=only, skip=skip, plugins=plugins,
                      input_shapes=parse_shapes(input_shapes), dry_run=True)
    for w in result.warnings:
        warn(w)
    click.echo(result.report.to_json() if as_json else result.report.summary())
