"""Numpy reference kernel for ``custom.ops::FlowWarp`` (the definition is in README.md).

Readable rather than fast: the base grid, the flow scale, then torch's 2-D ``grid_sample``
(bilinear, nearest, bicubic; zeros, border, reflection padding), computed in float64.
"""

from __future__ import annotations

import numpy as np

MODES = ("bilinear", "nearest", "bicubic")
PADDING_MODES = ("zeros", "border", "reflection")
UNITS = ("normalized", "pixels")


def torch_mode(mode: str) -> str:
    """GridSample-20's mode names ("linear", "cubic") read as torch's ("bilinear", "bicubic")."""
    return {"linear": "bilinear", "cubic": "bicubic"}.get(mode, mode)


def base_axis(n: int, align_corners: bool) -> np.ndarray:
    """Normalised coordinates of ``n`` output pixel centres (torch's identity grid)."""
    if align_corners:
        return np.linspace(-1.0, 1.0, n)
    return (2.0 * np.arange(n) + 1.0) / n - 1.0


def base_grid(h: int, w: int, align_corners: bool) -> np.ndarray:
    """``[H, W, 2]`` identity grid, (x, y) last, as ``affine_grid`` of the identity gives it."""
    gx, gy = np.meshgrid(base_axis(w, align_corners), base_axis(h, align_corners))
    return np.stack([gx, gy], axis=-1)


def flow_scale(units: str, in_hw: tuple[int, int], align_corners: bool) -> tuple[float, float]:
    """(sx, sy) that turn one flow unit into normalised grid units."""
    if units == "normalized":
        return 1.0, 1.0
    h, w = in_hw
    if align_corners:
        return 2.0 / max(w - 1, 1), 2.0 / max(h - 1, 1)
    return 2.0 / w, 2.0 / h


def _unnormalise(coord, size, align_corners):
    return (coord + 1) / 2 * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    if twice_low == twice_high:
        return np.zeros_like(coord)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    coord = np.abs(coord - low)
    extra = np.fmod(coord, span)
    flips = np.floor(coord / span)
    return np.where(flips % 2 == 0, extra + low, span - extra + low)


def _pad(coord, size, padding_mode, align_corners):
    """torch's compute_coordinates: where border and reflection padding move a coordinate."""
    if padding_mode == "border":
        return np.clip(coord, 0, size - 1)
    if padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
        return np.clip(coord, 0, size - 1)
    return coord


def _taps(image, iy, ix):
    """image[n, :, iy, ix] for integer tap positions, zero outside: [N, C, Ho, Wo]."""
    n, c, h, w = image.shape
    inside = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < w)
    batch = np.arange(n).reshape(n, 1, 1)
    values = image[batch, :, np.clip(iy, 0, h - 1), np.clip(ix, 0, w - 1)]  # [N, Ho, Wo, C]
    return np.moveaxis(values * inside[..., None], -1, 1)


def _cubic_weights(t, a=-0.75):
    near = lambda d: ((a + 2) * d - (a + 3)) * d * d + 1  # |d| <= 1
    far = lambda d: ((a * d - 5 * a) * d + 8 * a) * d - 4 * a  # 1 < |d| < 2
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample(image, grid, mode="bilinear", padding_mode="zeros", align_corners=False):
    """torch.nn.functional.grid_sample for 4-D input, in float64."""
    image = np.asarray(image, dtype=np.float64)
    grid = np.asarray(grid, dtype=np.float64)
    _, _, h, w = image.shape
    x = _unnormalise(grid[..., 0], w, align_corners)
    y = _unnormalise(grid[..., 1], h, align_corners)
    if mode == "bicubic":  # padding applies to each tap, not to the coordinate
        x0, y0 = np.floor(x), np.floor(y)
        wx, wy = _cubic_weights(x - x0), _cubic_weights(y - y0)
        out = 0.0
        for j in range(4):
            ty = _pad(y0 - 1 + j, h, padding_mode, align_corners).astype(np.int64)
            for i in range(4):
                tx = _pad(x0 - 1 + i, w, padding_mode, align_corners).astype(np.int64)
                out = out + _taps(image, ty, tx) * (wy[j] * wx[i])[:, None]
        return out
    x, y = _pad(x, w, padding_mode, align_corners), _pad(y, h, padding_mode, align_corners)
    if mode == "nearest":  # round half to even, as torch's nearbyint
        return _taps(image, np.rint(y).astype(np.int64), np.rint(x).astype(np.int64))
    x0, y0 = np.floor(x), np.floor(y)
    fx, fy = (x - x0)[:, None], (y - y0)[:, None]
    x0, y0 = x0.astype(np.int64), y0.astype(np.int64)
    return (_taps(image, y0, x0) * (1 - fx) * (1 - fy) + _taps(image, y0, x0 + 1) * fx * (1 - fy)
            + _taps(image, y0 + 1, x0) * (1 - fx) * fy + _taps(image, y0 + 1, x0 + 1) * fx * fy)


def flow_warp(image, flow, align_corners=False, mode="bilinear", padding_mode="zeros", units="normalized"):
    """Y = grid_sample(X, base_grid + scale * flow.permute(0, 2, 3, 1)); output in X's dtype."""
    mode = torch_mode(mode)
    if mode not in MODES or padding_mode not in PADDING_MODES or units not in UNITS:
        raise ValueError(f"FlowWarp: unsupported mode={mode!r}, padding_mode={padding_mode!r}, flow_units={units!r}")
    image, flow = np.asarray(image), np.asarray(flow)
    if image.ndim != 4 or flow.ndim != 4 or flow.shape[1] != 2:
        raise ValueError(f"FlowWarp: X must be [N,C,H,W] and flow [N,2,H,W], got {image.shape} and {flow.shape}")
    h, w = flow.shape[2:]
    sx, sy = flow_scale(units, image.shape[2:], bool(align_corners))
    offset = np.moveaxis(flow.astype(np.float64), 1, -1) * np.array([sx, sy])
    grid = base_grid(h, w, bool(align_corners))[None] + offset
    return grid_sample(image, grid, mode, padding_mode, bool(align_corners)).astype(image.dtype)


def flow_warp_kernel(inputs, attrs, device="cpu"):
    """The kernel surgeon's runtime calls: ``(inputs, attributes) -> [Y]``."""
    image, flow = inputs[0], inputs[1]
    return [flow_warp(image, flow,
                      align_corners=int(attrs.get("align_corners", 0)),
                      mode=attrs.get("mode", "bilinear"),
                      padding_mode=attrs.get("padding_mode", "zeros"),
                      units=attrs.get("flow_units", "normalized"))]
