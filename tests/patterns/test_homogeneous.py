"""A perspective warp of a homogeneous matrix whose last row the model builds as (0, 0, 1)
(kornia's ``warp_perspective`` of ``[M; 0 0 1]``, inverted inside the model): the divide by the
third coordinate is a divide by exactly 1, proved above the cut (surgeon.recognise.exact), so it
fuses, dynamo's plain divide and TorchScript's guarded one alike. Beside it what is not affine:
a run-time last row, a corner scaled by data, a row picked at an index that follows a dim."""

import numpy as np
import pytest

import surgeon

from ..builders import homogeneous_perspective, padded_row_perspective
from ..error_bounds import assert_warp_outputs
from .fusing import exact_verdicts, fuse_alone, refusal_reasons
from .rewritten_graphs import op_counts
from .runner import ort_run, run_split

RNG = np.random.default_rng(11)


def _feeds(batch: int, w: int = 12):
    m = np.tile(np.eye(2, 3, dtype=np.float32), (batch, 1, 1)) + 0.3 * RNG.standard_normal((batch, 2, 3)).astype(np.float32)
    return {"x": RNG.random((batch, 3, 16, w), dtype=np.float32), "M": m}


def _theta(m: np.ndarray) -> np.ndarray:
    """The first two rows of [M; 0 0 1]'s inverse: the affine map the warp samples by."""
    h = np.concatenate([m.astype(np.float64), np.tile([[[0.0, 0.0, 1.0]]], (len(m), 1, 1))], axis=1)
    return np.linalg.inv(h)[:, :2, :]


@pytest.mark.parametrize("divide", ["plain", "guarded"])
def test_a_last_row_the_model_fixes_fuses(divide):
    model = homogeneous_perspective("fixed", divide)
    result = fuse_alone(model)
    counts = op_counts(result.model)
    assert counts["custom.ops::FusedGridSample"] == 1, result.report.summary()
    # the per-pixel product, its divide (and guard) are gone; the inverse above the cut stays
    assert not {"GridSample", "MatMul", "Transpose", "Abs", "Reciprocal", "Where", "Greater"} & set(counts), counts
    assert counts["Div"] == 1  # the inverse's own: adjugate / determinant
    for batch in (2, 3):
        feeds = _feeds(batch)
        (want,) = ort_run(model, feeds)
        (got,) = run_split(result.model, feeds)
        assert_warp_outputs(got, want, feeds, theta=_theta(feeds["M"]), align_corners=True, mode="bilinear",
                            padding="zeros")
    report = surgeon.validate(model, result.model, far=True, quiet=True)
    assert report.passed, report.summary()


@pytest.mark.parametrize("divide", ["plain", "guarded"])
@pytest.mark.parametrize("last_row, why", [
    ("data", "not affine in theta"),  # a free homography: projective
    ("scaled", "not affine in theta"),  # (0, 0, s): a divide by data
    ("picked", "not affine in theta"),  # (0, 0, 1) only up to W = 12: no fact, a projective divide
])
def test_a_last_row_no_op_fixes_is_refused(last_row, divide, why):
    model = homogeneous_perspective(last_row, divide)
    result = fuse_alone(model)
    assert not result.report.rewrites
    reasons = refusal_reasons(result)
    assert why in reasons and ("Div" in reasons if divide == "plain" else "Abs" in reasons), reasons


def test_kornias_padded_per_row_perspective_fuses_at_the_size_it_runs(monkeypatch):
    # kornia 0.9.2 under TorchScript: the image padded by F.pad (zero on the batch: the Pad keeps
    # it), a size-1 guard per axis (a branch only at 1), the inverse tiled per row by a count the
    # trace baked (the model runs only at H = 16); refused for Abs before the Pad kept its batch
    seen = exact_verdicts(monkeypatch)
    model = padded_row_perspective()
    result = fuse_alone(model)
    counts = op_counts(result.model)
    assert counts["custom.ops::FusedGridSample"] == 1, refusal_reasons(result)
    assert not {"GridSample", "MatMul", "Tile", "Abs", "Reciprocal"} & set(counts), counts
    fused = next(n for n in result.model.graph.node if n.op_type == "FusedGridSample")
    assert {p.key: p.value for p in fused.metadata_props}.get("surgeon.runs_at") == "x[2]=16", fused
    # proved for every size, H held at the 16 the broadcast enforces
    assert len(seen) == 1 and seen[0].startswith("proved where") and "= 16" in seen[0], seen
    for batch, w in ((2, 12), (3, 9), (2, 1)):
        feeds = _feeds(batch, w)
        (want,) = ort_run(model, feeds)
        (got,) = run_split(result.model, feeds)
        assert_warp_outputs(got, want, feeds, theta=_theta(feeds["M"]), align_corners=True, mode="bilinear",
                            padding="zeros")


def test_the_per_row_perspective_with_a_free_last_row_is_refused():
    # the same spelling when the last row is data: a projective divide the Abs guard does not hide
    model = padded_row_perspective(last_row="data")
    result = fuse_alone(model)
    assert not result.report.rewrites and "not affine" in refusal_reasons(result), refusal_reasons(result)
