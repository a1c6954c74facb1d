"""Input-shape overrides, folding of shape computations, and shape repair after rewrites."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import surgeon
from surgeon import Match, Pattern

from ..builders import onnx_model, value_info
from .toy_patterns import MatchOnly


def _dims(vi):
    return [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]




class FoldedSize(MatchOnly):
    """Reads the (folded) value of a Reshape's shape input."""

    anchor_ops = ("Reshape",)
    seen: list = []

    def match(self, ctx, node):
        FoldedSize.seen.append(ctx.constant(node.inputs[1]))
        return None


def test_input_shape_override_folds_shape_computations():
    m = onnx_model([
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i"], ["hw"], axis=0),
        helper.make_node("Concat", ["one", "hw"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
    ], [value_info("x", ("N", "H", "W"))], [value_info("y", (1, None, None))], initializers=[
        helper.make_tensor("i", TensorProto.INT64, [2], [1, 2]),
        helper.make_tensor("one", TensorProto.INT64, [1], [1]),
    ], opset=17)
    FoldedSize.seen = []
    surgeon.fuse(m, plugins=[FoldedSize()])
    assert FoldedSize.seen == [None]  # dynamic: not known before run time
    FoldedSize.seen = []
    result = surgeon.fuse(m, plugins=[FoldedSize()], input_shapes={"x": [1, 5, 7]})
    np.testing.assert_array_equal(FoldedSize.seen[0], [1, 5, 7])
    assert _dims(result.model.graph.input[0]) == [1, 5, 7]


@pytest.mark.parametrize("shapes, message", [
    ({"nope": [1]}, "has no input 'nope'"),
    ({"x": [1, 2]}, "has rank 3, got 2 dims"),
])
def test_bad_input_shape_is_a_clear_error(shapes, message):
    m = onnx_model([helper.make_node("Relu", ["x"], ["y"])], [value_info("x", ("N", 3, 4))], [value_info("y", ("N", 3, 4))], opset=17)
    with pytest.raises(surgeon.SurgeonError, match=message):
        surgeon.fuse(m, plugins=[], input_shapes=shapes)


class Declares(Pattern):
    """Replaces a custom op whose output dims are meaningless symbols, declaring real ones."""

    anchor_ops = ("custom.test::Opaque",)
    domains = {"custom.test": 1}

    def match(self, ctx, node):
        return Match(node, [node])

    def rewrite(self, ctx, match):
        out = match.outputs[0]
        ctx.add_node("Clear", match.anchor.inputs, [out], domain="custom.test")
        ctx.set_shape(out, TensorProto.FLOAT, (ctx.shape("x")[0], 3, 8))


def test_shapes_downstream_of_a_rewrite_are_repaired():
    m = onnx_model([
        helper.make_node("Opaque", ["x"], ["o"], domain="custom.test"),
        helper.make_node("Relu", ["o"], ["r"]),
        helper.make_node("Sigmoid", ["r"], ["y"]),
    ], [value_info("x", ("N", 3, 8))], [value_info("y", ("Sigmoid_dim_0", "Sigmoid_dim_1", "Sigmoid_dim_2"))],
        value_infos=[value_info("o", ("Opaque_dim_0", "Opaque_dim_1", "Opaque_dim_2")),
                    value_info("r", ("Relu_dim_0", "Relu_dim_1", "Relu_dim_2"))], opset=17)
    m.opset_import.append(helper.make_opsetid("custom.test", 1))
    result = surgeon.fuse(m, plugins=[Declares()])
    vi = {v.name: _dims(v) for v in result.model.graph.value_info}
    assert vi["o"] == ["N", 3, 8]
    assert vi["r"] == ["N", 3, 8]
    assert _dims(result.model.graph.output[0]) == ["N", 3, 8]


def test_scalar_initializers_load_and_fold():
    m = onnx_model([helper.make_node("Mul", ["x", "two"], ["y"])], [value_info("x", ("N", 3))], [value_info("y", ("N", 3))],
              initializers=[helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])], opset=17)
    result = surgeon.fuse(m, plugins=[FoldedSize()])
    assert result.report.rewrites == []
