"""Shapes inference cannot tell, read off runs (issue 39, item 3): after onnxruntime's offline
optimiser writes ops ONNX has no schema for (com.microsoft::FusedConv, NCHWc), theta's shape is
unknown to inference; two runs of the model at different input sizes say it is [N, 2, 3]."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from ..builders import GraphBuilder
from ..error_bounds import assert_warp_outputs
from .fusing import fuse_alone
from .rewritten_graphs import op_counts
from .runner import ort_run, run_split


def localised_warp():
    """An STN as TorchScript writes it: features (Conv -> Relu), theta from their mean (ReduceMean
    -> Gemm -> Reshape [-1, 2, 3]), the features warped at their own size."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    rng = np.random.default_rng(0)
    feat = g.op("Relu", g.op("Conv", x, g.const(0.1 * rng.standard_normal((8, 3, 3, 3)).astype(np.float32)),
                             g.const(np.zeros(8, np.float32)), pads=[1, 1, 1, 1]))
    pooled = g.op("ReduceMean", feat, g.ints([2, 3]), keepdims=0)
    bias = np.array([1, 0, 0, 0, 1, 0], np.float32)
    theta = g.op("Reshape", g.op("Gemm", pooled, g.const(0.05 * rng.standard_normal((8, 6)).astype(np.float32)),
                                 g.const(bias)), g.ints([-1, 2, 3]))
    g.op("GridSample", feat, g.op("AffineGrid", theta, g.op("Shape", feat)), out="y")
    g.output("y")
    return g.model(20)


@pytest.mark.parametrize("level", ["extended", "all"])
def test_a_model_after_onnxruntimes_optimiser_fuses(tmp_path, level):
    original = localised_warp()
    src, dst = tmp_path / "m.onnx", tmp_path / f"m.{level}.onnx"
    onnx.save(original, src)
    options = ort.SessionOptions()
    options.graph_optimization_level = {"extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
                                        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}[level]
    options.optimized_model_filepath = str(dst)
    ort.InferenceSession(str(src), options, providers=["CPUExecutionProvider"])
    optimised = onnx.load(dst)
    assert any(n.domain not in ("", "ai.onnx") for n in optimised.graph.node)  # ops inference cannot see through
    inferred = onnx.shape_inference.infer_shapes(optimised)
    theta_name = next(n.input[0] for n in optimised.graph.node if n.op_type == "AffineGrid")
    dims = [[d.dim_value or d.dim_param for d in v.type.tensor_type.shape.dim]
            for v in inferred.graph.value_info if v.name == theta_name]
    assert not dims or not dims[0] or any(d in ("", 0) or str(d).startswith("unk__") for d in dims[0]), dims
    result = fuse_alone(optimised)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
    feeds = {"x": np.random.default_rng(1).random((2, 3, 20, 16), dtype=np.float32)}
    got, want = run_split(result.model, feeds)[0], ort_run(original, feeds)[0]
    assert got.shape == want.shape == (2, 8, 20, 16)
    # the features as the image (what the sampler reads), theta as the model computes it
    feat, theta = _inner(original, feeds)
    assert_warp_outputs(got, want, {"x": feat}, theta=theta, mode="bilinear", padding="zeros", align_corners=False)


def _inner(model, feeds):
    """The sampler's image and theta, as the original computes them."""
    sampler = next(n for n in model.graph.node if n.op_type == "GridSample")
    grid_op = next(n for n in model.graph.node if n.op_type == "AffineGrid")
    wanted = [sampler.input[0], grid_op.input[0]]
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    probe.graph.output.extend(onnx.helper.make_empty_tensor_value_info(v) for v in wanted)
    return ort_run(probe, feeds, outputs=wanted)


def _pixel_affine_export(path):
    """torchvision's ``affine`` as plain torch, exported by TorchScript: a convolution, then a
    centred pixel grid built in place (``empty`` filled by ``copy_``: ScatterND in ONNX) times a
    constant pixel-space theta, nearest sampling."""
    import warnings

    import torch
    import torch.nn.functional as F

    class PixelAffine(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.conv = torch.nn.Conv2d(3, 3, 3, padding=1)

        def forward(self, x):
            x = self.conv(x)
            n, _, h, w = x.shape
            theta = torch.tensor([[[0.9, -0.3, 2.0], [0.25, 1.1, -1.0]]], dtype=x.dtype)
            base = torch.empty(1, h, w, 3, dtype=x.dtype)
            base[..., 0].copy_(torch.linspace((1.0 - w) * 0.5, (w - 1.0) * 0.5, steps=w))
            base[..., 1].copy_(torch.linspace((1.0 - h) * 0.5, (h - 1.0) * 0.5, steps=h).unsqueeze(-1))
            base[..., 2].fill_(1)
            scaled = theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h], dtype=x.dtype)
            grid = base.view(1, h * w, 3).bmm(scaled).view(1, h, w, 2).expand(n, h, w, 2)
            return F.grid_sample(x, grid, mode="nearest", padding_mode="zeros", align_corners=False)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(PixelAffine().eval(), (torch.rand(2, 3, 20, 24),), str(path), input_names=["x"],
                          output_names=["y"], opset_version=17, dynamo=False,
                          dynamic_axes={"x": {0: "N", 2: "H", 3: "W"}})


def test_a_base_grid_whose_sizes_come_far_through_onnxruntimes_layout_fuses(tmp_path):
    """After onnxruntime's ALL level the convolution is NCHWc (Conv, ReorderOutput) and the base
    grid's sizes are Shapes of ScatterND outputs more than 64 nodes from the image: the cut must
    look that far before taking them for run-time tensors of their own sizes (then at probe dims
    apart from the image's, the grid is no affine grid, and it was refused)."""
    src, dst = tmp_path / "m.onnx", tmp_path / "m.all.onnx"
    _pixel_affine_export(src)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.optimized_model_filepath = str(dst)
    ort.InferenceSession(str(src), options, providers=["CPUExecutionProvider"])
    optimised = onnx.load(dst)
    assert any(n.domain == "com.microsoft.nchwc" for n in optimised.graph.node)
    result = fuse_alone(optimised)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
    import surgeon
    for shape in ((2, 3, 20, 24), (1, 3, 9, 13), (3, 3, 33, 17)):  # equal at other sizes than the export's
        feeds = {"x": np.random.default_rng(2).random(shape, dtype=np.float32)}
        report = surgeon.validate(optimised, result.model, feeds, quiet=True)
        assert report.passed, (shape, report.summary())  # nearest: pixels at ties explained, the rest equal
