"""The shipped samples the library tests fuse: the STN sample (its inputs drawn here), one with
dynamic dims, and a few more small ones (built models are in tests.builders)."""

from __future__ import annotations

import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STN = os.path.join(ROOT, "samples", "models", "stn_ts_opset20_2d.onnx")  # one affine_grid -> grid_sample chain
DYNAMIC = os.path.join(ROOT, "samples", "models", "affine_ts_opset20_2d_dynamic.onnx")  # dynamic input dims
# More samples surgeon fuses, small and runnable on drawn inputs: a worker going through them
# evicts every runner its cache held before.
SMALL = [os.path.join(ROOT, "samples", "models", name) for name in (
    "stn_ts_opset20_2d.onnx", "affine_ts_opset20_2d_static.onnx", "affine_ts_opset20_2d_dynamic.onnx",
    "affine_ts_opset20_3d.onnx", "affine_expand_ts_opset20.onnx", "displacement_ts_opset20.onnx")]


def stn_feeds(seed: int = 0) -> dict[str, np.ndarray]:
    """An image for the STN sample."""
    return {"x": np.random.default_rng(seed).random((1, 1, 28, 28), dtype=np.float32)}
