"""Issue 20's silent wrong rewrites, each class closed: a non-linear op on single theta
coefficients, size-1 dims with align_corners=1, a dim trusted by its symbol. Each refused case
names what disagreed; each fused one equals the original on inputs that flip and rotate."""

import numpy as np
import pytest

from surgeon_ops.draws import draw_theta
from surgeon.recognise import KIND_COUNT, probe_matrices

from ..builders import GraphBuilder, native_pair
from ..error_bounds import assert_warp_outputs
from .fusing import fuse_alone, refusal_reasons
from .rewritten_graphs import op_counts
from .runner import ort_run, run_split
from .traps import ELEMENTWISE_OPS, coefficient_op, shared_symbol, shifted_by, size_one_special


def signed_inputs(x_shape, theta_shape, seed=0):
    rng = np.random.default_rng(seed)
    return {"x": rng.random(x_shape, dtype=np.float32), "theta": draw_theta(theta_shape, np.float32, rng)}


# -- (a) non-linear ops on theta coefficients ----------------------------------------------------

@pytest.mark.parametrize("op", [op for op in ELEMENTWISE_OPS if op != "Neg"])
@pytest.mark.parametrize("index", [0, 2, 4])
def test_nonlinear_coefficient_refused_with_what_disagreed(op, index):
    model = coefficient_op(op, index)
    result = fuse_alone(model)
    assert not result.report.rewrites, result.report.summary()
    reason = refusal_reasons(result)
    # proved, not sampled: the refusal names the op on theta's path
    assert "the grid is not affine in theta" in reason and f"({op})" in reason, reason


@pytest.mark.parametrize("index", [0, 2, 4])
def test_linear_twin_and_negation_fuse_and_match(index):
    # Controls: no op, or Neg (linear: an affine map of theta), fuse and equal the original on
    # inputs that reflect and rotate.
    for op in (None, "Neg"):
        model = coefficient_op(op, index)
        result = fuse_alone(model)
        assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, (op, result.report.summary())
        for seed in range(3):
            feeds = signed_inputs([3, 3, 16, 12], [3, 2, 3], seed)
            assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, fused=result.model)


def test_probe_matrices_span_signs_and_magnitudes():
    thetas, labels = probe_matrices(KIND_COUNT, 2, 3, 2, 0, 0)
    assert len(set(labels)) == KIND_COUNT
    for entry in thetas.reshape(KIND_COUNT, -1).T:  # every coefficient takes both signs
        assert (entry > 0.1).any() and (entry < -0.1).any()
    assert np.abs(thetas[:, :, 2]).max() > 5 and np.abs(thetas[:, :, :2]).max() > 5
    linear = thetas[:, :, :2]
    assert (np.linalg.det(linear) < 0).any()  # reflections
    assert (np.einsum("nii->n", linear) < 0).any()  # rotations past 90 degrees
    assert len({tuple(t.round(6).ravel()) for t in thetas}) == KIND_COUNT


@pytest.mark.parametrize("op,index", [("Abs", 0), ("Relu", 4), ("Sign", 0), ("Floor", 4), ("Clip", 2)])
def test_draw_theta_reveals_what_near_identity_draws_hide(op, index):
    # What validate needs: the trap and its linear twin differ on draw_theta's inputs, and agree
    # on thetas drawn from [0, 1) around the identity (what --validate used to draw).
    trap, twin = coefficient_op(op, index), coefficient_op(None, index)
    rng = np.random.default_rng(0)
    x = rng.random((16, 3, 16, 12), dtype=np.float32)
    theta = draw_theta((16, 2, 3), np.float32, rng)
    assert np.abs(ort_run(trap, {"x": x, "theta": theta})[0] - ort_run(twin, {"x": x, "theta": theta})[0]).max() > 0.1
    if op in ("Abs", "Relu", "Clip"):  # the identity near the identity (Sign and Floor are not)
        old = (np.eye(2, 3) + 0.1 * rng.random((16, 2, 3))).astype(np.float32)
        assert np.abs(ort_run(trap, {"x": x, "theta": old})[0] - ort_run(twin, {"x": x, "theta": old})[0]).max() < 1e-5


# -- (b) size-1 dims with align_corners=1 --------------------------------------------------------

@pytest.mark.parametrize("out", [[1, 8], [6, 1], [1, 1]])
def test_size_one_static_equals_the_original(out):
    model = native_pair(ac=1, out=out)
    result = fuse_alone(model)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1
    feeds = signed_inputs([2, 3, 16, 12], [2, 2, 3])
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, fused=result.model)


@pytest.mark.parametrize("with_theta", [True, False])
@pytest.mark.parametrize("value", [0.0, -1.0, 1.0, 0.5])
def test_size_one_special_case_is_proved_on_both_sides(value, with_theta):
    # Where(H == 1, value, linspace) and Max(H - 1, 1): branches on a dynamic H that go the other
    # way only at H = 1. Proved for H >= 2 and at H = 1 on its own (surgeon.recognise.small_dims), the grid is
    # affine_grid(theta) on both sides where the single row sits at a coordinate the rewrite
    # reproduces (torch's 0, ONNX's -1, onnxruntime's +1), and refused at 0.5, naming H = 1;
    # fixed dims fold the branch either way, and the grid then fuses and equals the original.
    model = size_one_special(value, with_theta=with_theta)
    result = fuse_alone(model)
    if value == 0.5:
        assert not result.report.rewrites, result.report.summary()
        assert "with H=1 (x[2]), the grid is not affine_grid" in refusal_reasons(result)
    else:
        assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
    for h in (1, 2, 7):
        feeds = signed_inputs([2, 3, h, 12], [2, 2, 3]) if with_theta else \
            {"x": np.random.default_rng(3).random([2, 3, h, 12], dtype=np.float32)}
        if value != 0.5:
            theta = None if with_theta else np.array([[[0.8, 0, 0.1], [0, -0.6, -0.2]]] * 2)  # the trap's constants
            assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, theta=theta,
                                what=f"H={h}")
        if h == 2:
            continue
        fixed = fuse_alone(model, input_shapes={"x": [2, 3, h, 12], **({"theta": [2, 2, 3]} if with_theta else {})})
        assert op_counts(fixed.model)["custom.ops::FusedGridSample"] == 1, (h, fixed.report.summary())
        assert_warp_outputs(run_split(fixed.model, feeds)[0], ort_run(model, feeds)[0], feeds, fused=fixed.model)


# -- (c) nothing decided from a dim's name -------------------------------------------------------

def test_shared_symbol_is_not_a_shared_value():
    # x [N, 3, H, N]: W declared with the batch's symbol. The output's W is x's W, not its N.
    model = shared_symbol()
    result = fuse_alone(model)
    assert op_counts(result.model) == {"Shape": 1, "custom.ops::FusedGridSample": 1}
    for shape in ([2, 3, 8, 5], [3, 3, 6, 3], [1, 3, 4, 7]):
        feeds = signed_inputs(shape, [shape[0], 2, 3])
        got, want = run_split(result.model, feeds)[0], ort_run(model, feeds)[0]
        assert got.shape == want.shape == tuple(shape)
        assert_warp_outputs(got, want, feeds)


def test_names_never_merge_probe_classes():
    from surgeon.recognise import Symbols

    sym = Symbols({"x": ("N", 3, "H", "N"), "theta": ("N", 2, 3)}, "x", "theta")
    assert len(sym.classes) == 4 and len({c for c in sym.owners["x"] if not isinstance(c, int)}) == 3


# -- a theta that depends on more than theta -----------------------------------------------------

def test_shift_by_a_power_of_a_dynamic_dim_follows_it():
    # grid + [1/W, 0] is affine_grid of theta with 1/W added to its x translation: the rewrite
    # computes 1/W from x's shape at run time (surgeon/recognise/scaling.py), equal at every width.
    model = shifted_by("width")
    result = fuse_alone(model)
    counts = op_counts(result.model)
    assert counts["custom.ops::FusedGridSample"] == 1 and counts["Reciprocal"] == 1, result.report.summary()
    for width in (12, 5, 37, 1):
        feeds = signed_inputs([2, 3, 16, width], [2, 2, 3])
        assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, what=f"W={width}")


@pytest.mark.parametrize("what", ["width+1", "width+square"])
def test_shift_by_other_functions_of_a_dynamic_dim_is_refused(what):
    # 1/(W + 1) and 1/W + 1/W^2 change with W, but not as one power of it
    result = fuse_alone(shifted_by(what))
    assert not result.report.rewrites
    assert "depends on W (x[3])" in refusal_reasons(result), refusal_reasons(result)


def test_shift_by_a_static_dim_is_a_map():
    model = shifted_by("width", symbolic_w=False)
    result = fuse_alone(model)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
    feeds = signed_inputs([3, 3, 16, 12], [3, 2, 3])
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, fused=result.model)


def test_shift_by_the_item_index_is_refused():
    result = fuse_alone(shifted_by("item"))
    assert not result.report.rewrites
    assert "not affine_grid" in refusal_reasons(result), refusal_reasons(result)


def wrapped_theta_beside_an_identity_grid():
    """theta' = fmod(theta + 30, 60) - 30 into AffineGrid, added to an identity grid (an
    AffineGrid of an identity expanded to the batch) and that identity taken off again: the
    displacement form. The identity's matrix is built from sizes and constants: part of the
    grid's computation, so the cut is theta' itself, not the tensor before the Sub (a map fitted
    there holds -30 only to float32's rounding at 30, and is off by 1e-5 where theta' is near 0)."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    shape = g.op("Shape", x)
    theta = g.op("Sub", g.op("Mod", g.op("Add", g.input("theta", ["N", 2, 3]), g.const(np.float32(30))),
                             g.const(np.float32(60)), fmod=1), g.const(np.float32(30)))
    batch = g.op("Concat", g.op("Gather", shape, g.ints([0]), axis=0), g.ints([2, 3]), axis=0)
    identity = g.op("AffineGrid", g.op("Expand", g.const(np.eye(2, 3, dtype=np.float32)[None]), batch), shape)
    moved = g.op("AffineGrid", theta, shape)
    g.op("GridSample", x, g.op("Add", identity, g.op("Sub", moved, identity)), out="y")
    g.output("y")
    return g.model(20)


def test_a_grid_ops_matrix_of_sizes_and_constants_is_no_theta():
    model = wrapped_theta_beside_an_identity_grid()
    result = fuse_alone(model)
    counts = op_counts(result.model)
    assert counts["custom.ops::FusedGridSample"] == 1 and "MatMul" not in counts, result.report.summary()
    rng = np.random.default_rng(3)
    for scale in (0.5, 3.0):
        feeds = {"x": rng.standard_normal((2, 3, 16, 12)).astype(np.float32),
                 "theta": (rng.standard_normal((2, 2, 3)) * scale).astype(np.float32)}
        wrapped = np.fmod(feeds["theta"] + np.float32(30), np.float32(60)) - np.float32(30)
        assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, theta=wrapped)
