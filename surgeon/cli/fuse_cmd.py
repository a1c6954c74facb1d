from __future__ import annotations

import click

from .. import api
from . import cli, warn
from .options import parse_shapes, pattern_options, shape_options


@cli.command()
@click.argument("input_path", metavar="IN", type=click.Path(dir_okay=True))
@click.argument("output_path", metavar="OUT", type=click.Path(dir_okay=True))
@pattern_options
@shape_options
@click.option("--target", metavar="NAME", help="Ask patterns for another output form (e.g. affine-grid).")
@click.option("--dry-run", is_flag=True, help="Report what would change; write nothing.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Write the report as JSON.")
@click.option("--external-data/--no-external-data", default=None,
              help="Write weights to OUT.data (default: as the input; on past 2 GB).")
@click.option("--validate", "validate", is_flag=True,
              help="Check the result against IN on the reference kernels; a failure writes nothing.")
@click.option("--force", is_flag=True, help="With --validate: write OUT even when validation fails.")
@click.option("--atol", type=float, default=None, help="With --validate: absolute tolerance.")
@click.option("--rtol", type=float, default=None, help="With --validate: relative tolerance.")
def fuse(input_path, output_path, only, skip, plugins, input_shapes, target, dry_run, report_path, external_data,
         validate, force, atol, rtol):
    """Rewrite every matched chain of IN and write OUT.

    \b
    Example:
      surgeon fuse stn.onnx stn.fused.onnx --validate --report fuse.json
      surgeon fuse big.onnx big.fused.onnx --input-shape x:1,3,512,512 --external-data
    """
    result = api.fuse(input_path, None if dry_run else output_path, only=only, skip=skip, plugins=plugins,
                      target=target, input_shapes=parse_shapes(input_shapes), dry_run=dry_run,
                      external_data=external_data, validate=validate, force=force, atol=atol, rtol=rtol,
                      keep_model=False)
    for w in result.warnings:
        warn(w)
    click.echo(result.report.summary())
    if result.validation is not None:
        click.echo(result.validation.summary())
        if not result.validation.passed:
            warn("validation failed; written anyway (--force)")
    if report_path:
        _write_text(report_path, result.report.to_json())
    if not dry_run:
        click.echo(f"wrote {output_path}")


def _write_text(path: str, text: str) -> None:
    from ..modelio import write_text_atomic

    write_text_atomic(path, text)
