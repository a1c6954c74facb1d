"""One way for plugin authors (issue 40): attributes typed by value in replacements and in
``add_node`` alike, kernels as ``ops = [CustomOp(...)]``, and a refusal's kind (near miss / not
mine) as data, never read from its text. The older spellings still work, with a warning."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import AttributeProto, TensorProto, helper

import surgeon
from surgeon import NEAR_MISS, NOT_MINE, CustomOp, Match, Pattern, Refusal, not_mine, refuse

from ..builders import onnx_model


def _relu_model():
    return onnx_model([helper.make_node("Relu", ["x"], ["y"])], [("x", [2, 3])], [("y", [2, 3])], opset=18)


class _Writes(Pattern):
    """Relu -> t.ops::R, its attributes written by ``add_node`` from ``ATTRS``."""

    name = "writes"
    anchor_ops = ("Relu",)
    domains = {"t.ops": 1}
    ATTRS: dict = {}

    def match(self, ctx, node):
        return Match(node, [node])

    def rewrite(self, ctx, match):
        ctx.add_node("R", match.anchor.inputs, match.outputs, domain="t.ops", **self.ATTRS)
        ctx.set_shape(match.outputs[0], TensorProto.FLOAT, [2, 3])


def _written(attrs: dict) -> dict:
    pattern = type("W", (_Writes,), {"ATTRS": attrs})
    [node] = surgeon.fuse(_relu_model(), plugins=[pattern]).model.graph.node
    return {a.name: a for a in node.attribute}


def test_add_node_types_attributes_by_value_as_a_replacement_does():
    attrs = _written({"align_corners": 0, "mode": "bilinear", "alpha": 0.5, "on": True, "sizes": [2, 3],
                      "scales": [1, 2.5], "value": np.arange(3, dtype=np.int64)})
    kinds = {k: a.type for k, a in attrs.items()}
    assert kinds == {"align_corners": AttributeProto.INT, "mode": AttributeProto.STRING, "alpha": AttributeProto.FLOAT,
                     "on": AttributeProto.INT, "sizes": AttributeProto.INTS, "scales": AttributeProto.FLOATS,
                     "value": AttributeProto.TENSOR}
    assert attrs["on"].i == 1 and list(attrs["scales"].floats) == [1.0, 2.5]


def test_an_attribute_proto_says_what_a_value_cannot():
    empty = helper.make_attribute("ignored", [], attr_type=AttributeProto.INTS)
    attrs = _written({"pads": empty, "beta": helper.make_attribute("b", 1.0)})
    assert attrs["pads"].type == AttributeProto.INTS and list(attrs["pads"].ints) == []
    assert attrs["beta"].type == AttributeProto.FLOAT and attrs["beta"].f == 1.0


def test_an_empty_list_without_a_type_is_a_clear_error():
    with pytest.raises(ValueError, match="empty list has no type; pass an onnx.AttributeProto"):
        surgeon.graph.attrs.attributes_from_keywords({"pads": []})


def test_suffixed_attribute_names_still_work_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="type suffixes are deprecated") as caught:
        attrs = _written({"align_corners_i": 1, "mode_s": "nearest"})
    assert sorted(str(w.message).split("=")[0] for w in caught) == ["attribute align_corners_i", "attribute mode_s"]
    assert attrs["align_corners"].type == AttributeProto.INT and attrs["align_corners"].i == 1
    assert attrs["mode"].s == b"nearest"


def _doubling(inputs, attrs, device="cpu"):
    return [inputs[0] * 2]


def test_kernels_table_still_loads_as_ops_with_a_deprecation_warning():
    class Old(Pattern):
        name = "old-kernels"
        anchor_ops = ()
        kernels = {("t.ops", "Double"): _doubling}

    with pytest.warns(DeprecationWarning, match="kernels = {...} is deprecated"):
        found = surgeon.PluginSet.of([Old])
    op = found.op("t.ops", "Double")
    np.testing.assert_array_equal(op.kernel([np.ones(2)], {})[0], [2, 2])


def test_ops_is_the_one_way_and_warns_nothing(recwarn):
    class New(Pattern):
        name = "new-ops"
        anchor_ops = ()
        ops = [CustomOp("t.ops", "Double", kernel=_doubling)]

    found = surgeon.PluginSet.of([New])
    assert found.op("t.ops", "Double").kernel is _doubling
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


class _Refuses(Pattern):
    name = "refuses"
    anchor_ops = ("Relu",)
    ANSWER: Refusal | None = None

    def match(self, ctx, node):
        return self.ANSWER

    def rewrite(self, ctx, match):
        raise AssertionError("never reached")


@pytest.mark.parametrize("answer, listed", [(refuse("the chain's beta is a vector"), True),
                                            (not_mine("the anchor reads no sigmoid"), False)])
def test_a_refusals_kind_decides_whether_the_report_lists_it(answer, listed):
    pattern = type("R", (_Refuses,), {"ANSWER": answer})
    trace: list[str] = []
    report = surgeon.fuse(_relu_model(), plugins=[pattern], options={"trace": trace}).report
    assert [r.reason for r in report.refusals] == ([answer.reason] if listed else [])
    assert any("not mine: the anchor reads no sigmoid" in line for line in trace) == (not listed)


def test_refusal_kinds_are_data():
    assert (refuse("r").kind, not_mine("r").kind) == (NEAR_MISS, NOT_MINE)
    assert refuse("r").near_miss and not not_mine("r").near_miss
    with pytest.raises(ValueError, match="Refusal kind 'maybe'"):
        Refusal("r", kind="maybe")


def test_match_returning_a_match_is_unchanged_by_kinds():
    class Plain(_Writes):
        name = "plain"

    [node] = surgeon.fuse(_relu_model(), plugins=[Plain]).model.graph.node
    assert (node.domain, node.op_type) == ("t.ops", "R")
