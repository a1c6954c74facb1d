"""Small models the library tests share: the shipped STN sample, as it ships and with its weights
in external data (optionally with one large weight beside them)."""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STN = os.path.join(ROOT, "samples", "models", "stn_ts_opset20_2d.onnx")  # one affine_grid -> grid_sample chain
DYNAMIC = os.path.join(ROOT, "samples", "models", "affine_ts_opset20_2d_dynamic.onnx")  # dynamic input dims
# More samples surgeon fuses, small and runnable on drawn inputs: a worker going through them
# evicts every runner its cache held before.
SMALL = [os.path.join(ROOT, "samples", "models", name) for name in (
    "stn_ts_opset20_2d.onnx", "affine_ts_opset20_2d_static.onnx", "affine_ts_opset20_2d_dynamic.onnx",
    "affine_ts_opset20_3d.onnx", "affine_expand_ts_opset20.onnx", "displacement_ts_opset20.onnx")]


def stn_feeds(seed: int = 0) -> dict[str, np.ndarray]:
    return {"x": np.random.default_rng(seed).random((1, 1, 28, 28), dtype=np.float32)}


def external_stn(folder, big_elements: int = 0) -> str:
    """The STN sample saved in ``folder`` with every weight in ``stn.onnx.data``; ``big_elements``
    adds a float32 weight of that many elements, read by one more output (``w_sum``)."""
    model = onnx.load(STN)
    if big_elements:
        weight = numpy_helper.from_array(np.full(big_elements, 0.5, np.float32), "big_weight")
        model.graph.initializer.append(weight)
        model.graph.node.append(helper.make_node("ReduceSum", ["big_weight"], ["w_sum"], name="w_sum", keepdims=0))
        model.graph.output.append(helper.make_tensor_value_info("w_sum", TensorProto.FLOAT, []))
    path = os.path.join(os.fspath(folder), "stn.onnx")
    onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="stn.onnx.data",
              size_threshold=0)
    return path


def external_tensors(model: onnx.ModelProto) -> list[str]:
    return [t.name for t in model.graph.initializer if t.data_location == TensorProto.EXTERNAL]
