"""``surgeon lint`` (``fuse --target ENGINE`` runs the same check on what it writes: api.py)."""

from __future__ import annotations

import click

from ..lint import ENGINES, lint as lint_model
from . import cli
from .options import plugin_options, plugin_set, report_option, write_report


@cli.command()
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=True))
@click.option("--target", required=True, type=click.Choice(ENGINES), help="The engine you deploy with.")
@click.option("--ort-library", "ort_libraries", multiple=True, metavar="PATH",
              help="An onnxruntime op library the deployment registers ('surgeon': surgeon's own); custom "
                   "nodes are checked with it (repeatable).")
@click.option("--ov-extension", "ov_extensions", multiple=True, metavar="PATH",
              help="An OpenVINO extension the deployment adds to its Core ('surgeon': surgeon's own); custom "
                   "nodes are checked with it (repeatable).")
@plugin_options(selection=False)
@report_option
def lint(model_path, target, ort_libraries, ov_extensions, plugins, prefer, report_path):
    """Say what TARGET will do with MODEL: one line per hazard, naming the node, what the engine
    will do and the fix. Exit 0 when clean, 1 when there are hazards.

    \b
    Example:
      surgeon lint model.onnx --target tensorrt
      surgeon lint model.fused.onnx --target onnxruntime --ort-library surgeon --report lint.json
      surgeon lint model.fused.onnx --target openvino --ov-extension surgeon
    """
    for given, option, engine in ((ort_libraries, "--ort-library", "onnxruntime"),
                                  (ov_extensions, "--ov-extension", "openvino")):
        if given and target != engine:
            raise click.UsageError(f"{option} is for --target {engine}, not {target}")
    report = lint_model(model_path, target, plugins=plugin_set(plugins, prefer=prefer), ort_libraries=ort_libraries,
                        ov_extensions=ov_extensions)
    if report_path != "-":
        click.echo(report.summary())
    write_report(report_path, report.to_json())
    if not report.clean:
        click.get_current_context().exit(1)
