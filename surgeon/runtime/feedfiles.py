"""Inputs from files (``--input NAME=FILE.npy``, ``--inputs FILE.npz``), completed with seeded
random values for the inputs no file gives. Sizes are read from the file headers first, so the
memory limit refuses an oversized input before it is loaded."""

from __future__ import annotations

import math
import zipfile
from typing import Mapping, Sequence

import numpy as np

from ..errors import SurgeonError
from .inputs import describe, DEFAULT_MAX_BYTES, DEFAULT_SEED, check_memory, describe_floats, input_specs, random_inputs


def parse_input_spec(spec: str) -> tuple[str, str]:
    """``"x=x.npy"`` -> ``("x", "x.npy")``; the name ends at the first ``=``."""
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise SurgeonError(f"--input {spec!r}: expected NAME=FILE.npy (e.g. x=image.npy)")
    return name, path


def _npy_nbytes(path: str, label: str) -> int:
    try:
        header = np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError:
        raise SurgeonError(f"{label}: no such file") from None
    except IsADirectoryError:
        raise SurgeonError(f"{label}: is a folder, not a .npy file") from None
    except (ValueError, OSError, EOFError) as exc:
        raise SurgeonError(f"{label}: not a readable .npy file ({_first(exc)})") from None
    if not isinstance(header, np.ndarray):
        raise SurgeonError(f"{label}: holds several arrays; use --inputs for .npz files")
    return int(header.nbytes)


def _npz_nbytes(path: str) -> int:
    try:
        with zipfile.ZipFile(path) as z:
            return sum(info.file_size for info in z.infolist())
    except FileNotFoundError:
        raise SurgeonError(f"--inputs {path}: no such file") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise SurgeonError(f"--inputs {path}: not a readable .npz file ({_first(exc)})") from None


def _first(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def read_feed_files(inputs: Sequence[str] = (), npz: str | None = None,
                    max_bytes: int = DEFAULT_MAX_BYTES) -> dict[str, np.ndarray]:
    """Arrays named by ``--input`` specs and an ``--inputs`` archive; a name given twice is an error."""
    planned: list[tuple[str, str, str]] = []  # (name, path, label)
    for spec in inputs:
        name, path = parse_input_spec(spec)
        planned.append((name, path, f"--input {spec}"))
    names = [n for n, _, _ in planned]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise SurgeonError(f"input {dupes[0]!r} is given more than once")
    total = sum(_npy_nbytes(path, label) for _, path, label in planned)
    if npz:
        total += _npz_nbytes(npz)
    check_memory(total, max_bytes, "the given inputs")
    feeds: dict[str, np.ndarray] = {}
    for name, path, label in planned:
        try:
            feeds[name] = np.load(path, allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            raise SurgeonError(f"{label}: cannot read ({_first(exc)})") from None
    if npz:
        try:
            with np.load(npz, allow_pickle=False) as archive:
                for key in archive.files:
                    if key in feeds:
                        raise SurgeonError(f"input {key!r} is given both by --input and in {npz}")
                    feeds[key] = archive[key]
        except SurgeonError:
            raise
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
            raise SurgeonError(f"--inputs {npz}: cannot read ({_first(exc)})") from None
    return feeds


def complete_feeds(model, given: Mapping[str, np.ndarray], input_shapes: Mapping[str, Sequence[int]] | None = None,
                   seed: int = DEFAULT_SEED, max_bytes: int = DEFAULT_MAX_BYTES, drawers=None, avoid=None,
                   pinned=None) -> tuple[dict[str, np.ndarray], dict[str, str], list[str]]:
    """The given arrays plus seeded random values for every other input (``drawers``, ``avoid``,
    ``pinned``: see ``random_inputs``).

    Returns (feeds, where each input came from, notes for the user).
    """
    from ..io.load import load_model_proto

    loaded = load_model_proto(model)
    specs = input_specs(loaded.proto)
    known = [s.name for s in specs]
    for name in given:
        if name not in known:
            raise SurgeonError(f"the model has no input {name!r} (inputs: {', '.join(known) or 'none'})")
    for name in input_shapes or {}:
        if name in given:
            raise SurgeonError(f"--input-shape {name}: that input is given by a file; its shape comes from there")
    missing = [n for n in known if n not in given]
    feeds = dict(given)
    sources = {n: "file" for n in given}
    notes: list[str] = []
    if missing:
        given_bytes = sum(int(np.asarray(v).nbytes) for v in given.values())
        randoms, notes = random_inputs(loaded, input_shapes, seed=seed, max_bytes=max_bytes, names=missing,
                                       given_bytes=given_bytes, drawers=drawers, avoid=avoid, pinned=pinned)
        feeds.update(randoms)
        source = f"random, seed {seed}, {describe_floats()}"
        sources.update({n: source for n in missing})
        sources.update({n: f"random, seed {seed}, {describe(d)}" for n, d in (drawers or {}).items() if n in missing})
        shown = ", ".join(f"{n} {feeds[n].dtype.name}{list(feeds[n].shape)}" for n in missing)
        notes.insert(0, f"random inputs (seed {seed}, {describe_floats()}): {shown}")
    feeds = {n: feeds[n] for n in known}  # the model's order
    return feeds, sources, notes


def gib(value: float) -> int:
    """``--max-memory`` in GiB -> bytes."""
    if not value > 0 or math.isinf(value):
        raise SurgeonError(f"--max-memory must be a positive number of GiB, got {value}")
    return int(value * 2**30)

