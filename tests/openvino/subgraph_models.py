"""Models whose affine samplers sit inside If branches and Loop bodies (opset 20, AffineGrid +
GridSample as torch exports them), for what surgeon fuses there to run in OpenVINO. No
producer_name: the first fields of the file are then ir_version and the opset imports, as with
onnx.helper-made models."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

from ..builders import onnx_model, value_info

IMAGE = [2, 3, 16, 12]
VOLUME = [2, 2, 6, 5, 4]


def _sampler(tag, x, theta, out, align=0, grid_out=None):
    """x -> AffineGrid(theta, Shape(x)) -> GridSample; ``grid_out`` also names the grid."""
    grid = grid_out or f"{tag}_grid"
    return [h.make_node("Shape", [x], [f"{tag}_size"], name=f"{tag}/Shape"),
            h.make_node("AffineGrid", [theta, f"{tag}_size"], [grid], name=f"{tag}/AffineGrid", align_corners=align),
            h.make_node("GridSample", [x, grid], [out], name=f"{tag}/GridSample", align_corners=align)]


def branches():
    """If(cond): then samples x at theta and also gives the grid (custom.ops::AffineGrid after
    fuse); else samples at -theta with align_corners=1 and gives theirs. Dims dynamic."""
    dims, grid_dims = ["N", 3, "H", "W"], ["N", "H", "W", 2]
    then = h.make_graph(_sampler("then", "x", "theta", "then_y", grid_out="then_grid"), "then", [],
                        [value_info("then_y", dims), value_info("then_grid", grid_dims)])
    other = [h.make_node("Neg", ["theta"], ["neg_theta"], name="else/Neg")]
    other += _sampler("else", "x", "neg_theta", "else_y", align=1, grid_out="else_grid")
    otherwise = h.make_graph(other, "else", [], [value_info("else_y", dims), value_info("else_grid", grid_dims)])
    node = h.make_node("If", ["cond"], ["y", "grid"], name="If", then_branch=then, else_branch=otherwise)
    return onnx_model([node], [value_info("x", dims), value_info("theta", ["N", 2, 3]), value_info("cond", [], T.BOOL)],
                  [value_info("y", dims), value_info("grid", grid_dims)], opset=20, ir_version=10, name="subgraphs")


def loop():
    """Loop(3): the image sampled again at theta each iteration; a weight outside the body makes
    the file carry an initializer (written by surgeon's streaming writer)."""
    dims = ["N", 3, 16, 12]
    body_nodes = [h.make_node("Identity", ["go"], ["go_on"], name="body/Identity")]
    body_nodes += _sampler("body", "acc", "theta", "sampled")
    body_nodes.append(h.make_node("Mul", ["sampled", "gain"], ["acc_next"], name="body/Mul"))
    body = h.make_graph(body_nodes, "body", [value_info("i", [], T.INT64), value_info("go", [], T.BOOL), value_info("acc", dims)],
                        [value_info("go_on", [], T.BOOL), value_info("acc_next", dims)])
    trips = h.make_tensor("trips", T.INT64, [], [3])
    gain = h.make_tensor("gain", T.FLOAT, [1], [1.5])
    node = h.make_node("Loop", ["trips", "", "x"], ["y"], name="Loop", body=body)
    return onnx_model([node], [value_info("x", dims), value_info("theta", ["N", 2, 3])], [value_info("y", dims)], [trips, gain], opset=20, ir_version=10, name="subgraphs")


def nested():
    """Loop(2) whose body holds an If sampling a volume (3-D) when cond is true."""
    dims = ["N", 2, 6, 5, 4]
    then = h.make_graph(_sampler("inner", "acc", "theta", "inner_y"), "then", [], [value_info("inner_y", dims)])
    otherwise = h.make_graph([h.make_node("Identity", ["acc"], ["kept"], name="inner/Identity")], "else", [],
                             [value_info("kept", dims)])
    body_nodes = [h.make_node("Identity", ["go"], ["go_on"], name="outer/Identity"),
                  h.make_node("If", ["cond"], ["acc_next"], name="inner/If", then_branch=then,
                              else_branch=otherwise)]
    body = h.make_graph(body_nodes, "body", [value_info("i", [], T.INT64), value_info("go", [], T.BOOL), value_info("acc", dims)],
                        [value_info("go_on", [], T.BOOL), value_info("acc_next", dims)])
    trips = h.make_tensor("trips", T.INT64, [], [2])
    node = h.make_node("Loop", ["trips", "", "x"], ["y"], name="Loop", body=body)
    return onnx_model([node], [value_info("x", dims), value_info("theta", ["N", 3, 4]), value_info("cond", [], T.BOOL)],
                  [value_info("y", dims)], [trips], opset=20, ir_version=10, name="subgraphs")


MODELS = {"branches": (branches, IMAGE), "loop": (loop, IMAGE), "nested": (nested, VOLUME)}


def feeds(name: str, cond: bool = True, seed: int = 0) -> dict:
    """Inputs for the model: an image or volume, thetas near the identity, the condition (0-d)."""
    build, shape = MODELS[name]
    rng = np.random.default_rng(seed)
    k = len(shape) - 2
    found = {"x": rng.standard_normal(shape).astype(np.float32),
             "theta": (np.eye(k, k + 1) + 0.2 * rng.standard_normal((shape[0], k, k + 1))).astype(np.float32)}
    if any(i.name == "cond" for i in build().graph.input):
        found["cond"] = np.array(cond)
    return found
