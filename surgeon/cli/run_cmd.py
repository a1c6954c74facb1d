from __future__ import annotations

import click
import numpy as np

from . import cli
from .feeds import feed_options, gather_feeds, say_notes
from .options import parse_shapes, plugin_options, plugin_set, quiet_option


def device_option(f):
    return click.option("--device", type=click.Choice(["cpu", "cuda"]), default="cpu", show_default=True,
                        help="Where standard parts and kernels run.")(f)


def engine_option(f):
    return click.option("--engine", type=click.Choice(["auto", "ort", "reference", "openvino"]), default="auto",
                        show_default=True,
                        help="What runs custom ops: the plugins' onnxruntime op libraries (ort), their reference "
                             "kernels (reference), or libraries where available (auto); openvino: the whole model "
                             "in OpenVINO (CPU, float32), custom ops on the plugins' extensions.")(f)


def random_shape_option(f):
    return click.option("--input-shape", "input_shapes", multiple=True, metavar="NAME:D1,D2,...",
                        help="Shape of a random input with dynamic dims (repeatable; unset dynamic dims are 1).")(f)


def _range(value: np.ndarray) -> str:
    if value.size == 0 or value.dtype.kind not in "biuf":
        return ""
    finite = value[np.isfinite(value)] if value.dtype.kind == "f" else value
    bad = value.size - finite.size
    text = f" min {finite.min():.6g} max {finite.max():.6g}" if finite.size else " (no finite values)"
    return text + (f" ({bad} NaN/Inf)" if bad else "")


@cli.command()
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=True))
@feed_options
@random_shape_option
@device_option
@engine_option
@quiet_option
@plugin_options(selection=False)
@click.option("--output-dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Write each output to DIR/<name>.npy (created when missing).")
def run(model_path, input_specs, inputs_npz, input_shapes, seed, max_memory, device, engine, plugins, prefer,
        output_dir):
    """Run MODEL, custom ops included (on the plugins' op libraries or reference kernels), and
    print each output's type, shape and range; --output-dir DIR also writes each as DIR/<name>.npy.

    \b
    Example:
      surgeon run stn.fused.onnx --input x=image.npy --output-dir out/
      surgeon run stn.fused.onnx --input-shape x:1,3,256,256   # random inputs, seed 0
    """
    from ..runtime import get_runner
    from ..runtime.outfiles import write_outputs

    runner = get_runner(model_path, plugin_set(plugins, prefer=prefer), device, engine)  # bad input fails first
    feeds, _, _, notes = gather_feeds(runner.loaded, input_specs, inputs_npz, parse_shapes(input_shapes), seed,
                                      max_memory)
    values = runner.run(feeds)
    say_notes(notes)
    for note in runner.engine.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(f"note: engine: {runner.engine.describe()}", err=True)
    paths = write_outputs(output_dir, values) if output_dir else {}
    if not output_dir:
        click.echo("note: outputs not written (--output-dir DIR writes each as DIR/<name>.npy)", err=True)
    for name, value in values.items():
        where = f" -> {paths[name]}" if name in paths else ""
        click.echo(f"{name}: {value.dtype.name}{list(value.shape)}{_range(value)}{where}")
