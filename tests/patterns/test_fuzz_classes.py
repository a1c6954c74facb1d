"""Issue "Matcher II": the mutation fuzzer's silent wrong rewrites, one test per class. Each model
is built here; each case either stays unfused with a reason or fuses and equals the original."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import surgeon

from ..builders import GraphBuilder
from .fusing import fuse_alone, refusal_reasons

F16 = TensorProto.FLOAT16


def _pair(theta_elem=TensorProto.FLOAT, x_elem=TensorProto.FLOAT, out=(8, 6), ac=0):
    """theta [N, 2, 3] -> AffineGrid (size from theta's batch and constants) -> GridSample."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12], x_elem)
    theta = g.input("theta", ["N", 2, 3], theta_elem)
    size = g.op("Concat", g.op("Shape", theta, start=0, end=1), g.ints([3, *out]), axis=0)
    grid = g.op("AffineGrid", theta, size, out="grid", align_corners=ac)
    g.op("GridSample", x, grid, out="y", align_corners=ac, mode="linear")
    g.output("y", x_elem)
    return g


def test_half_affine_grid_size_one_is_measured_not_emulated():
    # onnxruntime runs a float16 AffineGrid through its function body, which puts a size-1 dim
    # with align_corners=1 at NaN (the float32 kernel: +1). The probe used to assume +1.
    result = fuse_alone(_pair(theta_elem=F16, out=(1, 12), ac=1).model(20))
    assert not result.report.rewrites, result.report.summary()
    assert "non-finite" in refusal_reasons(result), refusal_reasons(result)


def test_grid_declared_float_but_computed_half_is_not_believed():
    # A stale value_info: the model computes the grid in float16 but declares it FLOAT. Declarations
    # of intermediate values are not believed: the rewrite is the one of the undeclared twin.
    twin = fuse_alone(_pair(theta_elem=F16).model(20))
    model = _pair(theta_elem=F16).model(20)
    model.graph.value_info.append(helper.make_tensor_value_info("grid", TensorProto.FLOAT, ["N", 8, 6, 2]))
    result = fuse_alone(model)
    assert [r.written for r in result.report.rewrites] == [r.written for r in twin.report.rewrites], \
        result.report.summary()
    assert [r.warnings for r in result.report.rewrites] == [r.warnings for r in twin.report.rewrites]


def test_float_grid_of_a_half_image_stays_onnxs_own_pair():
    # The contract types theta as the image: a float32 grid would be computed from a float16 theta.
    # ONNX's own pair, what such a chain becomes, it already is.
    result = fuse_alone(_pair(x_elem=F16).model(20))
    assert not result.report.rewrites, result.report.summary()
    assert "already ONNX's own AffineGrid + GridSample" in refusal_reasons(result), refusal_reasons(result)
    below = fuse_alone(_pair(x_elem=F16).model(20), options={"target": "tensorrt"})
    assert "the op's theta has the image's type" in refusal_reasons(below), refusal_reasons(below)


def _divided_width(k: int):
    """Output W = W_in // k: a dim computed from an input dim, which small probe dims hide (k=2:
    6 and 7 both give 3; k=16: every nearby W gives 0 and the region fails there)."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    theta = g.input("theta", ["N", 2, 3])
    shape = g.op("Shape", x)
    head = g.op("Slice", shape, g.ints([0]), g.ints([3]))
    width = g.op("Div", g.op("Slice", shape, g.ints([3]), g.ints([4])), g.ints([k]))
    grid = g.op("AffineGrid", theta, g.op("Concat", head, width, axis=0))
    g.op("GridSample", x, grid, out="y", mode="linear")
    g.output("y")
    return g.model(20)


@pytest.mark.parametrize("k", [2, 16])
def test_output_dim_divided_from_input_dim_keeps_its_size(k):
    model = _divided_width(k)
    result = fuse_alone(model)
    if not result.report.rewrites:
        assert "computed" in refusal_reasons(result), refusal_reasons(result)
        return
    assert not any("only runs with" in w for r in result.report.rewrites for w in r.warnings)
    for width in (130, 201):
        report = surgeon.validate(model, result.model, input_shapes={"x": [2, 3, 8, width], "theta": [2, 2, 3]})
        assert report.passed, report.summary() if hasattr(report, "summary") else report


class _FakeContext:
    """Just what SizeWriter.pieces asks of a RewriteContext."""

    def __init__(self, shapes):
        self.shapes, self.nodes = shapes, []

    def shape(self, value):
        return self.shapes.get(value)

    def dtype(self, value):
        return TensorProto.INT64

    def fresh_name(self, hint):
        return f"{hint}_{len(self.nodes)}"

    def add_constant(self, array, hint):
        return f"const_{hint}"

    def add_node(self, op, inputs, outputs, **attrs):
        self.nodes.append((op, list(inputs)))
        return outputs

    def set_shape(self, value, elem, dims):
        pass


def test_size_tensor_of_symbolic_length_is_gathered():
    # A size tensor declared [S]: its length is not known, so its elements are gathered (the
    # writer compared a symbolic length with range(): a TypeError inside rewrite()).
    from surgeon.recognise import DimOf, ElemOf, SizeWriter

    ctx = _FakeContext({"size": ("S",), "x": ("N", 3, 16, 12)})
    writer = SizeWriter(ctx)
    out = writer.pieces([DimOf("x", 0), DimOf("x", 1), ElemOf("size", 2), ElemOf("size", 3)], "size")
    assert [op for op, _ in ctx.nodes] == ["Shape", "Gather", "Gather", "Concat"], ctx.nodes
    assert ctx.nodes[2][1][0] == "size" and out.startswith("size")


def test_half_grid_kept_as_a_grid_declares_its_tolerance():
    # The grid is computed in float16 and is also a graph output: the rewrite writes a float16
    # AffineGrid, which rounds once where the original rounds at every step; validate must hold
    # it to the declared tolerance, not to float16's default.
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    theta = g.op("Cast", g.input("theta", ["N", 2, 3]), to=F16)
    size = g.op("Concat", g.op("Shape", theta, start=0, end=1), g.ints([3, 8, 6]), axis=0)
    grid = g.op("AffineGrid", theta, size, out="grid")
    g.op("GridSample", x, grid, out="y", mode="linear")
    g.output("y")
    g.output("grid", F16)
    result = fuse_alone(g.model(20))
    assert len(result.report.rewrites) == 1, refusal_reasons(result)
    warnings = " ".join(result.report.rewrites[0].warnings)
    assert "validate holds it to atol" in warnings, warnings


def test_empty_constant_grid_is_refused_not_raised():
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    g.op("GridSample", x, g.const(np.zeros([0, 8, 6, 2], np.float32), "grid"), out="y", mode="linear")
    g.output("y")
    result = fuse_alone(g.model(20))
    assert not result.report.rewrites
    assert " raised " not in refusal_reasons(result), refusal_reasons(result)


def test_grid_for_a_sampler_of_other_align_corners_is_written_once():
    # The grid's align_corners differs from the sampler's: an AffineGrid is written for the
    # sampler to keep reading. It used to be rewritten on every pass (32 rewrites), the last one
    # from the float32 AffineGrid, dropping the half-precision tolerance the first declared.
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    theta = g.op("Cast", g.input("theta", ["N", 2, 3]), to=F16)
    size = g.op("Concat", g.op("Shape", theta, start=0, end=1), g.ints([3, 8, 6]), axis=0)
    grid = g.op("Cast", g.op("AffineGrid", theta, size, align_corners=0), to=TensorProto.FLOAT)
    g.op("GridSample", x, grid, out="y", align_corners=1, mode="linear")
    g.output("y")
    model = g.model(20)
    result = fuse_alone(model)
    assert len(result.report.rewrites) == 1, result.report.summary()
    custom = [n for n in result.model.graph.node if n.domain == "custom.ops"]
    assert [p.key for n in custom for p in n.metadata_props if p.key == "surgeon.atol"], custom
    report = surgeon.validate(model, result.model, input_shapes={"x": [2, 3, 16, 12], "theta": [2, 2, 3]})
    assert report.passed


def _half_theta_grid(mode: str):
    """A float16 theta input into a float16 AffineGrid (size from the image's batch), sampled
    with ``mode`` and border padding, align_corners=1."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    theta = g.input("theta", ["N", 2, 3], F16)
    size = g.op("Concat", g.op("Unsqueeze", g.op("Gather", g.op("Shape", x), g.ints(0), axis=0), g.ints([0])),
                g.ints([3, 24, 20]), axis=0)
    grid = g.op("AffineGrid", theta, size, align_corners=1)
    g.op("GridSample", x, grid, out="y", align_corners=1, mode=mode, padding_mode="border")
    g.output("y")
    return g.model(20)


def test_nearest_sampling_of_a_half_grid_is_refused():
    # The rewrite's float32 grid picks other pixels where the half grid's rounding crosses a
    # pixel edge (errors of 1 on [-1, 1]).
    result = fuse_alone(_half_theta_grid("nearest"))
    assert not result.report.rewrites, result.report.summary()
    assert "nearest sampling of a grid computed in half precision" in refusal_reasons(result), refusal_reasons(result)


def test_half_affine_grid_bilinear_fuses_and_matches():
    # The control: the same half grid sampled bilinearly fuses (emulated as onnxruntime's
    # function body computes it) and validate holds it to the declared tolerance.
    model = _half_theta_grid("linear")
    result = fuse_alone(model)
    assert len(result.report.rewrites) == 1, refusal_reasons(result)
    report = surgeon.validate(model, result.model, input_shapes={"x": [3, 3, 16, 12], "theta": [3, 2, 3]})
    assert report.passed


def _half_grid(hw, padding="zeros", mode="linear"):
    """A float16 theta into AffineGrid, cast to float32 for a float32 image of spatial dims hw."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, *hw])
    theta = g.op("Cast", g.input("theta", ["N", 2, 3]), to=F16)
    size = g.op("Concat", g.op("Shape", theta, start=0, end=1), g.ints([3, 8, 6]), axis=0)
    grid = g.op("Cast", g.op("AffineGrid", theta, size), to=TensorProto.FLOAT)
    g.op("GridSample", x, grid, out="y", mode=mode, padding_mode=padding)
    g.output("y")
    return g.model(20)


def _declared_atol(result) -> float:
    [node] = [n for n in result.model.graph.node if n.domain == "custom.ops"]
    return float({e.key: e.value for e in node.metadata_props}["surgeon.atol"])


@pytest.mark.parametrize("hw, padding, mode, atol", [
    ((16, 12), "zeros", "linear", 0.032), ((16, 12), "border", "linear", 0.032),
    ((16, 12), "zeros", "cubic", 0.056), ((40, 24), "zeros", "linear", 0.08)])
def test_half_grid_tolerance_grows_with_the_image(hw, padding, mode, atol):
    # A half grid's rounding moves samples by a share of the image: in pixels it grows with the
    # size (2026:8245, 2028:26990, 2028:32530 differed past a flat 0.02 at 16 px).
    model = _half_grid(hw, padding, mode)
    result = fuse_alone(model)
    assert len(result.report.rewrites) == 1, refusal_reasons(result)
    assert _declared_atol(result) == pytest.approx(atol)
    report = surgeon.validate(model, result.model, input_shapes={"x": [4, 3, *hw], "theta": [4, 2, 3]})
    assert report.passed and report.outputs[0].atol == pytest.approx(atol), report.summary()


def test_half_grid_sampled_with_reflection_is_refused():
    # Reflection folds coordinates from far outside back in, where half has rounded them by
    # whole pixels: the declared tolerance held at the probe's thetas and not past them.
    result = fuse_alone(_half_grid((16, 12), "reflection"))
    assert not result.report.rewrites, result.report.summary()
    assert "sampled with reflection" in refusal_reasons(result), refusal_reasons(result)


def test_half_grid_of_a_large_image_is_refused():
    result = fuse_alone(_half_grid((256, 256)))
    assert not result.report.rewrites, result.report.summary()
    assert "at 256 px its rounding moves samples so far" in refusal_reasons(result), refusal_reasons(result)


def test_half_grid_of_an_image_of_dynamic_size_is_refused():
    result = fuse_alone(_half_grid(("H", "W")))
    assert not result.report.rewrites, result.report.summary()
    assert "the image's size is not static" in refusal_reasons(result), refusal_reasons(result)


def test_double_native_pair_is_left_as_it_is():
    # the contract's ops take float32 and float16; ONNX's own pair is what a double chain becomes
    result = fuse_alone(_pair(theta_elem=TensorProto.DOUBLE, x_elem=TensorProto.DOUBLE).model(20))
    assert not result.report.rewrites, result.report.summary()
    assert "already ONNX's own AffineGrid + GridSample, what this pattern writes" in refusal_reasons(result)


def test_grid_that_reads_theta_but_ignores_it_is_refused():
    # Clip(theta, 0, 0) inside the decomposition: the grid is the same for every theta, a zero
    # map of it. A rewrite reading theta through that map gives NaN where theta is infinite
    # (2029:18459 divides theta by 0 first); the original gives 0.
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    ys, xs = np.meshgrid((np.arange(8) * 2 + 1) / 8 - 1, (np.arange(6) * 2 + 1) / 6 - 1, indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)], -1).reshape(48, 3, 1).astype(np.float32)
    t = g.op("Unsqueeze", g.op("Transpose", g.input("theta", ["N", 2, 3]), perm=[0, 2, 1]), g.ints([1]))
    t = g.op("Clip", t, g.const(np.float32(0), "lo"), g.const(np.float32(0), "hi"))
    grid = g.op("Reshape", g.op("ReduceSum", g.op("Mul", g.const(base), t), g.ints([-2]), keepdims=0),
                g.ints([-1, 8, 6, 2]))
    g.op("GridSample", x, grid, out="y")
    g.output("y")
    result = fuse_alone(g.model(18))
    assert not result.report.rewrites, result.report.summary()
    assert "(Clip) clamps values that depend on the variables" in refusal_reasons(result), refusal_reasons(result)


def _half_abs_grid(hw):
    """A float16 grid that is no affine grid (Abs of an affine grid), sampled bilinearly from an
    image of spatial dims ``hw``."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, *hw])
    theta = g.input("theta", ["N", 2, 3], F16)
    size = g.op("Concat", g.op("Shape", theta, start=0, end=1), g.ints([3, 8, 6]), axis=0)
    g.op("GridSample", x, g.op("Abs", g.op("AffineGrid", theta, size)), out="y", mode="linear")
    g.output("y")
    return g.model(20)


def test_half_grid_refused_for_its_precision_first_when_that_alone_forbids_it():
    # Unrecognised and held in half precision with a dynamic image: the precision is a hazard
    # whatever the grid computes, so it comes first, then what recognition found.
    reasons = refusal_reasons(fuse_alone(_half_abs_grid(("H", "W"))))
    assert reasons.index("the image's size is not static") < reasons.index("(Abs) is not affine"), reasons


def test_half_grid_of_a_static_image_is_refused_for_what_it_computes_only():
    # The same grid on a static image: half precision alone would allow a declared tolerance.
    reasons = refusal_reasons(fuse_alone(_half_abs_grid((16, 12))))
    assert "(Abs) is not affine" in reasons and "half precision" not in reasons, reasons
