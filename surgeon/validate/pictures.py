"""Small pictures of image-like values (rank 4 or 5) for the HTML report: the original, the
rewritten and their absolute difference, reduced to at most ``SIDE`` pixels a side.

One picture per value: batch item 0; 3 channels as colour, else channel 0 (the difference is the
largest over all channels, so an error in any channel shows); the middle depth slice of a
volume. A sampling grid (``[N, H, W, 2]``, ``[N, D, H, W, 3]``: the last dim holds one coordinate
per spatial dim) is not an image with few columns: it gets one picture per coordinate, its x and
y (and z) maps over the output positions. The difference is reduced by taking the largest in each
block, so one wrong pixel of a large image still shows; the images by taking every k-th pixel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SIDE = 128  # pixels on the longer side, at most
REWRITE_PICTURES = 8  # rewrite checks pictured (failing ones first)


@dataclass
class Picture:
    name: str  # the value
    shape: list
    original: np.ndarray  # [h, w] or [h, w, 3], float32
    rewritten: np.ndarray
    difference: np.ndarray  # [h, w], the largest |rewritten - original| in each block
    note: str  # which slice, and how it was reduced


def is_grid(shape) -> bool:
    """``[N, H, W, 2]`` or ``[N, D, H, W, 3]``: a coordinate per spatial dim in the last axis."""
    return len(shape) in (4, 5) and shape[-1] == len(shape) - 2


def pictures(name: str, original, rewritten) -> list[Picture]:
    """The pictures of one value: a grid's coordinate maps, an image's picture, or none."""
    a, b = np.asarray(original), np.asarray(rewritten)
    if a.ndim not in (4, 5) or a.shape != b.shape or a.dtype.kind != "f" or a.size == 0:
        return []
    if not is_grid(a.shape):
        made = picture(name, a, b)
        return [made] if made is not None else []
    a, b, notes = a[0], b[0], []  # [(D,) H, W, k]
    if a.ndim == 4:
        depth = a.shape[0] // 2
        a, b = a[depth], b[depth]
        notes.append(f"depth slice {depth} of {original.shape[1]}")
    found = []
    for c, axis in enumerate("xyz"[:a.shape[-1]]):
        along = "WHD"[c]
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(a[..., c].astype(np.float32) - b[..., c].astype(np.float32))
        diff = np.where(np.isfinite(diff), diff, np.float32(np.inf))
        found.append(_reduced(name, list(np.shape(original)), a[..., c], b[..., c], diff,
                              [f"grid {axis} coordinate (along {along})", *notes]))
    return found


def picture(name: str, original, rewritten) -> Picture | None:
    """A Picture when both are float arrays of rank 4 or 5 and the same shape, else None."""
    a, b = np.asarray(original), np.asarray(rewritten)
    if a.ndim not in (4, 5) or a.shape != b.shape or a.dtype.kind != "f" or a.size == 0:
        return None
    notes = []
    a, b = a[0], b[0]  # [C, (D,) H, W]
    if a.ndim == 4:
        depth = a.shape[1] // 2
        a, b = a[:, depth], b[:, depth]
        notes.append(f"depth slice {depth} of {original.shape[2]}")
    channels = a.shape[0]
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: shown as the largest error below
        diff = np.abs(a.astype(np.float32) - b.astype(np.float32))
    diff = np.where(np.isfinite(diff), diff, np.float32(np.inf)).max(axis=0)  # any channel's error
    if channels == 3:
        a, b = np.moveaxis(a, 0, -1), np.moveaxis(b, 0, -1)
        notes.append("channels as RGB")
    else:
        a, b = a[0], b[0]
        if channels > 1:
            notes.append(f"channel 0 of {channels} (difference: all channels)")
    return _reduced(name, list(np.shape(original)), a, b, diff, notes)


def _reduced(name: str, shape: list, a: np.ndarray, b: np.ndarray, diff: np.ndarray, notes: list) -> Picture:
    """The Picture of two maps ([h, w] or [h, w, 3]) and their difference, at most SIDE a side."""
    step = max(1, math.ceil(max(a.shape[0], a.shape[1]) / SIDE))
    if step > 1:
        notes = [*notes, f"every {step}th pixel (difference: the largest of each {step}x{step} block)"]
    small_a = np.ascontiguousarray(a[::step, ::step], dtype=np.float32)
    small_b = np.ascontiguousarray(b[::step, ::step], dtype=np.float32)
    return Picture(name, shape, small_a, small_b, _block_max(diff, step), "item 0" + "".join(f", {n}" for n in notes))


def _block_max(values: np.ndarray, step: int) -> np.ndarray:
    if step == 1:
        return values.astype(np.float32)
    h, w = values.shape
    padded = np.zeros((math.ceil(h / step) * step, math.ceil(w / step) * step), np.float32)
    padded[:h, :w] = values
    return padded.reshape(padded.shape[0] // step, step, padded.shape[1] // step, step).max(axis=(1, 3))


def pictures_of(names, original: dict, rewritten: dict, renamed: dict | None = None,
                limit: int = 8) -> list[Picture]:
    """Pictures of the image-like values among ``names`` (``renamed``: the name each has in
    ``rewritten``), at most ``limit``."""
    found = []
    for name in names:
        if len(found) >= limit:
            break
        other = (renamed or {}).get(name, name)
        if name in original and other in rewritten:
            found.extend(pictures(name, original[name], rewritten[other])[:limit - len(found)])
    return found


def keep_rewrite_pictures(pairs, reference: dict, values: dict, renamed: dict) -> None:
    """Pictures for the rewrite checks in ``pairs`` ((region, check)): failing ones first, at most
    ``REWRITE_PICTURES`` checks."""
    ordered = sorted(pairs, key=lambda pair: pair[1].passed)
    for region, check in ordered[:REWRITE_PICTURES]:
        check.pictures = pictures_of(region.produces, reference, values, renamed)
