"""A grid term that grows with the positions or dims as a square or faster is refused
(surgeon.recognise.positions): under the tolerance at every size the probes try, it can be
anything past them. Each trap beside its bounded twin (the same term of a normalised
coordinate), which stays under the tolerance at every size and fuses."""

import numpy as np
import pytest
from onnx import TensorProto

import surgeon

from ..builders import GraphBuilder
from .fusing import fuse_alone, refusal_reasons


def _bumped(bump, normalised: bool):
    """AffineGrid(theta) plus ``bump(g, i)`` along x, i the element's column (divided by W when
    ``normalised``)."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    theta = g.input("theta", ["N", 2, 3])
    shape = g.op("Shape", x)
    w = g.op("Cast", g.op("Gather", shape, g.ints(3), axis=0), to=TensorProto.FLOAT)
    i = g.op("Cast", g.op("Range", g.ints(0), g.op("Gather", shape, g.ints(3), axis=0), g.ints(1)),
             to=TensorProto.FLOAT)
    if normalised:
        i = g.op("Div", i, w)
    term = g.op("Reshape", bump(g, i), g.ints([1, 1, -1, 1]))
    g.op("GridSample", x, g.op("Add", g.op("AffineGrid", theta, shape), term), out="y", mode="linear")
    g.output("y")
    return g.model(20)


def _zero_below_1000(g, i):
    """prod over k < 1000 of (i - k) / 1000: exactly 0 at every column under 1,000."""
    k = g.const(np.arange(1000, dtype=np.float32))
    diff = g.op("Sub", g.op("Unsqueeze", i, g.ints([1])), g.op("Unsqueeze", k, g.ints([0])))
    return g.op("ReduceProd", g.op("Div", diff, g.const(np.float32(1000.0))), g.ints([1]), keepdims=0)


def _tiny_power(g, i):
    """1e-38 * i^15 by squarings: under the tolerance up to ~100 columns, 1e7 at 1,000."""
    i2 = g.op("Mul", i, i)
    i4 = g.op("Mul", i2, i2)
    i8 = g.op("Mul", i4, i4)
    power = g.op("Mul", g.op("Mul", g.op("Mul", i8, i4), i2), i)
    return g.op("Mul", g.op("Mul", power, g.const(np.float32(1e-19))), g.const(np.float32(1e-19)))


@pytest.mark.parametrize("bump, op", [(_zero_below_1000, "ReduceProd"), (_tiny_power, "Mul")])
def test_a_term_growing_as_a_square_or_faster_is_refused(bump, op):
    reasons = refusal_reasons(fuse_alone(_bumped(bump, normalised=False)))
    assert "grow as the power" in reasons and f"({op})" in reasons, reasons


def test_the_tiny_power_is_what_the_probes_cannot_see():
    # why it is refused: at 1,200 columns the original is far from any affine grid
    model = _bumped(_tiny_power, normalised=False)
    rng = np.random.default_rng(0)
    feeds = {"x": rng.normal(size=(1, 3, 8, 1200)).astype(np.float32),
             "theta": np.array([[[1.0, 0.1, 0.0], [0.0, 1.0, 0.0]]], np.float32)}
    y = surgeon.run(model, feeds, quiet=True)["y"]
    plain = surgeon.run(_bumped(lambda g, i: g.op("Mul", i, g.const(np.float32(0.0))), normalised=False), feeds,
                        quiet=True)["y"]
    assert np.abs(y - plain).max() > 0.1


@pytest.mark.parametrize("bump", [_tiny_power])
def test_the_same_term_of_a_normalised_coordinate_fuses(bump):
    # (i / W)^15 * 1e-38 is under 1e-38 at every size: within rounding of the affine grid
    model = _bumped(bump, normalised=True)
    result = fuse_alone(model)
    assert len(result.report.rewrites) == 1, refusal_reasons(result)
