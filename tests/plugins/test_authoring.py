"""Writing patterns: replacements written like templates, checked when the plugin loads."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import numpy as np
import onnxruntime as ort
import pytest
from onnx import AttributeProto, TensorProto, helper

import surgeon
from surgeon import Const, Pattern

from ..builders import onnx_model
from .running import ROOT


def _docs_block(first_line: str) -> str:
    text = (ROOT / "docs" / "plugins.md").read_text()
    [code] = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if b.startswith(first_line)]
    return code


def _add_relu_model():
    nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    model = onnx_model(nodes, [("a", ["N", 8]), ("b", ["N", 8])], [("y", None)], opset=18)
    model.graph.value_info.append(helper.make_tensor_value_info("s", TensorProto.FLOAT, ["N", 8]))
    return model


def test_the_docs_add_relu_rule_is_at_most_ten_lines_and_works():
    code = _docs_block("class AddRelu(Pattern):")
    assert len([line for line in code.splitlines() if line.strip()]) <= 10
    scope = {"Pattern": Pattern}
    exec(code, scope)
    result = surgeon.fuse(_add_relu_model(), plugins=[scope["AddRelu"]])
    [node] = result.model.graph.node
    assert (node.domain, node.op_type, list(node.input), list(node.output)) == ("my.ops", "AddRelu", ["a", "b"], ["y"])
    [alpha] = node.attribute
    assert (alpha.name, alpha.type, alpha.f) == ("alpha", AttributeProto.FLOAT, 0.5)
    assert ("my.ops", 1) in [(o.domain, o.version) for o in result.model.opset_import]
    # y had no declared shape: the rewrite carried over what inference knew of the value it replaced
    [out] = result.model.graph.output
    dims = [d.dim_param or d.dim_value for d in out.type.tensor_type.shape.dim]
    assert out.type.tensor_type.elem_type == TensorProto.FLOAT and dims == ["N", 8]


class Typed(Pattern):
    """Every kind of attribute and input a replacement can write."""

    domains = {"t.ops": 1}

    @staticmethod
    def template(op, x, k=Const()):
        return op.Mul(op.Relu(x, _name="relu"), k)

    @staticmethod
    def replacement(op, ctx, x, k, relu):
        scale = float(ctx.constant(k).reshape(()))
        lo, hi = op.Split2(x, _outputs=2, _domain="t.ops")
        merged = op.Merge(lo, None, hi, np.ones(3, np.float32), 2.0, _domain="t.ops",
                          flag=True, n=3, scale=scale, mode="fast", sizes=[2, 3], mixed=[1, 2.5],
                          names=["a", "b"], table=np.arange(3, dtype=np.int64), source=relu.op_type)
        return merged


def test_replacement_attribute_types_inputs_and_outputs():
    k = helper.make_tensor("k", TensorProto.FLOAT, [], [4.0])
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Mul", ["r", "k"], ["y"])]
    model = onnx_model(nodes, [("x", [2, 6])], [("y", [2, 6])], [k], opset=18)
    result = surgeon.fuse(model, plugins=[Typed])
    split, merge = result.model.graph.node
    assert len(split.output) == 2 and list(merge.output) == ["y"]
    assert merge.input[0] == split.output[0] and merge.input[1] == "" and merge.input[2] == split.output[1]
    inits = {t.name: t for t in result.model.graph.initializer}
    assert inits[merge.input[3]].data_type == TensorProto.FLOAT and inits[merge.input[4]].data_type == TensorProto.FLOAT
    types = {a.name: a.type for a in merge.attribute}
    A = AttributeProto
    assert types == {"flag": A.INT, "n": A.INT, "scale": A.FLOAT, "mode": A.STRING, "sizes": A.INTS,
                     "mixed": A.FLOATS, "names": A.STRINGS, "table": A.TENSOR, "source": A.STRING}
    values = {a.name: helper.get_attribute_value(a) for a in merge.attribute}
    assert values["flag"] == 1 and values["scale"] == 4.0 and values["source"] == b"Relu"


def test_a_replacement_returning_an_input_writes_an_identity():
    class DropRelu(Pattern):
        @staticmethod
        def template(op, x):
            return op.Relu(op.Relu(x))

        @staticmethod
        def replacement(op, x):
            return op.Relu(x) if False else x

    model = onnx_model([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Relu", ["a"], ["y"])],
                       [("x", [3])], [("y", [3])], opset=18)
    result = surgeon.fuse(model, plugins=[DropRelu])
    assert [(n.op_type, list(n.input), list(n.output)) for n in result.model.graph.node] == [("Identity", ["x"], ["y"])]
    x = np.array([-1.0, 0.0, 2.0], np.float32)
    got = ort.InferenceSession(result.model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, x)


def test_an_attribute_without_a_type_is_a_near_miss_naming_it():
    class Untyped(Pattern):
        @staticmethod
        def template(op, x):
            return op.Relu(x)

        @staticmethod
        def replacement(op, x):
            return op.Thing(x, weird={"a": 1}, _domain="t.ops")

    model = onnx_model([helper.make_node("Relu", ["x"], ["y"])], [("x", [3])], [("y", [3])], opset=18)
    result = surgeon.fuse(model, plugins=[Untyped])
    assert not result.report.rewrites
    assert "attribute 'weird': dict has no ONNX attribute type" in result.report.refusals[0].reason


# -- malformed patterns fail when they load ------------------------------------------------------


def _load_error(cls) -> str:
    with pytest.raises(surgeon.SurgeonError) as info:
        surgeon.PluginSet.of([cls])
    message = str(info.value)
    assert "\n" not in message
    return message


def test_a_template_that_is_not_a_staticmethod():
    class NoStatic(Pattern):
        def template(op, x):
            return op.Relu(x)

        def rewrite(self, ctx, match):
            pass

    assert _load_error(NoStatic) == ("pattern 'no-static' (NoStatic) template must be a @staticmethod whose first "
                                     "parameter is op")


def test_a_template_that_does_not_trace():
    class BadOptionTemplate(Pattern):
        @staticmethod
        def template(op, x):
            return op.Relu(x, _colour="red")

        def rewrite(self, ctx, match):
            pass

    assert "op.Relu: unknown option(s) ['_colour']" in _load_error(BadOptionTemplate)


def test_a_replacement_naming_what_the_template_does_not_bind():
    class Mismatch(Pattern):
        @staticmethod
        def template(op, x):
            return op.Relu(x)

        @staticmethod
        def replacement(op, y):
            return op.Abs(y)

    assert "replacement parameter 'y' is not a template variable" in _load_error(Mismatch)


def test_no_way_to_rewrite_and_a_wrong_hook_signature():
    class NoRewrite(Pattern):
        @staticmethod
        def template(op, x):
            return op.Relu(x)

    class BadCheck(Pattern):
        @staticmethod
        def template(op, x):
            return op.Relu(x)

        @staticmethod
        def replacement(op, x):
            return op.Abs(x)

        def check(self, match):
            return None

    assert _load_error(NoRewrite).endswith("defines neither rewrite() nor a replacement")
    assert _load_error(BadCheck).endswith("check() must take (ctx, match)")


def test_a_malformed_plugin_named_on_the_command_line_is_one_line(tmp_path):
    (tmp_path / "my_bad_patterns.py").write_text(textwrap.dedent("""
        from surgeon import Pattern

        class Bad(Pattern):
            def template(op, x):
                return op.Relu(x)

            def rewrite(self, ctx, match):
                pass
    """))
    model = tmp_path / "m.onnx"
    import onnx

    onnx.save(onnx_model([helper.make_node("Relu", ["x"], ["y"])], [("x", [3])], [("y", [3])], opset=18), model)
    env = {"PYTHONPATH": f"{tmp_path}:{ROOT}"}
    import os

    run = subprocess.run([sys.executable, "-m", "surgeon", "fuse", str(model), str(tmp_path / "o.onnx"),
                          "--plugin", "my_bad_patterns:Bad"], capture_output=True, text=True,
                         env={**os.environ, **env}, timeout=120)
    assert run.returncode == 1
    assert run.stderr.strip() == ("error: --plugin my_bad_patterns:Bad: cannot load: TemplateError: pattern 'bad' "
                                  "(Bad) template must be a @staticmethod whose first parameter is op")
    assert not (tmp_path / "o.onnx").exists()
