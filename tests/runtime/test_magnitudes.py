"""Issue 41, the scale draws: each row or channel at a magnitude of its own, 1e-4 to 1e4."""

import numpy as np
import pytest

from surgeon.validate.magnitudes import describe, draw, group_shape


@pytest.mark.parametrize("shape, groups", [((1, 3, 28, 28), (1, 3, 1, 1)), ((2, 512), (2, 1)),
                                           ((1, 1, 64), (1, 1, 1)), ((16,), (1,)), ((4, 1, 8), (4, 1, 1))])
def test_groups_are_the_fewest_leading_axes_that_give_two(shape, groups):
    assert group_shape(shape) == groups


def _row_sizes(x):
    return np.abs(x.astype(np.float64)).reshape(x.shape[0], -1).max(axis=1)


def test_small_and_large_rows_stay_in_their_range_and_spread_rows_span_it():
    rng = np.random.default_rng(0)
    small, large = draw((64, 32), np.float32, rng, "small"), draw((64, 32), np.float32, rng, "large")
    assert 1e-4 <= _row_sizes(small).min() and _row_sizes(small).max() <= 8e-2
    assert 1e2 <= _row_sizes(large).min() and _row_sizes(large).max() <= 8e4
    spread = _row_sizes(draw((64, 32), np.float32, rng, "spread"))
    assert spread.min() < 1e-3 and spread.max() > 1e3  # one stratum per row: the whole range covered
    assert (small < 0).any() and (large < 0).any()  # signed: gates far negative too
    assert describe("small", np.float32) == "small: rows at 1e-4..1e-2"


def test_float16_keeps_its_squares_finite():
    x = draw((8, 16), np.float16, np.random.default_rng(1), "large")
    assert np.isfinite(x.astype(np.float32) ** 2).all() and np.isfinite((x * x)).all()
