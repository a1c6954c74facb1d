from __future__ import annotations

import click

from ..errors import ValidationFailed
from . import cli
from .feeds import feed_options, gather_feeds, say_notes
from .options import (html_option, parse_shapes, plugin_options, plugin_set, quiet_option, report_option, say_html,
                      write_report)
from .run_cmd import device_option, engine_option, random_shape_option


@cli.command()
@click.argument("original_path", metavar="ORIGINAL", type=click.Path(dir_okay=True))
@click.argument("rewritten_path", metavar="REWRITTEN", type=click.Path(dir_okay=True))
@feed_options
@random_shape_option
@device_option
@engine_option
@plugin_options(selection=False)
@click.option("--atol", type=float, default=None,
              help="Absolute tolerance for every comparison (default: each rewrite to exact float math, "
                   "end to end by dtype, float32 1e-3).")
@click.option("--rtol", type=float, default=None, help="Relative tolerance (default: as --atol says).")
@click.option("--max-mismatch", type=float, default=0.0, show_default=True, metavar="FRACTION",
              help="Fraction of elements allowed outside tolerance that rounding does not explain.")
@report_option
@html_option
@quiet_option
def validate(original_path, rewritten_path, input_specs, inputs_npz, input_shapes, seed, max_memory,
             device, engine, plugins, prefer, atol, rtol, max_mismatch, report_path, html_path):
    """Check that REWRITTEN computes what ORIGINAL computes: every rewrite (whatever ops it wrote) on
    the original's own activations, and every output end to end; both models run as written (no
    graph optimisation). Exits 1 when anything fails.

    \b
    Example:
      surgeon validate stn.onnx stn.fused.onnx
      surgeon validate stn.onnx stn.fused.onnx --inputs batch.npz --atol 1e-4 --report check.json
    """
    from ..runtime import get_runner
    from ..validate.check import validate as run_validation

    from ..validate.draws import input_drawers
    from ..validate.regions import pinned_sizes, undefined_sizes

    from .. import progress

    found = plugin_set(plugins, prefer=prefer)
    with progress.working("loading the models"):
        original = get_runner(original_path, found, device, engine)
        rewritten = get_runner(rewritten_path, found, device, engine).proto
        drawers = input_drawers(rewritten, found)
    feeds, sources, max_bytes, notes = gather_feeds(original.loaded, input_specs, inputs_npz,
                                                    parse_shapes(input_shapes), seed, max_memory, drawers,
                                                    undefined_sizes(rewritten), pinned_sizes(rewritten))
    report = run_validation(original_path, rewritten_path, feeds, atol=atol, rtol=rtol, device=device,
                            max_bytes=max_bytes, max_mismatch=max_mismatch, plugins=found, engine=engine)
    say_notes(notes)
    for entry in report.inputs:
        entry["source"] = sources.get(entry["name"], entry["source"])
    if report_path != "-":
        click.echo(report.summary())
    write_report(report_path, report.to_json())
    if html_path:  # failed or not: a failure is what the pictures are for
        from ..visual import write as write_html

        write_html(html_path, validation=report, inputs=[original_path, rewritten_path])
        say_html(html_path, report_path)
    if not report.passed:
        failures = report.failures()
        first = failures[0] if failures else "no output was compared"
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        raise ValidationFailed(f"validation failed: {first}{more}", report=report)
