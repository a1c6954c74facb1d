"""Every sample model: how to build it, how it is exported, what a rewriter should do with it.

The single source for export_samples.py (which writes models/manifest.json from it) and for
tests/test_samples.py (which rebuilds the torch module to compare outputs).
"""
import numpy as np

from samples.lib_models import (AffineExpand, AffineNoopReshape, CondBranch, FlowWarpModule,
                                GridInput, IfBranch, LibElementwise, LibHomogeneous, LibMatmul,
                                MultiChain, NonAffineGrid)
from samples.catalog_forms import FORM_SAMPLES
from samples.sample_models import STN, AffineSample, SeedRecipe
from samples.spec import NB, T2, T2B, T3, X2, X2B, X3, Sample

RUNTIME_DATA = "run-time data other than one theta-shaped tensor"


def _affine(file, exporter, opset, ac=0, mode="bilinear", pad="zeros", dims=2, expected=("fuse", 1), **kw):
    shape_x, shape_t = (X2, T2) if dims == 2 else (X3, T3)
    kw.setdefault("inputs", {"x": shape_x, "theta": shape_t})
    return Sample(file, lambda: AffineSample(align_corners=bool(ac), mode=mode, padding_mode=pad),
                  exporter=exporter, opset=opset, expected=expected[0], chains=expected[1], align_corners=ac,
                  mode=mode, padding_mode=pad, dims=dims, **kw)


def _alt_batch(dims=2, n=3):
    if dims == 3:
        return {"x": [n] + X3[1:], "theta": [n] + T3[1:]}
    return {"x": [n] + X2[1:], "theta": [n] + T2[1:]}


SAMPLES = [
    Sample("stn_ts_opset20_2d.onnx", STN, {"x": [2, 1, 28, 28]}, "torchscript", 20, "fuse", 1,
           dynamic={"x": {0: "N"}}, alt_inputs={"x": [5, 1, 28, 28]},
           notes="theta comes from a conv localisation net; output y is class logits"),
    _affine("affine_ts_opset20_2d_dynamic.onnx", "torchscript", 20,
            dynamic={"x": {0: "N", 2: "H", 3: "W"}, "theta": {0: "N"}},
            alt_inputs={"x": [3, 3, 20, 18], "theta": [3, 2, 3]}),
    Sample("affine_ts_opset20_2d_static.onnx",
           lambda: AffineSample(out_hw=(24, 20), align_corners=True, mode="nearest",
                                padding_mode="border"),
           {"x": X2, "theta": T2}, "torchscript", 20, "fuse", 1, align_corners=1,
           mode="nearest", padding_mode="border", dynamic=NB, alt_inputs=_alt_batch(),
           notes="output H/W fixed at 24x20 (input 16x12); batch dynamic"),
    _affine("affine_ts_opset20_3d.onnx", "torchscript", 20, dims=3, dynamic=NB,
            alt_inputs=_alt_batch(3)),
    _affine("affine_dynamo_opset18_2d.onnx", "dynamo", 18,
            notes="no dynamic_shapes: the default call; everything static"),
    _affine("affine_dynamo_opset20_2d_ac0.onnx", "dynamo", 20, dynamic=NB,
            alt_inputs=_alt_batch()),
    _affine("affine_dynamo_opset20_2d_ac1.onnx", "dynamo", 20, ac=1, mode="bicubic",
            pad="reflection", dynamic=NB, alt_inputs=_alt_batch()),
    _affine("affine_dynamo_opset18_3d.onnx", "dynamo", 18, dims=3, dynamic=NB,
            alt_inputs=_alt_batch(3),
            notes="GridSample mode='bilinear' on 5-D: invalid under opset 16's spec, ORT runs it"),
    _affine("affine_dynamo_opset20_3d.onnx", "dynamo", 20, dims=3, dynamic=NB,
            alt_inputs=_alt_batch(3)),
    _affine("affine_dynamo_opset18_2d_auto.onnx", "dynamo", 18, auto=True,
            dynamic={"x": {0: "N", 2: "H", 3: "W"}, "theta": {0: "N"}},
            alt_inputs=_alt_batch(),
            expected=("untouched", 0), refusal="as well as at the sizes baked into its constants",
            notes="Dim.AUTO: H/W symbolic in the signature, linspace endpoints computed from "
                  "Shape(x), but the arange constants (12, 16 steps) are baked: it runs wherever "
                  "H * W = 192 (12 x 16, 24 x 8), its grid then the 16 x 12 one reshaped, no affine "
                  "grid: refused while H, W are dynamic (it fuses with --input-shape). theta batch has "
                  "its own symbol"),
    Sample("seed_custom_affinegrid_opset16.onnx", lambda: SeedRecipe(), {"x": X2, "theta": T2},
           "torchscript+autograd_symbolic", 16, "fuse", 1, dynamic=NB, alt_inputs=_alt_batch(),
           notes="custom.ops::AffineGrid(theta, Shape(x)); ORT cannot run it as exported"),
    _affine("aten_fallback_opset15.onnx", "torchscript+aten_fallback", 15, dynamic=NB,
            notes="org.pytorch.aten::ATen affine_grid_generator + grid_sampler; ORT cannot run"),
    Sample("ms_gridsample_opset15.onnx", lambda: LibMatmul((16, 12)), {"x": X2, "theta": T2},
           "torchscript+ms_symbolic", 15, "fuse", 1, dynamic=NB, alt_inputs=_alt_batch(),
           notes="MatMul grid (affine_grid does not export below 20) + com.microsoft::GridSample"),
]


def _lib(stem, make, inputs, ts_dynamic, alt, ac=0, mode="bilinear", pad="zeros", notes="", ts_refusal=""):
    """The same torch code exported both ways: TorchScript opset 17 and dynamo opset 18."""
    build = lambda: make(align_corners=bool(ac), mode=mode, padding_mode=pad)  # noqa: E731
    common = dict(align_corners=ac, mode=mode, padding_mode=pad, notes=notes)
    ts_expected = ("untouched", 0) if ts_refusal else ("fuse", 1)
    return [
        Sample(f"{stem}_ts_opset17.onnx", build, inputs, "torchscript", 17, *ts_expected,
               dynamic=ts_dynamic, alt_inputs=alt, refusal=ts_refusal, **common),
        Sample(f"{stem}_dynamo_opset18.onnx", build, inputs, "dynamo", 18, "fuse", 1,
               dynamic=NB if "theta" in inputs else {"x": {0: "N"}, "M": {0: "N"}},
               alt_inputs={k: [3] + v[1:] for k, v in inputs.items()}, **common),
    ]


SAMPLES += _lib("lib_elementwise", LibElementwise, {"x": X2, "theta": T2},
                {"x": {0: "N", 2: "H", 3: "W"}, "theta": {0: "N"}},
                {"x": [3, 3, 20, 18], "theta": [3, 2, 3]},
                notes="linspace/meshgrid base, six theta gathers, Mul/Add per coefficient. TorchScript's "
                      "linspace divides 0 by 0 at H or W = 1: its grid is NaN there, which engines sample as "
                      "they happen to; the rewrite samples at affine_grid's coordinates there and says so")
SAMPLES += _lib("lib_matmul", lambda **kw: LibMatmul((16, 12), **kw), {"x": X2, "theta": T2},
                NB, _alt_batch(), pad="border", notes="constant [H*W,3] base @ theta^T")
SAMPLES += _lib("lib_homogeneous", LibHomogeneous, {"x": X2, "M": [2, 3, 3]},
                {"x": {0: "N"}, "M": {0: "N"}}, {"x": [3] + X2[1:], "M": [3, 3, 3]}, ac=1,
                notes="3x3 homogeneous M, rows 0-1 read element by element, row 2 ignored")


def _wrap(stem, make, notes):
    """Affine chains with a shape op between grid and sampler: TorchScript 20, dynamo 18."""
    expand = stem == "affine_expand"
    inputs = {"x": X2, "theta": [1, 2, 3] if expand else T2}
    dyn = {"x": {0: "N"}} if expand else NB
    alt = {"x": [3] + X2[1:], "theta": inputs["theta"] if expand else [3, 2, 3]}
    return [Sample(f"{stem}_{ex}_opset{op}.onnx", make, inputs, exname, op, "fuse", 1,
                   dynamic=dyn, alt_inputs=alt, notes=notes)
            for ex, exname, op in (("ts", "torchscript", 20), ("dynamo", "dynamo", 18))]


SAMPLES += _wrap("affine_expand", AffineExpand,
                 "theta batch 1; grid.expand(N,-1,-1,-1) before the sampler")
SAMPLES += _wrap("affine_noop_reshape", AffineNoopReshape,
                 "grid.reshape(-1, H, W, 2) (a no-op) before the sampler")

SAMPLES += [
    Sample(f"flow_warp_{ex}_opset{op}.onnx", lambda: FlowWarpModule((16, 12)),
           {"x": X2, "flow": [2, 2, 16, 12]}, exname, op, "untouched", 0,
           dynamic={"x": {0: "N"}, "flow": {0: "N"}}, refusal=RUNTIME_DATA,
           alt_inputs={"x": [3] + X2[1:], "flow": [3, 2, 16, 12]},
           notes="negative: grid = base + flow.permute(0,2,3,1); input of the flow-warp plugin")
    for ex, exname, op in (("ts", "torchscript", 17), ("dynamo", "dynamo", 18))
]
SAMPLES += [
    Sample("neg_nonaffine_grid.onnx", NonAffineGrid, {"x": X2, "theta": T2}, "torchscript", 20,
           "untouched", 0, dynamic=NB, alt_inputs=_alt_batch(), refusal="not affine in theta",
           notes="negative: AffineGrid -> Tanh -> GridSample; the sampled grid is not affine"),
    Sample("neg_random_grid.onnx", GridInput, {"x": X2, "grid": [2, 16, 12, 2]}, "torchscript",
           17, "untouched", 0, dynamic={"x": {0: "N"}, "grid": {0: "N"}}, refusal=RUNTIME_DATA,
           alt_inputs={"x": [3] + X2[1:], "grid": [3, 16, 12, 2]},
           notes="negative: the grid is a model input"),
    Sample("multi_chain.onnx", MultiChain, {"x": X2, "theta": T2, "theta2": T2}, "torchscript",
           20, "fuse", 3, dynamic={"x": {0: "N"}, "theta": {0: "N"}, "theta2": {0: "N"}},
           alt_inputs={"x": X2B, "theta": T2B, "theta2": T2B},
           outputs=["y", "y_small", "y_nearest", "grid"],
           chain_settings=[[0, "bilinear", "zeros"], [1, "bilinear", "border"],
                           [0, "nearest", "zeros"]],
           notes="chains 1-2 share theta (y: x.size(), y_small: 12x10); chain 3's grid is "
                 "also output 'grid', so it needs a grid besides the sampler"),
    Sample("if_branch.onnx", IfBranch, {"x": X2, "theta": T2, "cond": []}, "onnx.helper", 20,
           "fuse", 1, dynamic={"x": {0: "N", 2: "H", 3: "W"}, "theta": {0: "N"}},
           alt_inputs={"x": [3, 3, 20, 18], "theta": [3, 2, 3], "cond": []},
           dtypes={"cond": "bool"},
           notes="If(cond): then AffineGrid+GridSample, else Identity(x); chain in a subgraph"),
    Sample("if_branch_dynamo_opset18.onnx", CondBranch, {"x": X2, "theta": T2, "cond": []},
           "dynamo", 18, "fuse", 1, dynamic=NB,
           alt_inputs={"x": X2B, "theta": T2B, "cond": []}, dtypes={"cond": "bool"},
           notes="torch.cond: If whose then-branch holds the dynamo decomposition; the base "
                 "grid and shape constants are outer-graph initializers"),
]


def make_inputs(s, shapes=None, seed=0):
    """Deterministic, well-conditioned inputs by name: theta near identity, small flows, sizes
    that follow x's batch and channels; rotation parameters (angle, shift, scale) and MONAI's
    pixel-space ``affine`` are drawn over their whole range."""
    rng = np.random.default_rng(seed)
    feeds = {}
    shapes = shapes or s.inputs
    for name, shape in shapes.items():
        if s.dtypes.get(name) == "bool":
            feeds[name] = np.array(seed % 2 == 0)
        elif s.dtypes.get(name) == "int64":  # an output size [N, C, H_out, W_out] given as data
            x = shapes["x"]
            feeds[name] = np.array([x[0], x[1], 10 - 3 * seed, 8 + seed], np.int64)
        elif name in ("theta", "theta2", "M"):
            eye = np.eye(shape[-2], shape[-1], dtype=np.float32)
            feeds[name] = (eye + 0.25 * rng.standard_normal(shape)).astype(np.float32)
        elif name == "affine":  # pixels: rotation, scale and a shift of a few pixels
            feeds[name] = (np.eye(3) + 0.25 * rng.standard_normal(shape) * [1, 1, 12]).astype(np.float32)
            feeds[name][:, 2] = [0, 0, 1]
        elif name == "angle":
            feeds[name] = rng.uniform(-np.pi, np.pi, shape).astype(np.float32)
        elif name == "shift":
            feeds[name] = rng.uniform(-0.5, 0.5, shape).astype(np.float32)
        elif name == "scale":
            feeds[name] = (rng.choice([-1, 1], shape) * rng.uniform(0.5, 1.5, shape)).astype(np.float32)
        elif name == "flow":
            feeds[name] = (0.15 * rng.standard_normal(shape)).astype(np.float32)
        elif name == "grid":
            feeds[name] = rng.uniform(-1.1, 1.1, shape).astype(np.float32)
        else:  # images in [0, 1): sampling error scales with the jumps between pixels
            feeds[name] = rng.random(shape, dtype=np.float32)
    return feeds


def manifest_entry(s):
    e = {k: getattr(s, k) for k in ("inputs", "expected", "chains", "exporter", "opset",
                                    "align_corners", "mode", "padding_mode", "dims", "outputs")}
    e["dynamic"] = {k: {str(a): n for a, n in v.items()} for k, v in (s.dynamic or {}).items()}
    for k in ("alt_inputs", "chain_settings"):
        if getattr(s, k):
            e[k] = getattr(s, k)
    if s.dtypes:
        e["dtypes"] = s.dtypes
    for k in ("reference", "tolerance", "refusal"):  # only where they differ from the default
        if getattr(s, k) != Sample.__dataclass_fields__[k].default:
            e[k] = getattr(s, k)
    if s.notes:
        e["notes"] = s.notes
    return e


SAMPLES += FORM_SAMPLES
BY_FILE = {s.file: s for s in SAMPLES}
