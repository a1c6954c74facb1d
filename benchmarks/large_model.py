"""A synthetic model shaped like a real export with many warps: residual Conv/Relu/Add blocks,
with affine_grid -> grid_sample chains (native opset-20 pairs and dynamo-style
decompositions with a constant base grid) spread among them, and value_info for every
intermediate value as exporters write it."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

C, H, W = 16, 16, 16


def _base_grid(h: int, w: int) -> np.ndarray:
    """Dynamo's constant: homogeneous pixel-centre coordinates [H*W, 3, 1] (align_corners=0)."""
    xs = (np.arange(w, dtype=np.float32) * 2 + 1) / w - 1
    ys = (np.arange(h, dtype=np.float32) * 2 + 1) / h - 1
    gx, gy = np.meshgrid(xs, ys)
    return np.stack([gx, gy, np.ones_like(gx)], -1).reshape(h * w, 3, 1).astype(np.float32)


def build(blocks: int, chains: int, weight_bytes: int, seed: int = 0) -> onnx.ModelProto:
    """``blocks`` Conv/Relu/Add blocks (3 nodes each) and ``chains`` warps among them."""
    rng = np.random.default_rng(seed)
    # A k x 1 kernel spends the weight budget without changing the graph or the shapes.
    k = max(1, round(weight_bytes / (blocks * C * C * 4)))
    nodes, inits = [], []
    cur = "x"
    every = max(1, blocks // max(1, chains))
    made = 0
    base = numpy_helper.from_array(_base_grid(H, W), "base_grid")
    inits.append(base)
    inits.append(numpy_helper.from_array(np.array([1, C, H, W], np.int64), "warp_size"))
    inits.append(numpy_helper.from_array(np.array([1, H, W, 2], np.int64), "grid_shape"))
    inits.append(numpy_helper.from_array(np.array([1, 2, 3], np.int64), "theta_shape"))
    for b in range(blocks):
        w = numpy_helper.from_array((rng.standard_normal((C, C, k, 1)) * 0.01).astype(np.float32), f"w{b}")
        inits.append(w)
        nodes += [
            helper.make_node("Conv", [cur, w.name], [f"c{b}"], name=f"conv{b}", pads=[k // 2, 0, (k - 1) // 2, 0]),
            helper.make_node("Relu", [f"c{b}"], [f"r{b}"], name=f"relu{b}"),
            helper.make_node("Add", [f"r{b}", cur], [f"a{b}"], name=f"add{b}"),
        ]
        cur = f"a{b}"
        if made < chains and b % every == every - 1:
            cur = _warp(nodes, inits, cur, made, dynamo=made % 2 == 1, rng=rng)
            made += 1
    graph = helper.make_graph(nodes, "large", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, W])],
                              [helper.make_tensor_value_info(cur, TensorProto.FLOAT, [1, C, H, W])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 10
    # Exporters store the shape of every intermediate value (torch.onnx runs shape inference
    # before saving): so does this model, taken from inference on a weight-free copy.
    light = onnx.ModelProto()
    light.CopyFrom(model)
    del light.graph.initializer[:]
    light.graph.initializer.extend(t for t in inits if np.prod(t.dims) <= 64)  # shape tensors
    light.graph.input.extend(helper.make_tensor_value_info(t.name, t.data_type, t.dims)
                             for t in inits if np.prod(t.dims) > 64)
    model.graph.value_info.extend(onnx.shape_inference.infer_shapes(light).graph.value_info)
    return model


def _warp(nodes, inits, src: str, i: int, dynamo: bool, rng) -> str:
    """theta from the features (pool -> Gemm -> Reshape), then a grid and a sampler."""
    fc = numpy_helper.from_array((rng.standard_normal((C, 6)) * 0.01).astype(np.float32), f"fc{i}")
    bias = numpy_helper.from_array(np.array([1, 0, 0, 0, 1, 0], np.float32), f"fcb{i}")
    inits += [fc, bias]
    nodes += [
        helper.make_node("GlobalAveragePool", [src], [f"p{i}"], name=f"pool{i}"),
        helper.make_node("Flatten", [f"p{i}"], [f"f{i}"], name=f"flat{i}"),
        helper.make_node("Gemm", [f"f{i}", fc.name, bias.name], [f"t{i}"], name=f"fc{i}"),
        helper.make_node("Reshape", [f"t{i}", "theta_shape"], [f"theta{i}"], name=f"theta{i}"),
    ]
    if dynamo:  # theta^T * base -> sum -> grid, the way torch.export decomposes affine_grid
        nodes += [
            helper.make_node("Transpose", [f"theta{i}"], [f"tt{i}"], name=f"tr{i}", perm=[0, 2, 1]),
            helper.make_node("Unsqueeze", [f"tt{i}", "one_axis"], [f"tu{i}"], name=f"unsq{i}"),
            helper.make_node("Mul", ["base_grid", f"tu{i}"], [f"m{i}"], name=f"mul{i}"),
            helper.make_node("ReduceSum", [f"m{i}", "reduce_axes_sum"], [f"s{i}"], name=f"sum{i}", keepdims=0),
            helper.make_node("Reshape", [f"s{i}", "grid_shape"], [f"g{i}"], name=f"gridr{i}"),
        ]
        if not any(t.name == "one_axis" for t in inits):
            inits.append(numpy_helper.from_array(np.array([1], np.int64), "one_axis"))
            inits.append(numpy_helper.from_array(np.array([-2], np.int64), "reduce_axes_sum"))
    else:
        nodes.append(helper.make_node("AffineGrid", [f"theta{i}", "warp_size"], [f"g{i}"], name=f"grid{i}",
                                      align_corners=0))
    nodes.append(helper.make_node("GridSample", [src, f"g{i}"], [f"w{i}_out"], name=f"sample{i}",
                                  mode="linear", padding_mode="zeros", align_corners=0))
    return f"w{i}_out"


def main() -> None:
    """Write a model to disk from its own process, so the benchmark's process stays small
    (a forked child's peak memory would otherwise include the parent's).  Prints its node count.
    --smoke (the tests run it): 30 blocks, 3 chains, 2 MB of weights, written to a temporary
    folder when OUT is not given, and read back and checked."""
    import argparse
    import os
    import tempfile

    parser = argparse.ArgumentParser(description="write the synthetic benchmark model")
    parser.add_argument("out", nargs="?", help="where to write it (optional with --smoke)")
    parser.add_argument("--blocks", type=int, default=9800)
    parser.add_argument("--chains", type=int, default=200)
    parser.add_argument("--weight-bytes", type=int, default=370_000_000)
    parser.add_argument("--external", action="store_true", help="weights in OUT.data")
    parser.add_argument("--smoke", action="store_true", help="a tiny model, checked after writing")
    args = parser.parse_args()
    if args.smoke:
        args.blocks, args.chains, args.weight_bytes = 30, 3, 2_000_000
    elif not args.out:
        parser.error("OUT is required without --smoke")
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or os.path.join(tmp, "large.onnx")
        model = build(args.blocks, args.chains, args.weight_bytes)
        location = os.path.basename(out) + ".data"
        onnx.save(model, out, save_as_external_data=args.external, location=location, size_threshold=1024)
        if args.smoke:  # what was written loads, with its weights, and is a valid model
            onnx.checker.check_model(onnx.load(out), full_check=True)
    print(len(model.graph.node))


if __name__ == "__main__":
    main()
