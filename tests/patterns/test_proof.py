"""Issue 27: affinity proved from the ops, not sampled. Every trap that bends only far from the
probes is refused with a reason naming its op, branch, leaf or precision step; its twin without
the trap fuses and equals the original on inputs far past the probes; and the negative controls
stay untouched."""

import numpy as np
import pytest

from ..error_bounds import assert_warp_outputs
from . import traps_proof as T
from .fusing import fuse_alone, refusal_reasons
from .rewritten_graphs import op_counts
from .runner import ort_run, run_split


def far_feeds(model, seed=0, batch=3, inf_at=None):
    """Inputs past every probe: thetas with entries of tens, translations past the image, dims
    the probes never take; ``inf_at``: flat positions of each theta item set to inf."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for vi in model.graph.input:
        dims = [d.dim_value or {"N": batch, "H": 67, "W": 71}.get(d.dim_param, 5)
                for d in vi.type.tensor_type.shape.dim]
        elem = vi.type.tensor_type.elem_type
        if elem == 7:  # int64
            feeds[vi.name] = np.full(dims, 3, np.int64)
            continue
        dtype = {1: np.float32, 10: np.float16, 11: np.float64}[elem]
        if vi.name == "x":
            feeds[vi.name] = rng.uniform(-1, 1, dims).astype(dtype)
            continue
        value = rng.normal(0, 12, dims)
        if inf_at is not None:
            value.reshape(value.shape[0], -1)[:, inf_at] = np.inf
        feeds[vi.name] = value.astype(dtype)
    return feeds


def assert_fused_and_equal(model, count=1, **feed_kw):
    result = fuse_alone(model)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == count, result.report.summary()
    declared = [float(p.value) for n in result.model.graph.node for p in n.metadata_props if p.key == "surgeon.atol"]
    for seed in range(2):
        feeds = far_feeds(model, seed, **feed_kw)
        want, got = ort_run(model, feeds)[0], run_split(result.model, feeds)[0]
        assert np.isfinite(want).all() == np.isfinite(got).all()
        # coordinates of hundreds of pixels: float32 rounding of the two orders of summation; a
        # half-precision original: the tolerance the rewrite declares
        tol = max(declared + [1e-3])
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=tol)
    return result


TRAPS = {
    "clamp of the grid at 20": (lambda t: T.grid_op("Clip", t), "Clip_", "clamps values that depend on"),
    "wrap with Mod": (lambda t: T.grid_op("Mod", t), "(Mod)", "is not affine"),
    "tiny quadratic term": (lambda t: T.grid_op("Square", t), "(Mul)", "multiplies two values that both depend"),
    "grid rounded to 2^-16": (lambda t: T.grid_op("Round", t), "(Round)", "rounds values that depend on"),
    "int input gate k > 0": (lambda t: T.int_gate("greater", t), "(Greater)", "run-time integer input 'k'"),
    "int input gate min(float(k), 1)": (lambda t: T.int_gate("min", t), "(Cast)", "run-time integer input 'k'"),
    "columns picked by an int input": (T.int_index, "(Slice)", "not pick elements"),
    # the contract's op would round theta; ONNX's own pair, which the trap already is, does not
    "float64 theta narrowed": (lambda t: T.precision("double", t), "already ONNX's own AffineGrid", "nothing to gain"),
    "float16 grid with reflection": (lambda t: T.precision("half", t), "sampled with reflection", "no tolerance"),
    "overridable base grid": (lambda t: T.overridable("base", t), "'base", "a default the caller may override"),
}


def test_value_info_lie_is_not_believed():
    # The grid declared [N, 16, 12, 2] while it follows x's dynamic H and W: the rewrite's output
    # size follows x, as the original's does.
    model = T.value_info_lie()
    result = assert_fused_and_equal(model)
    [node] = [n for n in result.model.graph.node if n.domain == "custom.ops"]
    assert len(node.input) == 3 and not any(a.name == "output_size" for a in node.attribute)


@pytest.mark.parametrize("name", list(TRAPS))
def test_trap_refused_by_name(name):
    build, op, what = TRAPS[name]
    result = fuse_alone(build(True))
    assert not result.report.rewrites, result.report.summary()
    assert op in refusal_reasons(result) and what in refusal_reasons(result), refusal_reasons(result)


@pytest.mark.parametrize("name", [n for n in TRAPS if "int input" not in n])
def test_twin_without_the_trap_fuses_and_is_equal_far_from_the_probes(name):
    build = TRAPS[name][0]
    assert_fused_and_equal(build(False))


@pytest.mark.parametrize("build", [
    lambda: T.theta_op("ClipShift"), lambda: T.theta_op("DetGuard"), lambda: T.theta_op("FixedPoint"),
    T.homogeneous_divide, T.second_matrix_clamped, lambda: T.size_branch("batch")])
def test_ops_before_a_computed_theta_stay_in_the_graph(build):
    # The cut is the theta the grid is affine in: a clamp, a guard or a threshold that computes
    # that theta stays outside the rewrite, and the rewrite reads its result.
    model = build()
    result = assert_fused_and_equal(model)
    kept = {n.op_type for n in result.model.graph.node}
    assert kept & {"Clip", "Where", "Cast", "Div", "MatMul", "Gather"}, kept


@pytest.mark.parametrize("kind, position", [("row", 8), ("shift", 2)])
def test_the_rewrite_reads_only_what_the_original_reads(kind, position):
    # A homogeneous matrix's last row, or a translation, the original never reads: inf there
    # leaves the original finite, and the rewrite too (no 0 * inf from a map over every element).
    model = T.unread_elements(kind)
    assert_fused_and_equal(model, inf_at=position)


def test_overridable_theta_is_read_at_run_time():
    # theta is an initializer listed among the inputs (IR >= 4): a default the caller may
    # override. The rewrite reads that input; with the default dropped (what an override does)
    # both models follow the fed theta.
    model = T.overridable("theta")
    name = next(i.name for i in model.graph.input if i.name != "x")
    result = fuse_alone(model)
    [node] = [n for n in result.model.graph.node if n.domain == "custom.ops"]
    assert node.input[1] == name, (list(node.input), result.report.summary())
    feeds = {"x": np.random.default_rng(0).random((1, 3, 16, 12), dtype=np.float32)}
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, fused=result.model)
    feeds[name] = np.array([[[1.5, -0.3, 0.2], [0.4, 0.9, -0.7]]], np.float32)
    for m in (model, result.model):
        kept = [t for t in m.graph.initializer if t.name != name]
        del m.graph.initializer[:]
        m.graph.initializer.extend(kept)
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, fused=result.model)


def test_initializers_listed_as_inputs_in_old_irs_are_constants():
    # Before IR 4 every initializer had to be listed among the inputs: onnxruntime keeps it
    # constant (a feed for it is refused), and so does the matcher.
    model = T.overridable("base")
    model.ir_version = 3
    result = fuse_alone(model)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()


def test_batch_baked_into_a_constant_size_fuses_at_that_batch():
    # Traced at batch 1 and declared dynamic: the original runs only at N=1, and so does the rewrite.
    model = T.baked_batch_size()
    result = fuse_alone(model)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
    assert any("only runs with N=1" in w for r in result.report.rewrites for w in r.warnings)
    feeds = far_feeds(model, batch=1)
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, fused=result.model)


def test_a_height_baked_into_a_reshape_is_where_validate_draws():
    """The base grid is a 16 x 12 constant reshaped to [N, H, 12, 2] with H read off the image:
    the original runs at H = 16 only, declared dynamic. The rewrite says so (``runs_at``), and
    validate draws H = 16 instead of its default 1, where the original does not run."""
    import surgeon
    from ..builders import baked_base_grid
    model = baked_base_grid("h")
    result = fuse_alone(model)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
    (node,) = [n for n in result.model.graph.node if n.op_type == "FusedGridSample"]
    assert {e.key: e.value for e in node.metadata_props}["surgeon.runs_at"] == "x[2]=16"
    report = surgeon.validate(model, result.model, far=True, quiet=True)
    assert report.passed, report.summary()
    assert report.inputs[0]["shape"][2] == 16


@pytest.mark.parametrize("build, what", [
    (T.projective_input, "(Div) divides by a value that depends on the variables"),
    (T.conv_offset, "run-time data other than one theta-shaped tensor ('x')"),
    (lambda: T.grid_op("Clip"), "(Clip) clamps values")])
def test_negative_controls_untouched(build, what):
    result = fuse_alone(build())
    assert not result.report.rewrites, result.report.summary()
    assert what in refusal_reasons(result), refusal_reasons(result)
