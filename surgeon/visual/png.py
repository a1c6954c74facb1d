"""Arrays to PNG data URIs (zlib and the PNG chunk layout; no imaging library), with the two colour
scales the report uses: grey (or the image's own colours) for values, and a dark-to-bright heat
scale for differences."""

from __future__ import annotations

import base64
import struct
import zlib

import numpy as np

# Anchor colours of the heat scale, evenly spaced from 0 to the largest difference: black, deep
# purple, red, orange, pale yellow (dark means agreement, bright means error).
HEAT = np.array([[0, 0, 0], [72, 20, 110], [190, 40, 70], [245, 140, 30], [252, 250, 200]], np.float32)
NAN = np.array([0, 200, 255], np.uint8)  # NaN/Inf: cyan, which the scales never give


def encode(rgb: np.ndarray) -> bytes:
    """An [h, w, 3] or [h, w] uint8 array as PNG bytes."""
    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    h, w = rgb.shape[:2]
    colour = 2 if rgb.ndim == 3 else 0
    rows = rgb.reshape(h, -1)
    raw = np.concatenate([np.zeros((h, 1), np.uint8), rows], axis=1).tobytes()  # filter 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def data_uri(rgb: np.ndarray) -> str:
    return "data:image/png;base64," + base64.b64encode(encode(rgb)).decode("ascii")


def finite_range(*arrays: np.ndarray) -> tuple[float, float]:
    values = [a[np.isfinite(a)] for a in arrays]
    values = [v for v in values if v.size]
    if not values:
        return 0.0, 0.0
    return float(min(v.min() for v in values)), float(max(v.max() for v in values))


def values_image(array: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Grey (or RGB for [h, w, 3]) from ``lo`` (black) to ``hi`` (white); NaN/Inf cyan."""
    scale = (array - lo) / (hi - lo) if hi > lo else np.zeros_like(array)
    out = (np.clip(np.nan_to_num(scale, nan=0.0, posinf=1.0, neginf=0.0), 0, 1) * 255 + 0.5).astype(np.uint8)
    bad = ~np.isfinite(array)
    if out.ndim == 2:
        out = np.repeat(out[:, :, None], 3, axis=2)
        bad = bad[:, :, None].repeat(3, axis=2)
    else:
        bad = np.any(bad, axis=2, keepdims=True).repeat(3, axis=2)
    return np.where(bad, NAN, out)


def heat_image(diff: np.ndarray, hi: float) -> np.ndarray:
    """The heat scale from 0 to ``hi``; NaN/Inf cyan."""
    scale = np.clip(np.nan_to_num(diff / hi if hi > 0 else np.zeros_like(diff), nan=0.0, posinf=1.0), 0, 1)
    pos = scale * (len(HEAT) - 1)
    low = np.minimum(pos.astype(np.int64), len(HEAT) - 2)
    frac = (pos - low)[..., None]
    rgb = HEAT[low] * (1 - frac) + HEAT[low + 1] * frac
    out = (rgb + 0.5).astype(np.uint8)
    return np.where(~np.isfinite(diff)[..., None], NAN, out)


def bar(kind: str, width: int = 160, height: int = 10) -> str:
    """The colour scale as a horizontal bar (``kind``: "values" or "heat")."""
    ramp = np.linspace(0, 1, width, dtype=np.float32)[None, :].repeat(height, axis=0)
    rgb = heat_image(ramp, 1.0) if kind == "heat" else values_image(ramp, 0.0, 1.0)
    return data_uri(rgb)
