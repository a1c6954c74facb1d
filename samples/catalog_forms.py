"""The issue-20 samples: forms that used to be refused (sizes given as data, grids reading no
theta, theta computed by matrix chains, library spellings, float16 pipelines) and the traps that
used to be fused wrongly (non-linear ops on theta elements, size-1 dims, a shared symbol)."""
from samples.forms_models import (ChainedMatrices, DisplacementGrid, EinsumGrid, ElementwiseOp, FixedZoomTile,
                                  HalfPrecisionGrid, MonaiResample, SecondWarp, SeedSizeFromReference,
                                  SeedSizeInput, SizeOneRows, TvRotate)
from samples.sample_models import AffineSample
from samples.spec import NB, T2, X2, Sample

XN = {"x": {0: "N"}}
ANGLES = {"x": X2, "angle": [2], "shift": [2, 2], "scale": [2]}
ANGLES_DYN = {"x": {0: "N"}, "angle": {0: "N"}, "shift": {0: "N"}, "scale": {0: "N"}}


def _both(stem, build, inputs, dynamic, alt, ts_opset=17, chains=1, ts_dynamic=None, **kw):
    """The same torch code exported both ways: TorchScript and dynamo opset 18."""
    return [Sample(f"{stem}_ts_opset{ts_opset}.onnx", build, inputs, "torchscript", ts_opset, "fuse", chains,
                   dynamic=ts_dynamic or dynamic, alt_inputs=alt, **kw),
            Sample(f"{stem}_dynamo_opset18.onnx", build, inputs, "dynamo", 18, "fuse", chains,
                   dynamic=dynamic, alt_inputs=alt, **kw)]


def _batch(inputs, n=3):
    return {k: [n] + v[1:] for k, v in inputs.items()}


FORM_SAMPLES = [
    # -- the output size given as data (an int64 tensor at run time) --
    Sample("seed_size_input_opset16.onnx", SeedSizeInput, {"x": X2, "theta": T2, "size": [4]},
           "torchscript+autograd_symbolic", 16, "fuse", 1, dynamic=NB, dtypes={"size": "int64"},
           alt_inputs={"x": [3, 3, 16, 12], "theta": [3, 2, 3], "size": [4]}, output_axes={0: "N", 2: "H", 3: "W"},
           notes="the seed recipe with size a model input: custom.ops::AffineGrid(theta, size)"),
    Sample("seed_size_reference_opset17.onnx", SeedSizeFromReference, {"x": X2, "theta": T2, "ref": [2, 1, 10, 8]},
           "torchscript+autograd_symbolic", 17, "fuse", 1,
           dynamic={"x": {0: "N"}, "theta": {0: "N"}, "ref": {0: "N", 2: "RH", 3: "RW"}},
           alt_inputs={"x": [3, 3, 16, 12], "theta": [3, 2, 3], "ref": [3, 1, 7, 9]},
           output_axes={0: "N", 2: "RH", 3: "RW"},
           notes="size = Concat(Shape(x)[:2], Shape(ref)[2:]): N, C of x and the output H, W of ref"),
    Sample("native_size_input_opset20.onnx", SeedSizeInput, {"x": X2, "theta": T2, "size": [4]}, "onnx.helper", 20,
           "fuse", 1, dynamic=NB, dtypes={"size": "int64"},
           alt_inputs={"x": [3, 3, 16, 12], "theta": [3, 2, 3], "size": [4]},
           notes="standard AffineGrid(theta, size) with size a model input (no exporter writes it)"),
    # -- grids that read no theta --
    Sample("tv_rotate_ts_opset17.onnx", TvRotate, {"x": X2}, "torchscript", 17, "fuse", 1, dynamic=XN,
           alt_inputs={"x": [3] + X2[1:]},
           notes="torchvision-like rotate(30 deg): base grid built at run time (ScatterND copies), a constant "
                 "pixel-space theta, expanded to the batch; the dynamo export of it does not run in onnxruntime"),
    *_both("fixed_zoom_tile", FixedZoomTile, {"x": X2}, XN, {"x": [3] + X2[1:]}, ts_opset=20,
           notes="a fixed theta buffer (batch 1); its grid repeat()ed over the batch (Tile)"),
    *_both("second_warp", SecondWarp, {"x": X2, "theta": T2}, NB, _batch({"x": X2, "theta": T2}), ts_opset=20,
           chains=2, ts_dynamic={"x": {0: "N", 2: "H", 3: "W"}, "theta": {0: "N"}},
           notes="warp by theta, then a fixed zoom whose grid comes from the first output's shape only"),
    # -- theta computed in the graph; other spellings of the grid --
    *_both("chained_matrices", ChainedMatrices, ANGLES, ANGLES_DYN, _batch(ANGLES), ts_opset=20,
           notes="theta = (translate @ rotate @ scale)[:, :2] from per-item angle, shift and scale"),
    *_both("einsum_grid", lambda: EinsumGrid((16, 12)), {"x": X2, "theta": T2}, NB, _batch({"x": X2, "theta": T2}),
           notes="grid = einsum('nij,hwj->nhwi', theta, base)"),
    *_both("displacement", DisplacementGrid, {"x": X2, "theta": T2}, NB, _batch({"x": X2, "theta": T2}),
           ts_opset=20, notes="registration style: identity + (affine_grid(theta) - identity)"),
    *_both("monai_resample", lambda: MonaiResample((16, 12)), {"x": X2, "affine": [2, 3, 3]},
           {"x": {0: "N"}, "affine": {0: "N"}}, _batch({"x": X2, "affine": [2, 3, 3]}), align_corners=1,
           notes="MONAI-like: pixel-space homogeneous affine on a (row, col) grid, normalised in place "
                 "(ScatterND / ScatterElements), axes reversed by a Gather"),
    *_both("half_grid", lambda: HalfPrecisionGrid((16, 12)), {"x": X2, "theta": T2}, NB,
           _batch({"x": X2, "theta": T2}), tolerance=2e-2,
           notes="float16 pipeline: theta.half(), grid in half, .float() for the sampler; the rewrite computes "
                 "the grid in float32 from the same half theta"),
    # -- the silent-wrong traps --
    Sample("neg_abs_theta_ts_opset17.onnx", lambda: ElementwiseOp("abs"), {"x": X2, "theta": T2}, "torchscript", 17,
           "untouched", 0, dynamic=NB, alt_inputs=_batch({"x": X2, "theta": T2}), refusal="not affine in theta",
           notes="negative: kornia-like elementwise grid with theta[:, 0, 0].abs(), the identity near the identity"),
    Sample("neg_clamp_shift_dynamo_opset18.onnx", lambda: ElementwiseOp("clamp"), {"x": X2, "theta": T2}, "dynamo",
           18, "untouched", 0, dynamic=NB, alt_inputs=_batch({"x": X2, "theta": T2}),
           refusal="not affine in theta",
           notes="negative: the x translation clamped to [-1, 1]: exact for every shift an image shows, not beyond"),
    Sample("size_one_rows_ts_opset20.onnx", SizeOneRows, {"x": X2, "theta": T2}, "torchscript", 20, "fuse", 1,
           align_corners=1, dynamic=NB, alt_inputs=_batch({"x": X2, "theta": T2}), reference="onnxruntime",
           notes="affine_grid to 1 x 12, align_corners=1: torch puts the row at 0, onnxruntime's AffineGrid at +1 "
                 "(ONNX's reference at -1); the rewrite moves theta to keep onnxruntime's numbers"),
    Sample("size_one_dynamic_ts_opset20.onnx", lambda: SizeOneRows(dynamic=True), {"x": X2, "theta": T2},
           "torchscript", 20, "fuse", 1, align_corners=1, dynamic={"x": {0: "N", 2: "H", 3: "W"}, "theta": {0: "N"}},
           alt_inputs={"x": [3, 3, 1, 9], "theta": [3, 2, 3]}, reference="onnxruntime",
           notes="affine_grid(theta, x.size()), align_corners=1, H dynamic: at H=1 (alt_inputs) onnxruntime puts "
                 "the row at +1; the rewrite does the same at run time"),
    Sample("shared_symbol_ts_opset20.onnx", AffineSample, {"x": X2, "theta": T2}, "torchscript", 20, "fuse", 1,
           dynamic={"x": {0: "N", 2: "H", 3: "N"}, "theta": {0: "N"}},
           alt_inputs={"x": [3, 3, 20, 7], "theta": [3, 2, 3]}, output_axes={0: "N", 2: "H", 3: "N"},
           notes="x declared [N, 3, H, N]: W shares the batch's symbol; its dims still differ at run time"),
]
