"""The rewrite driver on tiny hand-built models."""

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import surgeon
from surgeon import Match, Pattern

from ..builders import onnx_model, relu_neg_abs_model, value_info
from .toy_patterns import AbsAbs, AlwaysRefuses, Crashes, NegToSub, ReluNeg


class SubToMul(Pattern):
    """0 - x becomes x * -1: written with the replacement API."""

    @staticmethod
    def template(op, x):
        return op.Sub(surgeon.Const(0.0), x)

    @staticmethod
    def replacement(op, x):
        return op.Mul(x, -1.0)


def ops(m):
    return [n.op_type for n in m.graph.node]


def test_rewrite_replaces_region_with_typed_node():
    result = surgeon.fuse(relu_neg_abs_model(), plugins=[ReluNeg()])
    assert ops(result.model) == ["NegRelu", "Abs"]
    node = result.model.graph.node[0]
    assert node.domain == "custom.test"
    attrs = {a.name: a for a in node.attribute}
    assert attrs["alpha"].type == onnx.AttributeProto.FLOAT and attrs["alpha"].f == 0.5
    assert attrs["flag"].type == onnx.AttributeProto.INT and attrs["flag"].i == 1
    assert attrs["mode"].type == onnx.AttributeProto.STRING and attrs["mode"].s == b"fast"
    assert attrs["sizes"].type == onnx.AttributeProto.INTS and list(attrs["sizes"].ints) == [2, 3]
    assert {(p.key, p.value) for p in node.metadata_props} == {("surgeon.pattern", "relu-neg")}
    assert node.output[0] == "n"  # the replaced value keeps its name
    opsets = {o.domain: o.version for o in result.model.opset_import}
    assert opsets == {"": 17, "custom.test": 1}
    vi = {v.name: v for v in result.model.graph.value_info}
    dims = [d.dim_param or d.dim_value for d in vi["n"].type.tensor_type.shape.dim]
    assert dims == ["N", 3] and vi["n"].type.tensor_type.elem_type == TensorProto.FLOAT
    onnx.checker.check_model(result.model)


def test_input_model_is_not_modified():
    original = relu_neg_abs_model()
    before = original.SerializeToString()
    surgeon.fuse(original, plugins=[ReluNeg()])
    assert original.SerializeToString() == before


def test_idempotent_and_no_match_leaves_bytes_unchanged():
    fused = surgeon.fuse(relu_neg_abs_model(), plugins=[ReluNeg()]).model
    again = surgeon.fuse(fused, plugins=[ReluNeg()])
    assert again.report.rewrites == []
    assert again.model.SerializeToString() == fused.SerializeToString()


def test_intermediate_used_outside_is_refused_with_reason():
    m = relu_neg_abs_model(extra_output=True)
    result = surgeon.fuse(m, plugins=[ReluNeg()])
    assert result.report.rewrites == []
    [refusal] = result.report.refusals
    assert refusal.pattern == "relu-neg" and "'r' is a graph output" in refusal.reason
    assert result.model.SerializeToString() == m.SerializeToString()

    shared = onnx_model([
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Neg", ["r"], ["n"], name="neg"),
        helper.make_node("Add", ["n", "r"], ["y"], name="add"),
    ], [value_info("x")], [value_info("y")], opset=17)
    result = surgeon.fuse(shared, plugins=[ReluNeg()])
    assert result.report.rewrites == []
    assert "also read by add (Add)" in result.report.refusals[0].reason


class TwoOutputs(Pattern):
    """Replaces Relu and Neg by one node producing both values, even when that loops back."""

    anchor_ops = ("Neg",)

    def match(self, ctx, node):
        relu = ctx.producer(node.inputs[1])
        return Match(node, [relu, node], outputs=[relu.outputs[0], node.outputs[0]])

    def rewrite(self, ctx, match):
        ctx.add_node("Pair", [match.nodes[0].inputs[0], match.anchor.inputs[0]], match.outputs, domain="custom.test")


def test_rewrite_that_would_create_a_cycle_is_refused():
    # relu -> sig (outside) -> neg: fusing relu+neg into one node would read sig, which reads it.
    m = onnx_model([
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Sigmoid", ["r"], ["s"], name="sig"),
        helper.make_node("Neg", ["s", "r"], ["n"], name="neg", domain="custom.test"),
    ], [value_info("x")], [value_info("n")], opset=17)
    m.opset_import.append(helper.make_opsetid("custom.test", 1))

    class P(TwoOutputs):
        anchor_ops = ("custom.test::Neg",)

    result = surgeon.fuse(m, plugins=[P()])
    assert result.report.rewrites == []
    assert "cycle" in result.report.refusals[0].reason


def test_fixpoint_collapses_chain_over_several_passes():
    nodes = [helper.make_node("Abs", ["x" if i == 0 else f"a{i-1}"], [f"a{i}"], name=f"abs{i}") for i in range(6)]
    m = onnx_model(nodes, [value_info("x")], [value_info("a5")], opset=17)
    result = surgeon.fuse(m, plugins=[AbsAbs()])
    assert ops(result.model) == ["Abs"]
    assert result.model.graph.node[0].input[0] == "x" and result.model.graph.node[0].output[0] == "a5"
    assert len(result.report.rewrites) == 5


def test_overlapping_matches_are_taken_once_in_graph_order():
    # Both patterns anchor on the same Neg: only the first listed wins, in a deterministic way.
    first = surgeon.fuse(relu_neg_abs_model(), plugins=[ReluNeg(), NegToSub()])
    assert [r.pattern for r in first.report.rewrites] == ["relu-neg"]
    second = surgeon.fuse(relu_neg_abs_model(), plugins=[NegToSub(), ReluNeg()])
    assert [r.pattern for r in second.report.rewrites] == ["neg-to-sub"]
    assert ops(second.model) == ["Relu", "Sub", "Abs"]


def test_new_names_are_unique_and_numbers_hold():
    m = onnx_model([
        helper.make_node("Neg", ["x"], ["n1"], name="neg-to-sub/Sub"),
        helper.make_node("Neg", ["n1"], ["n2"], name="b"),
    ], [value_info("x")], [value_info("n2")], opset=17)
    result = surgeon.fuse(m, plugins=[NegToSub()])
    names = [n.name for n in result.model.graph.node]
    assert len(set(names)) == len(names) == 2
    inits = [t.name for t in result.model.graph.initializer]
    assert len(set(inits)) == 2
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    sess = ort.InferenceSession(result.model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], x, atol=0)


def test_dead_constants_are_removed_and_counted():
    big = helper.make_tensor("w", TensorProto.FLOAT, [256], np.ones(256, np.float32).tobytes(), raw=True)
    m = onnx_model([
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Mul", ["r", "w"], ["n0"], name="mul"),
        helper.make_node("Neg", ["n0"], ["y"], name="neg"),
    ], [value_info("x", ("N", 256))], [value_info("y", ("N", 256))], initializers=[big], opset=17)

    class MulNeg(Pattern):
        anchor_ops = ("Neg",)

        def match(self, ctx, node):
            mul = ctx.producer(node.inputs[0])
            if mul is None or not mul.is_op("Mul"):
                return None
            return Match(node, [mul, node], values={"x": mul.inputs[0]})

        def rewrite(self, ctx, match):
            ctx.add_node("Neg", [match.values["x"]], match.outputs)

    result = surgeon.fuse(m, plugins=[MulNeg()])
    assert ops(result.model) == ["Relu", "Neg"]
    assert len(result.model.graph.initializer) == 0
    assert result.report.constant_bytes_removed == 1024
    assert result.report.nodes_before == 3 and result.report.nodes_after == 2


def test_orphaned_producers_are_removed_but_unrelated_dead_nodes_stay():
    m = onnx_model([
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Neg", ["r"], ["n"], name="neg"),
        helper.make_node("Sigmoid", ["x"], ["unused"], name="already_dead"),
        helper.make_node("Identity", ["n"], ["y"], name="id"),
    ], [value_info("x")], [value_info("y")], opset=17)
    result = surgeon.fuse(m, plugins=[ReluNeg()])
    assert ops(result.model) == ["Shape", "NegRelu", "Sigmoid", "Identity"]


def test_refusals_and_plugin_crashes_are_reported_not_raised():
    result = surgeon.fuse(relu_neg_abs_model(), plugins=[AlwaysRefuses(), Crashes()])
    reasons = {r.pattern: r.reason for r in result.report.refusals}
    assert reasons["always-refuses"] == "relu is fine as it is"
    assert reasons["crashes"] == "match() raised RuntimeError: bug in plugin (plugin tests.engine.toy_patterns:Crashes)"
    assert result.report.rewrites == []


def test_report_summary_and_json():
    result = surgeon.fuse(relu_neg_abs_model(), plugins=[ReluNeg(), AlwaysRefuses()])
    text = result.report.summary()
    assert "rewrote 1 chain(s) (relu-neg: 1): 3 -> 2 nodes" in text
    assert "relu-neg: neg (Neg) -> custom.test::NegRelu" in text
    assert "always-refuses: relu (Relu): relu is fine as it is" in text
    data = json.loads(result.report.to_json())
    assert (data["schema_version"], data["kind"]) == (1, "fuse")
    assert [n["op_type"] for n in data["rewrites"][0]["replaced"]] == ["Relu", "Neg"]
    assert data["rewrites"][0]["anchor"] == {"name": "neg", "op_type": "Neg", "domain": "", "graph": "main",
                                             "output": "n"}
    assert data["rewrites"][0]["written"][0]["domain"] == "custom.test"
    assert data["rewrites"][0]["plugin"] == "tests.engine.toy_patterns:ReluNeg"  # module:Name: passed to the call
    assert data["refusals"][0]["node"]["name"] == "relu" and data["refusals"][0]["reason"] == "relu is fine as it is"
    assert data["nodes_before"] == 3 and data["nodes_after"] == 2


def test_inspect_says_what_would_change_across_every_pass():
    m = onnx_model([helper.make_node("Neg", ["x"], ["a"], name="n1"), helper.make_node("Neg", ["a"], ["y"], name="n2")],
              [value_info("x")], [value_info("y")], opset=17)
    before = m.SerializeToString()
    report = surgeon.inspect(m, plugins=[NegToSub(), SubToMul()])  # the second rewrites what the first wrote
    assert report.dry_run and m.SerializeToString() == before
    assert [r.pattern for r in report.rewrites] == ["neg-to-sub", "neg-to-sub", "sub-to-mul", "sub-to-mul"]
    assert report.summary().startswith("would rewrite 4 chain(s) (neg-to-sub: 2, sub-to-mul: 2): 2 -> 2 nodes")
    assert all(r.written for r in report.rewrites)


def _if_model():
    def branch(name, with_chain):
        nodes = [helper.make_node("Relu", ["x"], [f"{name}_r"], name=f"{name}_relu"),
                 helper.make_node("Neg", [f"{name}_r"], [f"{name}_out"], name=f"{name}_neg")] if with_chain else [
                 helper.make_node("Identity", ["x"], [f"{name}_out"], name=f"{name}_id")]
        return helper.make_graph(nodes, name, [], [value_info(f"{name}_out")])

    return onnx_model([
        helper.make_node("If", ["c"], ["y"], name="if", then_branch=branch("then", True),
                         else_branch=branch("else", False)),
    ], [value_info("x"), helper.make_tensor_value_info("c", TensorProto.BOOL, [])], [value_info("y")], opset=17)


def test_rewrites_inside_if_branches():
    result = surgeon.fuse(_if_model(), plugins=[ReluNeg()])
    [rewrite] = result.report.rewrites
    assert rewrite.graph == "main/if.then_branch"
    then = next(a.g for a in result.model.graph.node[0].attribute if a.name == "then_branch")
    assert [n.op_type for n in then.node] == ["NegRelu"]
    assert {o.domain for o in result.model.opset_import} == {"", "custom.test"}
    onnx.checker.check_model(result.model)


def _near_miss_only(pattern):
    """Fuse with a pattern whose rewrite is broken: one near miss, the model as it was."""
    m = relu_neg_abs_model()
    result = surgeon.fuse(m, plugins=[pattern])
    assert result.report.rewrites == [] and result.model.SerializeToString() == m.SerializeToString()
    [miss] = result.report.refusals
    return miss.reason


def test_rewrite_that_omits_an_output_is_a_near_miss():
    class Forgetful(ReluNeg):
        def rewrite(self, ctx, match):
            ctx.add_node("NegRelu", [match.values["x"]], 1, domain="custom.test")

    assert "did not produce" in _near_miss_only(Forgetful())


def test_an_exception_in_rewrite_is_a_near_miss_naming_it(monkeypatch, capsys):
    class Raises(ReluNeg):
        def rewrite(self, ctx, match):
            ctx.add_node("NegRelu", [match.values["x"]], match.outputs, domain="custom.test")
            raise KeyError("half way")

    assert _near_miss_only(Raises()).startswith("rewrite() raised KeyError: 'half way' (plugin tests.engine.")
    assert "Traceback" not in capsys.readouterr().err
    monkeypatch.setenv("SURGEON_DEBUG", "1")
    _near_miss_only(Raises())
    assert "Traceback" in capsys.readouterr().err and "half way" in capsys.readouterr().err + "half way"


def test_a_domain_the_model_uses_at_another_version_is_a_near_miss():
    m = relu_neg_abs_model()
    m.opset_import.append(helper.make_opsetid("custom.test", 3))
    m.graph.node.append(helper.make_node("Other", ["x"], ["other"], domain="custom.test"))
    result = surgeon.fuse(m, plugins=[ReluNeg()])
    assert not result.report.rewrites
    assert result.report.refusals[0].reason == ("the model imports domain 'custom.test' at version 3; "
                                                "pattern 'relu-neg' writes version 1")


def test_an_import_no_node_uses_takes_the_version_written():
    # onnxruntime's optimiser writes an import for every domain its registry holds (custom.ops at
    # 1000 once a custom-op library was loaded in the process), used by no node
    m = relu_neg_abs_model()
    m.opset_import.append(helper.make_opsetid("custom.test", 3))
    result = surgeon.fuse(m, plugins=[ReluNeg()])
    assert len(result.report.rewrites) == 1
    assert {o.domain: o.version for o in result.model.opset_import}["custom.test"] == 1


def test_a_pattern_matching_its_own_output_stops_with_a_note():
    class Forever(Pattern):
        anchor_ops = ("Relu",)

        def match(self, ctx, node):
            return Match(node, [node])

        def rewrite(self, ctx, match):
            ctx.add_node("Relu", match.anchor.inputs, match.outputs)

    m = onnx_model([helper.make_node("Relu", ["x"], ["y"])], [value_info("x")], [value_info("y")], opset=17)
    result = surgeon.fuse(m, plugins=[Forever()])
    assert len(result.report.rewrites) == 32
    assert "stopped after 32 passes" in result.report.notes[0] and "forever" in result.report.notes[0]


def test_rewrite_placed_before_a_reader_is_reordered():
    # The region's output is read by a node sitting between the region's nodes: the new node
    # takes the region's last position, after that reader, so the order must be repaired.
    m = onnx_model([
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Sigmoid", ["r"], ["s"], name="reader"),
        helper.make_node("Neg", ["x"], ["n"], name="neg"),
        helper.make_node("Add", ["s", "n"], ["y"], name="add"),
    ], [value_info("x")], [value_info("y")], opset=17)

    class ReluAndNeg(Pattern):
        anchor_ops = ("Neg",)

        def match(self, ctx, node):
            relu = ctx.producer("r")
            return Match(node, [relu, node], outputs=["r", "n"])

        def rewrite(self, ctx, match):
            ctx.add_node("Split2", ["x"], ["r", "n"], domain="custom.test")

    result = surgeon.fuse(m, plugins=[ReluAndNeg()])
    assert ops(result.model) == ["Split2", "Sigmoid", "Add"]
    onnx.checker.check_model(result.model)


@pytest.mark.parametrize("inputs, attrs, message", [
    (["x", "x"], {}, "invalid node"),
    (["nowhere"], {}, "reading 'nowhere', which does not exist"),
])
def test_invalid_nodes_written_by_a_pattern_are_near_misses(inputs, attrs, message):
    class Sloppy(ReluNeg):
        def rewrite(self, ctx, match):
            ctx.add_node("Relu", inputs, match.outputs)

    assert message in _near_miss_only(Sloppy())


def test_node_counts_in_the_report_match_the_model():
    from surgeon.rewrite.driver import count_nodes

    for m, pattern in ((_if_model(), ReluNeg()), (relu_neg_abs_model(), ReluNeg())):
        result = surgeon.fuse(m, plugins=[pattern])
        assert result.report.nodes_before == count_nodes(m.graph)
        assert result.report.nodes_after == count_nodes(result.model.graph)


def test_a_node_listed_twice_in_a_match_is_one_node():
    class Twice(ReluNeg):
        def match(self, ctx, node):
            found = super().match(ctx, node)
            if found is not None:
                found.nodes = found.nodes + found.nodes[:1]
            return found

    from surgeon.rewrite.driver import count_nodes

    result = surgeon.fuse(relu_neg_abs_model(), plugins=[Twice()])
    assert result.report.nodes_after == count_nodes(result.model.graph) == 2
