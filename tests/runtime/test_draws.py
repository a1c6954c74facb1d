"""validate draws the inputs a plugin asks for its own way (transform matrices), and says so."""

import numpy as np
from onnx import helper

from surgeon import CustomOp
from surgeon.validate.draws import input_drawers
from surgeon.validate.check import validate

from ..builders import fused_grid_sample_node, value_info, warp_model, warp_pair
from .conftest import PLUGINS


def identity_draw(shape, dtype, rng):
    """identity matrices, for the test"""
    out = np.zeros(shape)
    out[..., 0, 0] = out[..., 1, 1] = 1.0
    return out


def with_draw(kernel_plugins=PLUGINS):
    fused = kernel_plugins.op("custom.ops", "FusedGridSample")
    return kernel_plugins.with_ops(CustomOp("custom.ops", "FusedGridSample", kernel=fused.kernel,
                                            draw_inputs={1: identity_draw}))


def test_an_input_reaching_the_op_through_shape_ops_is_drawn_its_own_way():
    orig, rew = warp_pair(n=2)
    report = validate(orig, rew, plugins=with_draw())
    assert report.passed, report.summary()
    sources = {i["name"]: i["source"] for i in report.inputs}
    assert sources == {"x": "random, seed 0, floats signed, half in [-1, 1), half of magnitude 1-8", "theta": "random, seed 0, identity matrices, for the test"}
    assert "input 'theta': identity matrices, for the test" in report.notes


def test_only_inputs_that_reach_the_op_unchanged_but_for_shape_are_drawn():
    flat = warp_model([helper.make_node("Reshape", ["t", "shape"], ["theta"]),
                  fused_grid_sample_node("x", "theta", "y", "f", (4, 4))],
                 [value_info("x", [1, 1, 4, 4]), value_info("t", [1, 6])], [value_info("y", [1, 1, 4, 4])],
                 [helper.make_tensor("shape", 7, [3], [-1, 2, 3])])
    assert list(input_drawers(flat, with_draw())) == ["t"]
    computed = warp_model([helper.make_node("Neg", ["t"], ["theta"]), fused_grid_sample_node("x", "theta", "y", "f", (4, 4))],
                     [value_info("x", [1, 1, 4, 4]), value_info("t", [1, 2, 3])], [value_info("y", [1, 1, 4, 4])])
    assert input_drawers(computed, with_draw()) == {}  # Neg computes: its input is not theta
    assert input_drawers(flat, PLUGINS) == {}  # no plugin asked
