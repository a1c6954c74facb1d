"""``unfuse --opset 16..19`` on models that keep opset 20's own AffineGrid (one surgeon did not
fuse): the node is written with custom.ops::AffineGrid's lowering, the same as a fused node's, and
the result runs in plain onnxruntime equal to the original."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h

import surgeon
from surgeon.cli import cli

SHAPES = {2: [2, 3, 16, 12], 3: [2, 2, 6, 5, 4]}  # no size-1 dim: ONNX leaves that coordinate undefined


def native(k: int, align: int):
    """x -> AffineGrid(theta, Shape(x)) -> GridSample, the grid a graph output too (so fuse keeps
    the standard pair: it writes the grid alone); batch dynamic."""
    dims = ["N", *SHAPES[k][1:]]
    nodes = [h.make_node("Shape", ["x"], ["size"], name="/Shape"),
             h.make_node("AffineGrid", ["theta", "size"], ["grid"], name="/AffineGrid", align_corners=align),
             h.make_node("GridSample", ["x", "grid"], ["y"], name="/GridSample", align_corners=align)]
    graph = h.make_graph(nodes, "native", [h.make_tensor_value_info("x", T.FLOAT, dims),
                                           h.make_tensor_value_info("theta", T.FLOAT, ["N", k, k + 1])],
                         [h.make_tensor_value_info("y", T.FLOAT, dims),
                          h.make_tensor_value_info("grid", T.FLOAT, ["N", *dims[2:], k])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 20)], ir_version=10)


def in_branch():
    """The same pair inside an If's then branch."""
    model = native(2, 0)
    then = h.make_graph(list(model.graph.node), "then", [], list(model.graph.output))
    otherwise = h.make_graph([h.make_node("Identity", ["x"], ["y_else"]), h.make_node("Identity", ["x"], ["x_else"])],
                             "else", [], [h.make_tensor_value_info("y_else", T.FLOAT, None),
                                          h.make_tensor_value_info("x_else", T.FLOAT, None)])
    node = h.make_node("If", ["cond"], ["y", "grid"], name="/If", then_branch=then, else_branch=otherwise)
    results = [h.make_tensor_value_info(name, T.FLOAT, None) for name in ("y", "grid")]
    graph = h.make_graph([node], "branch", [*model.graph.input, h.make_tensor_value_info("cond", T.BOOL, [])], results)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 20)], ir_version=10)


def feeds(k: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    theta = np.eye(k, k + 1) + 0.3 * rng.standard_normal((SHAPES[k][0], k, k + 1))
    return {"x": rng.standard_normal(SHAPES[k]).astype(np.float32), "theta": theta.astype(np.float32)}


def outputs(model: onnx.ModelProto, inputs: dict) -> list[np.ndarray]:
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, inputs)


def assert_standard(model: onnx.ModelProto, opset: int) -> None:
    onnx.checker.check_model(model, full_check=True)
    nodes = [n for n in model.graph.node] + [b for n in model.graph.node for a in n.attribute if a.HasField("g")
                                             for b in a.g.node]
    assert not [n for n in nodes if n.domain not in ("", "ai.onnx")]
    assert not [n for n in nodes if n.op_type == "AffineGrid"]
    assert {o.domain: o.version for o in model.opset_import} == {"": opset}


@pytest.mark.parametrize("opset", [16, 17, 18, 19])
@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("k", [2, 3])
def test_native_affine_grid_written_at_older_opsets_equals_the_original(k, align, opset):
    original = native(k, align)
    result = surgeon.unfuse(original, opset=opset)
    assert_standard(result.model, opset)
    assert any("custom.ops::AffineGrid" in note for note in result.report.notes)
    inputs = feeds(k)
    for want, got in zip(outputs(original, inputs), outputs(result.model, inputs)):
        np.testing.assert_allclose(got, want, atol=2e-5, rtol=1e-5)


def test_native_affine_grid_in_a_branch(tmp_path):
    original = in_branch()
    result = surgeon.unfuse(original, opset=16)
    assert_standard(result.model, 16)
    for cond in (True, False):
        inputs = {**feeds(2), "cond": np.array(cond)}
        for want, got in zip(outputs(original, inputs), outputs(result.model, inputs)):
            np.testing.assert_allclose(got, want, atol=2e-5, rtol=1e-5)


def test_the_command_lowers_it(tmp_path):
    path, out = tmp_path / "native.onnx", tmp_path / "native16.onnx"
    onnx.save(native(2, 1), path)
    done = CliRunner().invoke(cli, ["unfuse", str(path), str(out), "--opset", "16"])
    assert done.exit_code == 0, done.output
    assert "AffineGrid node(s) as custom.ops::AffineGrid's standard form" in done.output
    assert_standard(onnx.load(out), 16)


def test_a_node_the_lowering_cannot_write_is_named_as_it_stands():
    """No shapes: the lowering cannot tell a 2-D grid from a 3-D one, and says so of the
    standard node, in one line."""
    node = h.make_node("AffineGrid", ["theta", "size"], ["grid"], name="/AffineGrid")
    graph = h.make_graph([node], "shapeless", [h.make_tensor_value_info("theta", T.FLOAT, None),
                                               h.make_tensor_value_info("size", T.INT64, None)],
                         [h.make_tensor_value_info("grid", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 20)], ir_version=10)
    with pytest.raises(surgeon.SurgeonError) as info:
        surgeon.unfuse(model, opset=16)
    assert str(info.value) == ("cannot write node /AffineGrid (AffineGrid) at opset 16 as custom.ops::AffineGrid is "
                               "written: cannot tell whether the grid is 2-D or 3-D (no shapes)")
