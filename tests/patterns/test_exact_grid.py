"""The identified grid checked for every size by its exact expression (patterns/exact_grid.py):
terms that grow only as fast as the positions or dims, with coefficients the probes' sizes hide,
are refused; the same terms below rounding at every size up to 65,536 fuse; each trap beside its
twin, and the real spellings still fuse with the check done ("proved")."""

import numpy as np
import pytest
from onnx import TensorProto

import surgeon

from ..builders import GraphBuilder
from .fusing import exact_verdicts, fuse_alone, refusal_reasons
from .pixel_grids import corner_pixels
from .runner import ort_run, run_split


def _grid_plus(term, dynamic: bool = True):
    """AffineGrid(theta) of the image's size plus ``term(g, column, width)`` along x, in float32:
    ``column`` is the element's column index, ``width`` the image's W, both as floats."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"] if dynamic else ["N", 3, 8, 12])
    theta = g.input("theta", ["N", 2, 3])
    shape = g.op("Shape", x)
    width = g.op("Gather", shape, g.ints(3), axis=0)
    column = g.op("Cast", g.op("Range", g.ints(0), width, g.ints(1)), to=TensorProto.FLOAT)
    w = g.op("Cast", width, to=TensorProto.FLOAT)
    bump = g.op("Reshape", term(g, column, w), g.ints([1, 1, -1, 1]))
    zero_y = g.op("Concat", g.const(np.ones((1, 1, 1, 1), np.float32)), g.const(np.zeros((1, 1, 1, 1), np.float32)),
                  axis=3)
    g.op("GridSample", x, g.op("Add", g.op("AffineGrid", theta, shape), g.op("Mul", bump, zero_y)), out="y",
         mode="linear")
    g.output("y")
    return g.model(20)


def _scaled(k):
    return lambda g, column, w: g.op("Mul", column, g.const(np.float32(k)))


def _per_width(k):
    return lambda g, column, w: g.op("Mul", g.op("Mul", column_or_one(g, column), w), g.const(np.float32(k)))


def column_or_one(g, column):
    """1 wherever the column is: column / column would be NaN at 0, so column * 0 + 1."""
    return g.op("Add", g.op("Mul", column, g.const(np.float32(0.0))), g.const(np.float32(1.0)))


@pytest.mark.parametrize("term", [_scaled(1e-8), _per_width(1e-8), _scaled(3e-8)])
def test_a_term_the_probes_sizes_hide_is_refused(term):
    # 1e-8 * column: 1e-7 at the probes' widths, under the tolerance; 6.5e-4 at 65,536 columns
    result = fuse_alone(_grid_plus(term))
    reasons = refusal_reasons(result)
    assert not result.report.rewrites and "not affine_grid at every size" in reasons, reasons
    assert "term in the constant part" in reasons and "W (x[3])=65536" in reasons, reasons


def test_the_hidden_term_is_real():
    # why: at 60,000 columns the original is 6e-4 of a coordinate (0.2 of a pixel) off the affine grid
    model, plain = _grid_plus(_scaled(1e-8)), _grid_plus(_scaled(0.0))
    feeds = {"x": np.random.default_rng(0).normal(size=(1, 3, 2, 60000)).astype(np.float32),
             "theta": np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], np.float32)}
    a, b = surgeon.run(model, feeds, quiet=True)["y"], surgeon.run(plain, feeds, quiet=True)["y"]
    assert np.abs(a - b).max() > 0.05


@pytest.mark.parametrize("term", [_scaled(1e-17), _scaled(0.0), _per_width(1e-17)])
def test_a_term_under_rounding_at_every_size_fuses(term, monkeypatch):
    seen = exact_verdicts(monkeypatch)
    result = fuse_alone(_grid_plus(term))
    assert len(result.report.rewrites) == 1, refusal_reasons(result)
    assert seen == ["proved"], seen


def test_static_sizes_are_evaluated_whole_by_the_probes(monkeypatch):
    # every element of a static-size grid is computed at each probe: nothing is left to extrapolate
    seen = exact_verdicts(monkeypatch)
    result = fuse_alone(_grid_plus(_scaled(1e-8), dynamic=False))
    assert len(result.report.rewrites) == 1, refusal_reasons(result)
    assert len(seen) == 1 and "each probe evaluates every element" in seen[0], seen


def test_fitted_noise_is_dropped_and_the_grid_holds_far_past_the_probes(monkeypatch):
    # the pixel-space grid's translation is fitted over monomials of H and W; weights of 4e-9
    # on W / H fitted to float32 samples were 1e-4 of a coordinate (3.5 pixels) at 2 x 65,536
    seen = exact_verdicts(monkeypatch)
    model = corner_pixels()
    result = fuse_alone(model)
    assert len(result.report.rewrites) == 1 and seen == ["proved"], (refusal_reasons(result), seen)
    feeds = {"x": np.random.default_rng(1).standard_normal((1, 3, 2, 65536)).astype(np.float32)}
    got, want = run_split(result.model, feeds)[0], ort_run(model, feeds)[0]
    assert np.abs(got - want).max() < 2e-2  # float32 rounding of coordinates at 65,536 columns (1.53 with the noise)
