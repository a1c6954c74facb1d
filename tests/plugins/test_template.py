"""The template matcher on hand-built graphs: what binds, what does not, what the rewrite sees."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import surgeon
from surgeon import Const, Match, Pattern, TemplateError, match_template

from ..builders import onnx_model


class Recorder(Pattern):
    """Base for test patterns: records each match's values; rewrites into custom.test::Fused."""

    anchor_ops = None
    domains = {"custom.test": 1}

    def __init__(self):
        self.seen: list[dict] = []

    def rewrite(self, ctx, match):
        self.seen.append(dict(match.values))
        inputs = [match.values[k] for k in getattr(self, "fused_inputs", ("x",))]
        ctx.add_node("Fused", inputs, match.outputs, domain="custom.test")
        for out in match.outputs:
            ctx.set_shape(out, TensorProto.FLOAT, ctx.shape(inputs[0]))


def fuse(model, pattern, **kw):
    result = surgeon.fuse(model, plugins=[pattern], **kw)
    return result, pattern.seen


def _nodes(result):
    return [n.op_type for n in result.model.graph.node]


# -- commutative inputs --------------------------------------------------------------------------


class AddRelu(Recorder):
    @staticmethod
    def template(op, x, y):
        return op.Relu(op.Add(x, op.Neg(y)))

    fused_inputs = ("x", "y")


@pytest.mark.parametrize("order", [["x", "n"], ["n", "x"]])
def test_commutative_add_matches_either_order(order):
    model = onnx_model([helper.make_node("Neg", ["y"], ["n"]), helper.make_node("Add", order, ["s"]),
                        helper.make_node("Relu", ["s"], ["out"])],
                       [("x", [2, 3]), ("y", [2, 3])], [("out", [2, 3])], opset=18)
    result, seen = fuse(model, AddRelu())
    assert _nodes(result) == ["Fused"]
    assert seen[0]["x"] == "x" and seen[0]["y"] == "y"


class MulByConst(Recorder):
    @staticmethod
    def template(op, x, k=Const()):
        return op.Mul(k, x, _name="mul")


@pytest.mark.parametrize("order", [["x", "k"], ["k", "x"]])
def test_commutative_mul_matches_either_order_and_binds_the_constant(order):
    k = numpy_helper.from_array(np.full((1,), 3.0, np.float32), "k")
    model = onnx_model([helper.make_node("Mul", order, ["out"])], [("x", [4])], [("out", [4])], [k], opset=18)
    result, seen = fuse(model, MulByConst())
    assert _nodes(result) == ["Fused"]
    assert seen[0]["x"] == "x" and seen[0]["k"] == "k"
    assert seen[0]["mul"].op_type == "Mul"


def test_non_commutative_sub_keeps_its_order():
    class SubNeg(Recorder):
        @staticmethod
        def template(op, x, y):
            return op.Sub(x, op.Neg(y))

    swapped = onnx_model([helper.make_node("Neg", ["y"], ["n"]), helper.make_node("Sub", ["n", "x"], ["out"])],
                         [("x", [2]), ("y", [2])], [("out", [2])], opset=18)
    result, seen = fuse(swapped, SubNeg())
    assert seen == [] and "Sub" in _nodes(result)


def test_variadic_commutative_sum_matches_any_permutation():
    class SumOfThree(Recorder):
        @staticmethod
        def template(op, x, y):
            return op.Sum(x, op.Exp(y), op.Abs(y))

    model = onnx_model([helper.make_node("Abs", ["y"], ["a"]), helper.make_node("Exp", ["y"], ["e"]),
                        helper.make_node("Sum", ["a", "x", "e"], ["out"])],
                       [("x", [2]), ("y", [2])], [("out", [2])], opset=18)
    _, seen = fuse(model, SumOfThree())
    assert seen and seen[0]["x"] == "x" and seen[0]["y"] == "y"


# -- attributes ---------------------------------------------------------------------------------


class TransposeRelu(Recorder):
    @staticmethod
    def template(op, x):
        return op.Relu(op.Transpose(x, perm=[0, 2, 3, 1], _name="t"))


def _transpose_model(perm):
    return onnx_model([helper.make_node("Transpose", ["x"], ["t"], perm=perm), helper.make_node("Relu", ["t"], ["out"])],
                      [("x", [1, 2, 3, 4])], [("out", None)], opset=18)


def test_attribute_match_and_named_node_is_readable_in_rewrite():
    result, seen = fuse(_transpose_model([0, 2, 3, 1]), TransposeRelu())
    assert _nodes(result) == ["Fused"]
    assert seen[0]["t"].attr("perm") == [0, 2, 3, 1]


def test_attribute_mismatch_is_no_match_and_no_refusal():
    result, seen = fuse(_transpose_model([0, 3, 1, 2]), TransposeRelu())
    assert seen == [] and _nodes(result) == ["Transpose", "Relu"]
    assert result.report.refusals == []


def test_attribute_values_compare_sensibly():
    class Attrs(Recorder):
        @staticmethod
        def template(op, x):
            return op.GridSample(x, op.Relu(x), mode="bilinear", align_corners=True, padding_mode=lambda m: m != "zeros")

    def model(**attrs):
        return onnx_model([helper.make_node("Relu", ["x"], ["g"]), helper.make_node("GridSample", ["x", "g"], ["out"], **attrs)],
                          [("x", [1, 1, 2, 2])], [("out", None)], opset=17)

    assert fuse(model(mode="bilinear", align_corners=1, padding_mode="border"), Attrs())[1]
    assert not fuse(model(mode="bilinear", align_corners=0, padding_mode="border"), Attrs())[1]
    assert not fuse(model(mode="nearest", align_corners=1, padding_mode="border"), Attrs())[1]
    assert not fuse(model(mode="bilinear", align_corners=1, padding_mode="zeros"), Attrs())[1]


def test_absent_attribute_reads_as_the_schema_default():
    class DefaultAlpha(Recorder):
        @staticmethod
        def template(op, x):
            return op.LeakyRelu(x, alpha=0.01)

    default = onnx_model([helper.make_node("LeakyRelu", ["x"], ["out"])], [("x", [2])], [("out", [2])], opset=18)
    other = onnx_model([helper.make_node("LeakyRelu", ["x"], ["out"], alpha=0.2)], [("x", [2])], [("out", [2])], opset=18)
    assert fuse(default, DefaultAlpha())[1]
    assert not fuse(other, DefaultAlpha())[1]


def test_other_attributes_can_be_forbidden():
    class StrictRecorder(Recorder):
        @staticmethod
        def template(op, x):
            return op.LeakyRelu(x, _allow_other_attributes=False)

    plain = onnx_model([helper.make_node("LeakyRelu", ["x"], ["out"])], [("x", [2])], [("out", [2])], opset=18)
    with_alpha = onnx_model([helper.make_node("LeakyRelu", ["x"], ["out"], alpha=0.2)], [("x", [2])], [("out", [2])], opset=18)
    assert fuse(plain, StrictRecorder())[1] and not fuse(with_alpha, StrictRecorder())[1]


# -- variables ----------------------------------------------------------------------------------


class Square(Recorder):
    @staticmethod
    def template(op, x):
        return op.Mul(x, x)


def test_a_variable_used_twice_binds_one_value():
    same = onnx_model([helper.make_node("Mul", ["x", "x"], ["out"])], [("x", [2])], [("out", [2])], opset=18)
    different = onnx_model([helper.make_node("Mul", ["x", "y"], ["out"])], [("x", [2]), ("y", [2])], [("out", [2])], opset=18)
    assert fuse(same, Square())[1][0]["x"] == "x"
    assert fuse(different, Square())[1] == []


def test_a_shared_subexpression_must_be_one_node():
    class SharedExp(Recorder):
        @staticmethod
        def template(op, x):
            e = op.Exp(x)
            return op.Div(e, op.Add(e, 1.0))

    shared = onnx_model([helper.make_node("Exp", ["x"], ["e"]), helper.make_node("Constant", [], ["one"], value_float=1.0),
                         helper.make_node("Add", ["e", "one"], ["d"]), helper.make_node("Div", ["e", "d"], ["out"])],
                        [("x", [2])], [("out", [2])], opset=18)
    twice = onnx_model([helper.make_node("Exp", ["x"], ["e"]), helper.make_node("Exp", ["x"], ["e2"]),
                        helper.make_node("Constant", [], ["one"], value_float=1.0),
                        helper.make_node("Add", ["e2", "one"], ["d"]), helper.make_node("Div", ["e", "d"], ["out"])],
                       [("x", [2])], [("out", [2])], opset=18)
    result, seen = fuse(shared, SharedExp())
    assert seen and _nodes(result) == ["Fused"]  # the Constant went with the region
    assert fuse(twice, SharedExp())[1] == []


# -- constants ----------------------------------------------------------------------------------


class ScaleBy2(Recorder):
    @staticmethod
    def template(op, x):
        return op.Mul(x, 2.0)


@pytest.mark.parametrize("value, matches", [(2.0, True), (3.0, False)])
def test_inline_number_is_a_constant_with_that_value(value, matches):
    c = numpy_helper.from_array(np.full((1,), value, np.float32), "c")
    model = onnx_model([helper.make_node("Mul", ["c", "x"], ["out"])], [("x", [2])], [("out", [2])], [c], opset=18)
    assert bool(fuse(model, ScaleBy2())[1]) is matches


def test_const_placeholder_rejects_run_time_values_and_binds_folded_ones():
    class AddConst(Recorder):
        @staticmethod
        def template(op, x, k=Const()):
            return op.Add(x, k)

    runtime = onnx_model([helper.make_node("Add", ["x", "y"], ["out"])], [("x", [2]), ("y", [2])], [("out", [2])], opset=18)
    assert fuse(runtime, AddConst())[1] == []
    # a constant computed from a static shape (Shape -> Cast) folds, so it binds
    folded = onnx_model([helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Cast", ["s"], ["k"], to=TensorProto.FLOAT),
                         helper.make_node("Add", ["x", "k"], ["out"])], [("x", [2])], [("out", [2])], opset=18)
    pattern = AddConst()
    pattern.anchor_ops = ("Add",)
    result, seen = fuse(folded, pattern)
    assert seen and seen[0]["k"] == "k"


def test_const_with_a_value_compares_arrays():
    class AddOnes(Recorder):
        @staticmethod
        def template(op, x, k=Const(np.ones(2, np.float32))):
            return op.Add(x, k)

    def model(values):
        k = numpy_helper.from_array(np.asarray(values, np.float32), "k")
        return onnx_model([helper.make_node("Add", ["x", "k"], ["out"])], [("x", [2])], [("out", [2])], [k], opset=18)

    assert fuse(model([1, 1]), AddOnes())[1]
    assert not fuse(model([1, 2]), AddOnes())[1]
    assert not fuse(model([1, 1, 1]), AddOnes())[1]


def test_op_constant_matches_constant_nodes_only():
    class AddConstantNode(Recorder):
        @staticmethod
        def template(op, x):
            return op.Add(x, op.Constant(_name="c"))

    node = onnx_model([helper.make_node("Constant", [], ["c"], value_float=2.0), helper.make_node("Add", ["x", "c"], ["out"])],
                      [("x", [2])], [("out", [2])], opset=18)
    init = onnx_model([helper.make_node("Add", ["x", "c"], ["out"])], [("x", [2])], [("out", [2])],
                      [numpy_helper.from_array(np.array(2.0, np.float32), "c")], opset=18)
    _, seen = fuse(node, AddConstantNode())
    assert seen and seen[0]["c"].attr("value_float") == 2.0
    assert fuse(init, AddConstantNode())[1] == []


# -- domains, inputs, outputs ---------------------------------------------------------------------


def test_domain_option_matches_custom_ops_only():
    class CustomRelu(Recorder):
        @staticmethod
        def template(op, x):
            return op.Relu(op.AffineGrid(x, _domain="custom.ops", _name="grid"))

    custom = helper.make_node("AffineGrid", ["x"], ["g"], domain="custom.ops")
    standard = helper.make_node("AffineGrid", ["x"], ["g"])
    relu = helper.make_node("Relu", ["g"], ["out"])
    m1 = onnx_model([custom, relu], [("x", [1, 2, 3])], [("out", None)], opset=18)
    m1.opset_import.append(helper.make_opsetid("custom.ops", 1))
    m2 = onnx_model([standard, relu], [("x", [1, 2, 3])], [("out", None)], opset=20)
    _, seen = fuse(m1, CustomRelu())
    assert seen and seen[0]["grid"].domain == "custom.ops"
    assert fuse(m2, CustomRelu())[1] == []


def test_extra_inputs_and_absent_optional_inputs():
    class ClipNoMax(Recorder):
        @staticmethod
        def template(op, x, lo):
            return op.Clip(x, lo)

    class ClipAny(Recorder):
        @staticmethod
        def template(op, x):
            return op.Clip(x, _allow_other_inputs=True)

    class ClipAbsentMin(Recorder):
        @staticmethod
        def template(op, x, hi):
            return op.Clip(x, None, hi)

    def model(inputs):
        return onnx_model([helper.make_node("Clip", inputs, ["out"])], [("x", [2]), ("lo", [1]), ("hi", [1])],
                          [("out", [2])], opset=18)

    assert fuse(model(["x", "lo"]), ClipNoMax())[1]
    assert fuse(model(["x", "lo", ""]), ClipNoMax())[1]  # trailing empty inputs are absent
    assert not fuse(model(["x", "lo", "hi"]), ClipNoMax())[1]
    assert fuse(model(["x", "lo", "hi"]), ClipAny())[1]
    assert fuse(model(["x", "", "hi"]), ClipAbsentMin())[1]
    assert not fuse(model(["x", "lo", "hi"]), ClipAbsentMin())[1]


def test_named_outputs_and_several_returned_values():
    class SplitBoth(Recorder):
        @staticmethod
        def template(op, x):
            a, b = op.Split(op.Relu(x, _outputs=["r"]), axis=0, _outputs=["a", "b"], num_outputs=2)
            return a, b

    model = onnx_model([helper.make_node("Relu", ["x"], ["r"]),
                        helper.make_node("Split", ["r"], ["p", "q"], axis=0, num_outputs=2)],
                       [("x", [4])], [("p", [2]), ("q", [2])], opset=18)

    class Rewriter(SplitBoth):
        def rewrite(self, ctx, match):
            self.seen.append(dict(match.values))
            assert match.outputs == ["p", "q"]
            ctx.add_node("Fused", [match.values["x"]], match.outputs, domain="custom.test")

    result, seen = fuse(model, Rewriter())
    assert seen[0]["r"] == "r" and seen[0]["a"] == "p" and seen[0]["b"] == "q"
    assert _nodes(result) == ["Fused"]


def test_an_intermediate_read_outside_is_refused_by_the_engine():
    model = onnx_model([helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]), helper.make_node("Relu", ["t"], ["out"])],
                       [("x", [1, 2, 3, 4])], [("out", None), ("t", None)], opset=18)
    result, seen = fuse(model, TransposeRelu())
    assert seen == []
    assert "also" in result.report.refusals[0].reason or "graph output" in result.report.refusals[0].reason


# -- calling it directly, errors, tracing ---------------------------------------------------------------


def test_match_template_can_be_called_from_a_match_hook():
    class Hook(Recorder):
        anchor_ops = ("Relu",)

        @staticmethod
        def template(op, x):
            return op.Relu(op.Neg(x))

        def match(self, ctx, node):
            found = match_template(self, ctx, node)
            assert found is None or isinstance(found, Match)
            if found is not None:
                found.values["extra"] = "from the hook"
            return found

    model = onnx_model([helper.make_node("Neg", ["x"], ["n"]), helper.make_node("Relu", ["n"], ["out"])],
                       [("x", [2])], [("out", [2])], opset=18)
    _, seen = fuse(model, Hook())
    assert seen[0]["extra"] == "from the hook"


def test_malformed_templates_raise_template_error():
    class ReturnsInput(Recorder):
        @staticmethod
        def template(op, x):
            return x

    model = onnx_model([helper.make_node("Relu", ["x"], ["out"])], [("x", [2])], [("out", [2])], opset=18)
    with pytest.raises(TemplateError):
        match_template(ReturnsInput(), None, None)
    # a broken pattern fails when it is loaded, in one line naming it: not a near miss per node
    with pytest.raises(surgeon.SurgeonError) as info:
        surgeon.fuse(model, plugins=[ReturnsInput()])
    assert str(info.value) == ("pattern 'returns-input' (ReturnsInput) a template must return the output(s) "
                               "of op calls")


def test_tracer_explains_why_an_anchor_did_not_match():
    log: list[str] = []
    surgeon.fuse(_transpose_model([0, 3, 1, 2]), plugins=[TransposeRelu()], options={"trace": log})
    assert len(log) == 1
    assert "transpose-relu" in log[0] and "perm" in log[0] and "[0, 3, 1, 2]" in log[0]


def test_tracer_via_environment(monkeypatch, capsys):
    monkeypatch.setenv("SURGEON_TRACE", "1")
    surgeon.fuse(_transpose_model([0, 3, 1, 2]), plugins=[TransposeRelu()])
    assert "[trace] transpose-relu" in capsys.readouterr().err


# -- associative regrouping of Mul / Add chains --------------------------------------------------


class HalfGate(Recorder):
    """The erf GELU's outer product as a template writes it: (x * g) * 0.5, g = Erf(x) + 1."""

    @staticmethod
    def template(op, x):
        return op.Mul(op.Mul(x, op.Add(op.Erf(x), 1.0)), 0.5)


def _gate_model(grouping, share=False):
    """The same product of x, 0.5 and g in another grouping; ``share``: the inner product is also
    a graph output (another reader), so it cannot be regrouped into the match."""
    gate = [helper.make_node("Erf", ["x"], ["e"]), helper.make_node("Add", ["e", "one"], ["g"])]
    inner, outer = {"(x*g)*h": (["x", "g"], ["p", "half"]), "(x*h)*g": (["x", "half"], ["p", "g"]),
                    "x*(h*g)": (["half", "g"], ["x", "p"]), "g*(h*x)": (["half", "x"], ["g", "p"])}[grouping]
    nodes = gate + [helper.make_node("Mul", inner, ["p"]), helper.make_node("Mul", outer, ["out"])]
    inits = [numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    outputs = [("out", [2, 3])] + ([("p", [2, 3])] if share else [])
    return onnx_model(nodes, [("x", [2, 3])], outputs, inits, opset=18)


@pytest.mark.parametrize("grouping", ["(x*g)*h", "(x*h)*g", "x*(h*g)", "g*(h*x)"])
def test_a_mul_chain_matches_in_any_grouping(grouping):
    lines = []
    result, seen = fuse(_gate_model(grouping), HalfGate(), options={"trace": lines})
    assert _nodes(result) == ["Fused"] and seen[0]["x"] == "x"
    regrouped = [line for line in lines if "matched;" in line]
    if grouping == "(x*g)*h":  # as the template writes it: nothing to say
        assert regrouped == []
    else:
        assert len(regrouped) == 1 and "Mul chain matched as" in regrouped[0]
        assert "(the template groups it (x * Add(...)) * 0.5)" in regrouped[0]
    if grouping == "(x*h)*g":
        assert "matched as (x * 0.5) * Add(...)" in regrouped[0]


def test_regrouping_can_be_turned_off():
    class StrictHalfGate(HalfGate):
        regroup = False

    result, _ = fuse(_gate_model("(x*h)*g"), StrictHalfGate())
    assert "Fused" not in _nodes(result)
    result, _ = fuse(_gate_model("(x*g)*h"), StrictHalfGate())
    assert _nodes(result) == ["Fused"]


def test_a_regrouped_product_something_else_reads_is_a_near_miss_naming_it():
    for grouping in ("(x*h)*g", "(x*g)*h"):
        result, _ = fuse(_gate_model(grouping, share=True), HalfGate())
        assert "Fused" not in _nodes(result)
        assert [r.reason for r in result.report.refusals] == ["intermediate 'p' is a graph output"]


def test_an_add_chain_regroups_and_a_variable_takes_a_whole_sub_sum():
    class ThreeTerms(Recorder):
        @staticmethod
        def template(op, x, y):
            return op.Add(op.Add(x, op.Neg(y)), 2.0)

        fused_inputs = ("x", "y")

    def model(first, second):
        inits = [numpy_helper.from_array(np.array(2.0, np.float32), "two")]
        nodes = [helper.make_node("Neg", ["y"], ["n"]), helper.make_node("Add", first, ["s"]),
                 helper.make_node("Add", second, ["out"])]
        return onnx_model(nodes, [("a", [2]), ("b", [2]), ("y", [2])], [("out", [2])], inits, opset=18)

    result, seen = fuse(model(["n", "two"], ["a", "s"]), ThreeTerms())  # a + (Neg(y) + 2)
    assert _nodes(result) == ["Fused"] and seen[0] == {"x": "a", "y": "y"}
    nested = onnx_model([helper.make_node("Add", ["a", "b"], ["ab"]), helper.make_node("Neg", ["y"], ["n"]),
                         helper.make_node("Add", ["ab", "n"], ["s"]), helper.make_node("Add", ["s", "two"], ["out"])],
                        [("a", [2]), ("b", [2]), ("y", [2])], [("out", [2])],
                        [numpy_helper.from_array(np.array(2.0, np.float32), "two")], opset=18)
    result, seen = fuse(nested, ThreeTerms())  # ((a + b) + Neg(y)) + 2: x takes a + b whole
    assert seen[0] == {"x": "ab", "y": "y"} and _nodes(result) == ["Add", "Fused"]
