"""Small models and kernels for the runtime tests, built by hand with onnx.helper.

The FusedGridSample kernel here follows ops/OPS.md through torch's own functions, so these tests
depend neither on surgeon_ops.kernels nor on the pattern plugins.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OPSET = 20
TORCH_MODE = {"linear": "bilinear", "cubic": "bicubic"}
ONNX_MODE = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}


def torch_fused_grid_sample(inputs, attrs, device="cpu"):
    import torch
    import torch.nn.functional as F

    x, theta = inputs[0], inputs[1]
    size = inputs[2] if len(inputs) > 2 and inputs[2] is not None else None
    if size is None:
        size = list(x.shape[:2]) + list(attrs["output_size"])
    ac = bool(attrs.get("align_corners", 0))
    mode = TORCH_MODE.get(attrs.get("mode", "bilinear"), attrs.get("mode", "bilinear"))
    grid = F.affine_grid(torch.from_numpy(theta), [int(s) for s in size], align_corners=ac)
    y = F.grid_sample(torch.from_numpy(x), grid, mode=mode, padding_mode=attrs.get("padding_mode", "zeros"),
                      align_corners=ac)
    return [y.numpy()]


def torch_affine_grid(inputs, attrs, device="cpu"):
    import torch
    import torch.nn.functional as F

    theta = inputs[0]
    size = inputs[1] if len(inputs) > 1 and inputs[1] is not None else None
    if size is None:
        size = [theta.shape[0], 1] + list(attrs["output_size"])
    grid = F.affine_grid(torch.from_numpy(theta), [int(s) for s in size],
                         align_corners=bool(attrs.get("align_corners", 0)))
    return [grid.numpy()]


def vi(name, dims, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, dims)


def model(nodes, inputs, outputs, inits=(), custom=True, opset=OPSET):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", opset)]
    if custom:
        opsets.append(helper.make_opsetid("custom.ops", 1))
    m = helper.make_model(graph, opset_imports=opsets)
    m.ir_version = 10
    return m


def fused_node(x, theta, y, name, output_size, align_corners=0, mode="bilinear", padding_mode="zeros",
               pattern="affine-grid", size=None):
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
    orig = model([
        helper.make_node("AffineGrid", ["theta", "size"], ["grid"], name="ag", align_corners=align_corners),
        helper.make_node("GridSample", ["x", "grid"], ["y"], name="gs", align_corners=align_corners,
                         mode=ONNX_MODE[mode], padding_mode=padding_mode),
    ], [vi("x", [n, c, h, w]), vi("theta", [n, 2, 3])], [vi("y", [n, c, oh, ow])], [size], custom=False)
    rew = model([fused_node("x", "theta", "y", "affine-grid/FusedGridSample", (oh, ow), align_corners, mode,
                            padding_mode)],
                [vi("x", [n, c, h, w]), vi("theta", [n, 2, 3])], [vi("y", [n, c, oh, ow])])
    return orig, rew


# theta that rotates, scales and shifts: many samples fall outside, so padding matters
THETA = np.array([[[0.9, 0.3, 0.4], [-0.2, 1.1, -0.3]]], np.float32)


def warp_feeds(h=32, w=32, seed=0):
    return {"x": np.random.default_rng(seed).random((1, 3, h, w), dtype=np.float32), "theta": THETA}


def swap_rows(rew):
    """Feed the kernel theta with its two rows swapped (a Gather the 'rewrite' added)."""
    perm = numpy_helper.from_array(np.array([1, 0], np.int64), "perm_swap")
    gather = helper.make_node("Gather", ["theta", "perm_swap"], ["theta_swapped"], name="swap", axis=1)
    fused = rew.graph.node[0]
    fused.input[1] = "theta_swapped"
    rew.graph.node.insert(0, gather)
    rew.graph.initializer.append(perm)
    return rew


TAMPERINGS = {
    "align_corners": lambda: warp_pair(align_corners=1)[1],
    "padding_mode": lambda: warp_pair(padding_mode="border")[1],
    "padding_reflection": lambda: warp_pair(padding_mode="reflection")[1],
    "theta_rows_swapped": lambda: swap_rows(warp_pair()[1]),
    "output_size": lambda: warp_pair(out=(16, 16))[1],
}


def if_model(custom: bool):
    """y = warp(x) if cond else x * 3, the warp written natively or as FusedGridSample."""
    size = numpy_helper.from_array(np.array([1, 3, 16, 16], np.int64), "size")
    if custom:
        then_nodes = [fused_node("x", "theta", "t_out", "warp", (16, 16))]
        then_inits = []
    else:
        then_nodes = [helper.make_node("AffineGrid", ["theta", "size"], ["grid"]),
                      helper.make_node("GridSample", ["x", "grid"], ["t_out"], mode="linear")]
        then_inits = [size]
    then_g = helper.make_graph(then_nodes, "then", [], [vi("t_out", None)], then_inits)
    three = numpy_helper.from_array(np.array(3.0, np.float32), "three")
    else_g = helper.make_graph([helper.make_node("Mul", ["x", "three"], ["e_out"])], "else", [], [vi("e_out", None)])
    node = helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)
    graph = helper.make_graph([node], "g", [vi("cond", [], TensorProto.BOOL), vi("x", [1, 3, 16, 16]),
                                             vi("theta", [1, 2, 3])], [vi("y", None)], [three])
    opsets = [helper.make_opsetid("", 20)] + ([helper.make_opsetid("custom.ops", 1)] if custom else [])
    m = helper.make_model(graph, opset_imports=opsets)
    m.ir_version = 10
    return m


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
    orig = model(head + [
        helper.make_node("AffineGrid", ["theta", "size"], ["grid"], name="ag", align_corners=align_corners),
        helper.make_node("GridSample", ["x", "grid"], ["warped"], name="gs", align_corners=align_corners,
                         mode=ONNX_MODE[mode], padding_mode=padding_mode),
    ] + tail, [vi("x", [1, 3, h, w])], [vi("out", [1, 4, h, w])], inits + [size], custom=False)
    rew = model(head + [fused_node("x", "theta", "warped", "affine-grid/FusedGridSample", (h, w), align_corners,
                                   mode, padding_mode)] + tail,
                [vi("x", [1, 3, h, w])], [vi("out", [1, 4, h, w])], inits)
    return orig, rew


# A trivial custom op for tests that are about plumbing, not sampling: y = x * factor.
TEST_DOMAIN = "test.ops"


def scale_kernel(inputs, attrs, device="cpu"):
    return [(inputs[0] * np.asarray(attrs.get("factor", 2.0), dtype=inputs[0].dtype))]


def scale_node(x, y, name, factor=2.0):
    return helper.make_node("Scale", [x], [y], name=name, domain=TEST_DOMAIN, factor=factor)


def scale_model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(TEST_DOMAIN, 1)])
    m.ir_version = 10
    return m


def chain_model(k=3):
    """x -> Relu -> Scale -> Relu -> Scale ... -> Relu -> y: k custom nodes in a row, k+1 stages."""
    nodes, cur = [], "x"
    for i in range(k):
        nodes.append(helper.make_node("Relu", [cur], [f"r{i}"], name=f"relu{i}"))
        nodes.append(scale_node(f"r{i}", f"s{i}", f"scale{i}", factor=float(i + 2)))
        cur = f"s{i}"
    nodes.append(helper.make_node("Relu", [cur], ["y"], name="relu_last"))
    return scale_model(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])])


def parallel_model(k=3):
    """x -> Relu -> k Scales side by side -> Sum -> y: k custom nodes, 2 stages."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu")]
    for i in range(k):
        nodes.append(helper.make_node("Neg", ["r"], [f"n{i}"], name=f"neg{i}"))
        nodes.append(scale_node(f"n{i}", f"s{i}", f"scale{i}", factor=float(i + 2)))
    nodes.append(helper.make_node("Sum", [f"s{i}" for i in range(k)], ["y"], name="sum"))
    return scale_model(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])])
