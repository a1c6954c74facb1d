from __future__ import annotations

import click

from ..deploy.unfuse import unfuse as unfuse_model
from . import cli, warn
from .options import plugin_options, plugin_set, quiet_option, report_option, write_report


@cli.command()
@click.argument("input_path", metavar="IN", type=click.Path(dir_okay=True))
@click.argument("output_path", metavar="OUT", type=click.Path(dir_okay=True))
@click.option("--opset", type=click.IntRange(min=1), default=None, metavar="N",
              help="Default-domain opset to write (default: IN's own; another converts IN with "
                   "onnx.version_converter first, lowering by hand what it cannot step down).")
@quiet_option
@plugin_options(selection=False)
@report_option
def unfuse(input_path, output_path, opset, plugins, prefer, report_path):
    """Write every custom node of IN back as standard ONNX, for runtimes with no plugin.

    Each node becomes the standard form its plugin gives for the opset. With --opset, the
    standard nodes are converted too (those onnx's converter cannot step down, such as Pad's
    axes or GridSample-20's mode names and volumes, are lowered by hand). A node the opset
    cannot express is an error naming it; a node no plugin gives a standard form stays (a
    warning). The custom domain's import goes when none of its nodes is left.

    \b
    Example:
      surgeon unfuse model.fused.onnx model.std.onnx
      surgeon unfuse model.fused.onnx model.opset16.onnx --opset 16
    """
    result = unfuse_model(input_path, output_path, opset=opset, plugins=plugin_set(plugins, prefer=prefer))
    if report_path != "-":
        click.echo(result.summary())
    if result.left:
        warn(f"{len(result.left)} custom node(s) left: no plugin gives them a standard form")
    write_report(report_path, result.report.to_json())
    if report_path != "-":
        click.echo(f"wrote {output_path}")
