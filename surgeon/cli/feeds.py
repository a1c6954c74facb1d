"""Where inputs come from, for the commands that run models (run, validate, fuse --validate)."""

from __future__ import annotations

import click


def feed_options(f):
    """--input/--inputs/--seed/--max-memory (the commands add --input-shape themselves)."""
    f = click.option("--max-memory", "max_memory", type=float, default=4.0, show_default=True, metavar="GiB",
                     help="Refuse inputs needing more memory than this.")(f)
    f = click.option("--seed", type=int, default=0, show_default=True,
                     help="Seed for the random inputs made for inputs no file gives.")(f)
    f = click.option("--inputs", "inputs_npz", type=click.Path(dir_okay=False), metavar="FILE.npz",
                     help="Inputs by name from one .npz archive.")(f)
    f = click.option("--input", "input_specs", multiple=True, metavar="NAME=FILE.npy",
                     help="One input from a .npy file (repeatable). Inputs not given are random.")(f)
    return f


def gather_feeds(model, input_specs, inputs_npz, input_shapes: dict, seed, max_memory, drawers=None, avoid=None,
                 pinned=None):
    """Feeds for ``model`` from the options, and notes saying what was made up: the caller
    prints them (``say_notes``) once the run has worked, so an error stays the only line."""
    from ..runtime.feedfiles import complete_feeds, gib, read_feed_files

    max_bytes = gib(max_memory)
    given = read_feed_files(input_specs, inputs_npz, max_bytes)
    feeds, sources, notes = complete_feeds(model, given, input_shapes, seed, max_bytes, drawers, avoid, pinned)
    return feeds, sources, max_bytes, notes


def say_notes(notes) -> None:
    for note in notes:
        click.echo(f"note: {note}", err=True)
