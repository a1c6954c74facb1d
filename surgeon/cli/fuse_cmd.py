from __future__ import annotations

import click

from .. import api
from . import cli, warn
from .feeds import feed_options, gather_feeds, say_notes
from .options import (check_target, html_option, parse_shapes, plugin_options, plugin_set, quiet_option,
                      report_option, say_html, shape_options, target_option, write_report)


@cli.command()
@click.argument("input_path", metavar="IN", type=click.Path(dir_okay=True))
@click.argument("output_path", metavar="OUT", type=click.Path(dir_okay=True))
@plugin_options()
@shape_options
@target_option
@click.option("--dry-run", is_flag=True, help="Report what would change; write nothing.")
@click.option("--functions", is_flag=True,
              help="Add model-local function bodies for the custom ops: onnxruntime and onnx.reference "
                   "then run OUT with no op library; engines with a plugin still see one node.")
@click.option("--raise-opset", is_flag=True,
              help="With --functions: where a body needs a later opset than IN's (16 for GridSample, 20 for "
                   "volumes), convert the model to that opset first (without it, that is an error).")
@report_option
@html_option
@quiet_option
@click.option("--external-data/--no-external-data", default=None,
              help="Write weights to OUT.data (default: as the input; on past 2 GB).")
@click.option("--validate", "validate", is_flag=True,
              help="Check the result against IN on the reference kernels; a failure writes nothing.")
@feed_options
@click.option("--force", is_flag=True, help="Write OUT even when validation fails (--validate) or it has "
              "hazards for the engine --target names (tensorrt, onnxruntime, openvino).")
@click.option("--atol", type=float, default=None, help="With --validate: absolute tolerance.")
@click.option("--rtol", type=float, default=None, help="With --validate: relative tolerance.")
@click.option("--max-mismatch", type=float, default=0.0, metavar="FRACTION",
              help="With --validate: fraction of elements allowed outside tolerance that rounding does not explain.")
def fuse(input_path, output_path, only, skip, plugins, prefer, input_shapes, target, dry_run, functions, raise_opset,
         report_path,
         html_path, external_data, validate, input_specs, inputs_npz, seed, max_memory, force, atol, rtol, max_mismatch):
    """Rewrite every matched chain of IN and write OUT.

    \b
    Example:
      surgeon fuse stn.onnx stn.fused.onnx --validate --report fuse.json
      surgeon fuse big.onnx big.fused.onnx --input-shape x:1,3,512,512 --external-data
    """
    shapes = parse_shapes(input_shapes)
    chosen = plugin_set(plugins, only, skip, prefer)
    check_target(target, chosen)
    check, notes = False, []
    if validate and not dry_run:
        feeds = None
        if input_specs or inputs_npz:
            feeds, _, _, notes = gather_feeds(input_path, input_specs, inputs_npz, shapes, seed, max_memory)
        check = api.ValidateOptions(atol, rtol, max_mismatch, seed, feeds)
    with_model = report_path not in (None, "-") and not dry_run  # the model and its report: both or neither
    result = api.fuse_model(input_path, None if dry_run else output_path, plugins=chosen, target=target,
                            input_shapes=shapes, validate=check, external_data=external_data,
                            keep_model=False, dry_run=dry_run, functions=functions, raise_opset=raise_opset,
                            report_path=report_path if with_model else None, html_path=html_path, force=force)
    say_notes(notes)
    for line in result.warnings[len(chosen.warnings):]:  # (plugin-loading warnings were given already)
        warn(line)
    to_stdout = report_path == "-"  # then stdout holds the JSON alone
    if not to_stdout:
        click.echo(result.report.summary())
        if result.validation is not None:
            click.echo(result.validation.summary())
    if result.validation is not None and not result.validation.passed:
        warn("validation failed; written anyway (--force)")
    for line in result.hazards:  # a dry run, or --force: the engine's hazards as warnings
        warn(f"{target} hazard: {line}")
    if not with_model:
        write_report(report_path, result.report.to_json())
    if not dry_run and not to_stdout:
        click.echo(f"wrote {output_path}")
    say_html(html_path, report_path)
