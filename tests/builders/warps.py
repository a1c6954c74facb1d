"""Native AffineGrid -> GridSample models and their rewritten twins (one custom.ops node in the
warp's place), the inputs they run on, and the twins spoilt on purpose."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .graph import CUSTOM_OPS, FLOAT, onnx_model, value_info

ONNX_MODE = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}
# theta that rotates, scales and shifts: many samples fall outside, so padding matters
WARP_THETA = np.array([[[0.9, 0.3, 0.4], [-0.2, 1.1, -0.3]]], np.float32)
WEIGHTED_WARP_HW = (8, 8)  # weighted_warp_model's image


def warp_model(nodes, inputs, outputs, inits=(), custom=True, opset=20):
    """A model at ``opset`` (IR 10) that imports custom.ops when ``custom``."""
    return onnx_model(nodes, inputs, outputs, inits, opset=opset, domains=CUSTOM_OPS if custom else None,
                      ir_version=10)


def fused_grid_sample_node(x, theta, y, name, output_size, align_corners=0, mode="bilinear", padding_mode="zeros",
                           pattern="affine-grid", size=None):
    """A custom.ops::FusedGridSample node as surgeon writes it (size as an attribute, or an input)."""
    node = helper.make_node("FusedGridSample", [x, theta] + ([size] if size else []), [y], name=name,
                            domain="custom.ops", align_corners=align_corners, mode=mode, padding_mode=padding_mode)
    if size is None:
        node.attribute.append(helper.make_attribute("output_size", list(output_size)))
    entry = node.metadata_props.add()
    entry.key, entry.value = "surgeon.pattern", pattern
    return node


def warp_pair(n=1, c=3, h=32, w=32, out=None, align_corners=0, mode="bilinear", padding_mode="zeros"):
    """original: AffineGrid + GridSample (opset 20); rewritten: one FusedGridSample. Inputs x, theta."""
    oh, ow = out or (h, w)
    size = numpy_helper.from_array(np.array([n, c, oh, ow], np.int64), "size")
    orig = warp_model([
        helper.make_node("AffineGrid", ["theta", "size"], ["grid"], name="ag", align_corners=align_corners),
        helper.make_node("GridSample", ["x", "grid"], ["y"], name="gs", align_corners=align_corners,
                         mode=ONNX_MODE[mode], padding_mode=padding_mode),
    ], [value_info("x", [n, c, h, w]), value_info("theta", [n, 2, 3])], [value_info("y", [n, c, oh, ow])], [size],
        custom=False)
    rew = warp_model([fused_grid_sample_node("x", "theta", "y", "affine-grid/FusedGridSample", (oh, ow), align_corners,
                                             mode, padding_mode)],
                     [value_info("x", [n, c, h, w]), value_info("theta", [n, 2, 3])], [value_info("y", [n, c, oh, ow])])
    return orig, rew


def warp_feeds(h=32, w=32, seed=0):
    """warp_pair's inputs: an image and ``WARP_THETA``."""
    return {"x": np.random.default_rng(seed).random((1, 3, h, w), dtype=np.float32), "theta": WARP_THETA}


def swap_theta_rows(rew):
    """Feed the kernel theta with its two rows swapped (a Gather the 'rewrite' added)."""
    perm = numpy_helper.from_array(np.array([1, 0], np.int64), "perm_swap")
    gather = helper.make_node("Gather", ["theta", "perm_swap"], ["theta_swapped"], name="swap", axis=1)
    fused = rew.graph.node[0]
    fused.input[1] = "theta_swapped"
    rew.graph.node.insert(0, gather)
    rew.graph.initializer.append(perm)
    return rew


# warp_pair's rewritten twin, each wrong in one way
TAMPERED_WARPS = {
    "align_corners": lambda: warp_pair(align_corners=1)[1],
    "padding_mode": lambda: warp_pair(padding_mode="border")[1],
    "padding_reflection": lambda: warp_pair(padding_mode="reflection")[1],
    "theta_rows_swapped": lambda: swap_theta_rows(warp_pair()[1]),
    "output_size": lambda: warp_pair(out=(16, 16))[1],
}


def with_align_corners_flipped(fused: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of a fused model with every custom node's align_corners flipped: a wrong warp."""
    bad = onnx.ModelProto()
    bad.CopyFrom(fused)
    for node in bad.graph.node:
        for attr in node.attribute:
            if node.domain == "custom.ops" and attr.name == "align_corners":
                attr.i = 1 - attr.i
    return bad


def if_warp_model(custom: bool):
    """y = warp(x) if cond else x * 3, the warp written natively or as FusedGridSample."""
    size = numpy_helper.from_array(np.array([1, 3, 16, 16], np.int64), "size")
    if custom:
        then_nodes = [fused_grid_sample_node("x", "theta", "t_out", "warp", (16, 16))]
        then_inits = []
    else:
        then_nodes = [helper.make_node("AffineGrid", ["theta", "size"], ["grid"]),
                      helper.make_node("GridSample", ["x", "grid"], ["t_out"], mode="linear")]
        then_inits = [size]
    then_g = helper.make_graph(then_nodes, "then", [], [value_info("t_out", None)], then_inits)
    three = numpy_helper.from_array(np.array(3.0, np.float32), "three")
    else_g = helper.make_graph([helper.make_node("Mul", ["x", "three"], ["e_out"])], "else", [],
                               [value_info("e_out", None)])
    node = helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)
    return warp_model([node], [value_info("cond", [], TensorProto.BOOL), value_info("x", [1, 3, 16, 16]),
                               value_info("theta", [1, 2, 3])], [value_info("y", None)], [three], custom=custom)


def _conv_init(name, shape, rng, scale=0.2):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def stn_pair(h=32, w=32, align_corners=0, mode="bilinear", padding_mode="zeros", seed=0):
    """A small spatial-transformer net: conv localisation -> theta -> warp -> conv head.

    The rewritten model replaces AffineGrid + GridSample by FusedGridSample and keeps every
    other node (and value name) as is, as the engine promises.
    """
    rng = np.random.default_rng(seed)
    inits = [
        _conv_init("w1", [8, 3, 3, 3], rng), _conv_init("b1", [8], rng),
        _conv_init("fcw", [8, 6], rng, 0.05),
        numpy_helper.from_array(np.array([1, 0, 0, 0, 1, 0], np.float32), "fcb"),
        numpy_helper.from_array(np.array([-1, 2, 3], np.int64), "theta_shape"),
        _conv_init("w2", [4, 3, 3, 3], rng), _conv_init("b2", [4], rng),
    ]
    head = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="loc_conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="loc_relu"),
        helper.make_node("GlobalAveragePool", ["r1"], ["p1"], name="loc_pool"),
        helper.make_node("Flatten", ["p1"], ["f1"], name="loc_flat"),
        helper.make_node("Gemm", ["f1", "fcw", "fcb"], ["t6"], name="loc_fc"),
        helper.make_node("Reshape", ["t6", "theta_shape"], ["theta"], name="loc_reshape"),
    ]
    tail = [helper.make_node("Conv", ["warped", "w2", "b2"], ["out"], name="head_conv", pads=[1, 1, 1, 1])]
    size = numpy_helper.from_array(np.array([1, 3, h, w], np.int64), "size")
    orig = warp_model(head + [
        helper.make_node("AffineGrid", ["theta", "size"], ["grid"], name="ag", align_corners=align_corners),
        helper.make_node("GridSample", ["x", "grid"], ["warped"], name="gs", align_corners=align_corners,
                         mode=ONNX_MODE[mode], padding_mode=padding_mode),
    ] + tail, [value_info("x", [1, 3, h, w])], [value_info("out", [1, 4, h, w])], inits + [size], custom=False)
    rew = warp_model(head + [fused_grid_sample_node("x", "theta", "warped", "affine-grid/FusedGridSample", (h, w),
                                                    align_corners, mode, padding_mode)] + tail,
                     [value_info("x", [1, 3, h, w])], [value_info("out", [1, 4, h, w])], inits)
    return orig, rew


def weighted_warp_model(opset: int = 20) -> onnx.ModelProto:
    """y = GridSample(x + w, AffineGrid(theta, size)): a chain the built-in pattern fuses, and a
    weight worth keeping in external data (image ``WEIGHTED_WARP_HW``)."""
    h, w = WEIGHTED_WARP_HW
    weight = numpy_helper.from_array(np.linspace(-1, 1, h * w, dtype=np.float32).reshape(1, 1, h, w), "w")
    size = numpy_helper.from_array(np.array([1, 1, h, w], np.int64), "size")
    nodes = [
        helper.make_node("Add", ["x", "w"], ["xw"], name="add"),
        helper.make_node("AffineGrid", ["theta", "size"], ["grid"], name="grid", align_corners=0),
        helper.make_node("GridSample", ["xw", "grid"], ["y"], name="sample", align_corners=0),
    ]
    return onnx_model(nodes, [value_info("x", [1, 1, h, w]), value_info("theta", [1, 2, 3])],
                      [value_info("y", [1, 1, h, w])], [weight, size], opset=opset, ir_version=10, name="base")


def grid_sample_model(mode="bilinear", opset=16, rank=4):
    """One GridSample node (no AffineGrid), 2-D or (``rank`` 5) 3-D, with the given mode."""
    x, g = ([1, 1, 4, 4], [1, 3, 3, 2]) if rank == 4 else ([1, 1, 2, 4, 4], [1, 2, 3, 3, 3])
    out = [1, 1, *g[1:-1]]
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode)
    return onnx_model([node], [("x", FLOAT, x), ("grid", FLOAT, g)], [("y", FLOAT, out)], opset=opset)


def custom_affine_grid_read_twice_model():
    """custom.ops::AffineGrid whose grid feeds a native GridSample and is also a graph output."""
    nodes = [helper.make_node("AffineGrid", ["theta"], ["grid"], domain="custom.ops", align_corners=0,
                              output_size=[5, 6]),
             helper.make_node("GridSample", ["x", "grid"], ["y"], mode="bilinear", padding_mode="zeros",
                              align_corners=0)]
    return onnx_model(nodes, [value_info("x", [1, 2, 7, 8]), value_info("theta", [1, 2, 3])],
                      [value_info("y", [1, 2, 5, 6]), value_info("grid", [1, 5, 6, 2])], opset=16,
                      domains=CUSTOM_OPS)
