"""The two ops as surgeon's runtime calls them for one node,
``fn(inputs, attrs, device="cpu") -> [outputs]``, and ``CUSTOM_OPS``, what the built-in patterns
register. The kernels wrap ``surgeon_ops.kernels`` (imported on first call) and turn the optional
``size`` input or the ``output_size`` attribute into torch's ``size`` argument."""

from __future__ import annotations

import numpy as np

from surgeon import CustomOp


def _size(theta: np.ndarray, size_input, attrs: dict, channels: int) -> tuple[int, ...]:
    if size_input is not None:
        return tuple(int(s) for s in np.asarray(size_input).reshape(-1))
    spatial = attrs.get("output_size")
    if not spatial:
        raise ValueError("custom.ops node has neither a size input nor an output_size attribute")
    return (int(theta.shape[0]), int(channels), *(int(s) for s in spatial))


def _optional(inputs: list, i: int):
    return inputs[i] if len(inputs) > i else None


def fused_grid_sample(inputs: list, attrs: dict, device: str = "cpu") -> list:
    from . import kernels

    x, theta = inputs[0], inputs[1]
    size = _size(theta, _optional(inputs, 2), attrs, x.shape[1])
    return [kernels.fused_grid_sample(x, theta, size, mode=attrs.get("mode", "bilinear"),
                                      padding_mode=attrs.get("padding_mode", "zeros"),
                                      align_corners=bool(attrs.get("align_corners", 0)))]


def affine_grid(inputs: list, attrs: dict, device: str = "cpu") -> list:
    from . import kernels

    theta = inputs[0]
    size = _size(theta, _optional(inputs, 1), attrs, 1)
    return [kernels.affine_grid(theta, size, align_corners=bool(attrs.get("align_corners", 0)))]


DOMAIN = "custom.ops"

CUSTOM_OPS = [
    CustomOp(DOMAIN, "FusedGridSample", kernel=fused_grid_sample),
    CustomOp(DOMAIN, "AffineGrid", kernel=affine_grid),
]
