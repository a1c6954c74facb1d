from __future__ import annotations

import click

from .. import api
from . import cli
from .options import (check_target, html_option, parse_shapes, plugin_options, plugin_set, quiet_option,
                      report_option, say_html, shape_options, target_option, write_report)


@cli.command()
@click.argument("input_path", metavar="IN", type=click.Path(dir_okay=True))
@plugin_options()
@shape_options
@target_option
@report_option
@html_option
@quiet_option
def inspect(input_path, only, skip, plugins, prefer, input_shapes, target, report_path, html_path):
    """Show what `fuse` would change in IN (every pass), and why near misses were refused.
    Writes nothing but the report.

    \b
    Example:
      surgeon inspect model.onnx
      surgeon inspect model.onnx --target affine-grid --report -
    """
    chosen = plugin_set(plugins, only, skip, prefer)
    check_target(target, chosen)
    report = api.inspect(input_path, plugins=chosen, target=target,
                         input_shapes=parse_shapes(input_shapes))
    if report_path != "-":
        click.echo(report.summary())
    write_report(report_path, report.to_json())
    if html_path:
        from ..visual import write as write_html

        write_html(html_path, report, inputs=[input_path])
        say_html(html_path, report_path)
