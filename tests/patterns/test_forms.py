"""Forms that used to be refused, built by hand (the torch-exported ones are samples): sizes given
as data, constant grids tiled to a dynamic batch or fixed per item, a cut found by walking
through a derived theta-shaped value, casts and axis swaps around the grid, a dynamic theta
batch that broadcasts."""

import numpy as np

from surgeon_ops.draws import draw_theta

from ..builders import native_pair
from ..error_bounds import assert_warp_outputs
from .forms import (constant_grid, cast_and_swapped_grid, expanded_theta_batch, pixel_grid, size_from_data,
                    theta_and_its_transpose, tiled_constant_grid)
from .fusing import fuse_alone, fuse_sample
from .rewritten_graphs import custom_nodes, declared, op_counts
from .runner import attrs_of, ort_run, run_split

RNG = np.random.default_rng(11)


def feeds_for(x_shape, theta_shape=None, name="theta", **extra):
    feeds = {"x": RNG.random(x_shape, dtype=np.float32), **extra}
    if theta_shape:
        feeds[name] = draw_theta(theta_shape, np.float32, RNG)
    return feeds


def assert_same(model, result, feeds, tol=None, theta=None):
    """The rewrite against the original in onnxruntime: within the bound of two computations of
    the warp (of ``theta`` where the model holds it), or ``tol`` where the original itself
    rounds more (a half-precision grid)."""
    got, want = run_split(result.model, feeds)[0], ort_run(model, feeds)[0]
    if tol is None:
        assert_warp_outputs(got, want, feeds, theta)
    else:
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# -- the output size as data ---------------------------------------------------------------------

def test_size_input_passes_through_with_symbolic_dims():
    result = fuse_sample("native_size_input_opset20.onnx")
    (node,) = custom_nodes(result.model)
    assert len(node.input) == 3 and "output_size" not in attrs_of(node)
    assert declared(result.model, "y")[1] == ["N", 3, "size_2", "size_3"]


def test_size_input_stays_data_under_input_shape():
    # --input-shape fixes shapes, not the values of a size input: the size stays an input.
    result = fuse_sample("native_size_input_opset20.onnx", input_shapes={"x": [2, 3, 16, 12], "theta": [2, 2, 3]})
    (node,) = custom_nodes(result.model)
    assert len(node.input) == 3


def test_constant_size_folds_to_output_size():
    result = fuse_alone(native_pair(size="static", out=[9, 7]))
    (node,) = custom_nodes(result.model)
    assert attrs_of(node)["output_size"] == [9, 7] and len(node.input) == 2


def test_size_elements_from_an_int_input():
    model = size_from_data()
    result = fuse_alone(model)
    (node,) = custom_nodes(result.model)
    assert len(node.input) == 3
    for hw in ([5, 9], [1, 4], [13, 2]):
        assert_same(model, result, feeds_for([2, 3, 16, 12], [2, 2, 3], hw=np.array(hw, np.int64)))


# -- grids that read no theta --------------------------------------------------------------------

def test_constant_grid_tiled_to_a_dynamic_batch():
    theta = [[[0.7, -0.4, 0.2], [0.35, 0.8, -0.1]]]
    model = tiled_constant_grid(pixel_grid(10, 8, theta))
    result = fuse_alone(model)
    assert {"Expand", "custom.ops::FusedGridSample"} <= set(op_counts(result.model))
    assert "Tile" not in op_counts(result.model)
    for batch in (1, 2, 5):
        assert_same(model, result, feeds_for([batch, 3, 16, 12]), theta=np.array(theta * batch))


def test_tiled_grid_that_is_not_affine_is_refused():
    grid = pixel_grid(10, 8, [[[0.7, -0.4, 0.2], [0.35, 0.8, -0.1]]])
    grid[0, 3, 4, 0] += 0.05  # one point off the plane
    model = tiled_constant_grid(grid)
    result = fuse_alone(model)
    assert not result.report.rewrites
    assert "reads no theta and is not affine_grid(theta) for any theta" in result.report.refusals[0].reason


def test_constant_grid_per_item_with_a_static_batch():
    thetas = [[[0.9, 0.1, 0.0], [-0.1, 0.9, 0.2]], [[-0.6, 0.3, 0.1], [0.2, 1.4, -0.3]]]
    model = constant_grid(pixel_grid(7, 5, thetas), batch=2)
    result = fuse_alone(model)
    assert op_counts(result.model) == {"custom.ops::FusedGridSample": 1}
    assert_same(model, result, feeds_for([2, 3, 16, 12]), theta=np.array(thetas))


# -- cuts, casts and axis orders -----------------------------------------------------------------

def test_several_theta_shaped_values_walked_through_to_one():
    model = theta_and_its_transpose()
    result = fuse_alone(model)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
    for batch in (1, 3):
        m = draw_theta([batch, 3, 3], np.float32, RNG)
        assert_same(model, result, feeds_for([batch, 3, 16, 12], M=m))


def test_casts_and_swapped_axes_around_the_grid():
    model = cast_and_swapped_grid()
    result = fuse_alone(model)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
    # The original rounds its grid to float16 on the way: the rewrite differs by that much only.
    assert_same(model, result, feeds_for([2, 3, 16, 12], [2, 2, 3]), tol=2e-2)


def test_dynamic_theta_batch_that_broadcasts_is_expanded():
    model = expanded_theta_batch()
    result = fuse_alone(model)
    assert {"Expand", "custom.ops::FusedGridSample"} <= set(op_counts(result.model)), result.report.summary()
    for batch, theta_batch in ((3, 1), (3, 3), (1, 1)):
        assert_same(model, result, feeds_for([batch, 3, 16, 12], [theta_batch, 2, 3]))
