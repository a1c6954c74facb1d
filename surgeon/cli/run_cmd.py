from __future__ import annotations

import click
import numpy as np

from . import cli, warn
from .options import parse_shapes


def feed_options(f):
    """--input/--inputs/--input-shape/--seed/--max-memory: where inputs come from (shared with validate)."""
    f = click.option("--max-memory", "max_memory", type=float, default=4.0, show_default=True, metavar="GiB",
                     help="Refuse inputs needing more memory than this.")(f)
    f = click.option("--seed", type=int, default=0, show_default=True,
                     help="Seed for the random inputs made for inputs no file gives.")(f)
    f = click.option("--input-shape", "input_shapes", multiple=True, metavar="NAME:D1,D2,...",
                     help="Shape of a random input with dynamic dims (repeatable; unset dynamic dims are 1).")(f)
    f = click.option("--inputs", "inputs_npz", type=click.Path(dir_okay=False), metavar="FILE.npz",
                     help="Inputs by name from one .npz archive.")(f)
    f = click.option("--input", "input_specs", multiple=True, metavar="NAME=FILE.npy",
                     help="One input from a .npy file (repeatable). Inputs not given are random.")(f)
    return f


def runtime_options(f):
    f = click.option("--plugin", "plugins", multiple=True, metavar="MODULE:NAME",
                     help="Load a pattern (and its reference kernels) that is not installed (repeatable).")(f)
    f = click.option("--device", type=click.Choice(["cpu", "cuda"]), default="cpu", show_default=True,
                     help="Where standard parts and kernels run.")(f)
    return f


def gather_feeds(model, input_specs, inputs_npz, input_shapes, seed, max_memory):
    """Feeds for ``model`` from the options; says on stderr what was made up."""
    from ..runtime.feedfiles import complete_feeds, gib, read_feed_files

    max_bytes = gib(max_memory)
    given = read_feed_files(input_specs, inputs_npz, max_bytes)
    feeds, sources, notes = complete_feeds(model, given, parse_shapes(input_shapes), seed, max_bytes)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    return feeds, sources, max_bytes


def plugin_warnings() -> None:
    from ..runtime.registry import plugin_warnings as pending

    for w in pending():
        warn(w)


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
@runtime_options
@click.option("--output-dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Write each output to DIR/<name>.npy (created when missing).")
def run(model_path, input_specs, inputs_npz, input_shapes, seed, max_memory, device, plugins, output_dir):
    """Run MODEL, custom.ops nodes included (on their reference kernels), and print its outputs.

    \b
    Example:
      surgeon run stn.fused.onnx --input x=image.npy --output-dir out/
      surgeon run stn.fused.onnx --input-shape x:1,3,256,256   # random inputs, seed 0
    """
    from ..runtime import get_runner
    from ..runtime.outfiles import write_outputs

    runner = get_runner(model_path, device, plugins)  # a bad model or device fails before inputs are made
    feeds, _, _ = gather_feeds(runner.loaded, input_specs, inputs_npz, input_shapes, seed, max_memory)
    values = runner.run(feeds)
    plugin_warnings()
    paths = write_outputs(output_dir, values) if output_dir else {}
    for name, value in values.items():
        where = f" -> {paths[name]}" if name in paths else ""
        click.echo(f"{name}: {value.dtype.name}{list(value.shape)}{_range(value)}{where}")
