"""Which dims the ops make one (surgeon/graph/dimsource.py): proved from the ops, never from names."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from surgeon.graph.dimsource import DimSources
from surgeon.graph.node import Node


def _sources(nodes, inputs, inits=()):
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info(nodes[-1].output[0], 1, None)],
                              initializer=list(inits))
    model = onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]))
    producers = {o: Node(n, i) for i, n in enumerate(model.graph.node) for o in n.output}
    constants = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    shapes = {}
    for info in [*model.graph.input, *model.graph.value_info, *model.graph.output]:
        if info.type.tensor_type.HasField("shape"):
            shapes[info.name] = tuple(d.dim_value or d.dim_param or None for d in info.type.tensor_type.shape.dim)
    return DimSources(producers.get, constants.get, shapes.get)


def _ints(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


X = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])
Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3, "H", "W"])  # same names, another tensor


def _reshape_to_shape_of(source="x", allowzero=0, entry_ops="gather"):
    """v = Reshape(x, [-1, s[1], s[2], s[3]]) with s = Shape(source), entries picked as asked."""
    nodes = [helper.make_node("Shape", [source], ["s"])]
    if entry_ops == "gather":
        parts = []
        for axis in (1, 2, 3):
            nodes += [helper.make_node("Gather", ["s", f"i{axis}"], [f"g{axis}"], axis=0),
                      helper.make_node("Unsqueeze", [f"g{axis}", "zero"], [f"u{axis}"])]
            parts.append(f"u{axis}")
        nodes.append(helper.make_node("Concat", ["minus_one", *parts], ["target"], axis=0))
        inits = [_ints(f"i{a}", a) for a in (1, 2, 3)] + [_ints("zero", [0]), _ints("minus_one", [-1])]
    elif entry_ops == "slice":
        nodes += [helper.make_node("Slice", ["s", "one", "four"], ["tail"]),
                  helper.make_node("Concat", ["minus_one", "tail"], ["target"], axis=0)]
        inits = [_ints("one", [1]), _ints("four", [4]), _ints("minus_one", [-1])]
    else:  # Shape(start=1)
        nodes = [helper.make_node("Shape", [source], ["tail"], start=1),
                 helper.make_node("Concat", ["minus_one", "tail"], ["target"], axis=0)]
        inits = [_ints("minus_one", [-1])]
    nodes += [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Reshape", ["r", "target"], ["v"],
                                                                       allowzero=allowzero)]
    return _sources(nodes, [X, Y], inits)


@pytest.mark.parametrize("entry_ops", ["gather", "slice", "shape-start"])
def test_a_reshape_to_another_values_shape_copies_its_dims(entry_ops):
    sources = _reshape_to_shape_of(entry_ops=entry_ops)
    assert sources.same_dim("v", 2, "x", 2) and sources.same_dim("v", -1, "x", 3)
    assert not sources.same_dim("v", 2, "x", 3)
    assert not sources.same_dim("v", 0, "x", 0)  # -1: inferred from the element count


def test_a_reshape_to_another_tensors_shape_needs_allowzero():
    # Reshape(relu(x), Shape(y)[1:]): an entry 0 of y's (y[2] == 0) copies x's own dim there
    # unless allowzero is set, so y's dims are v's only with allowzero=1.
    assert not _reshape_to_shape_of(source="y").same_dim("v", 2, "y", 2)
    assert _reshape_to_shape_of(source="y", allowzero=1).same_dim("v", 2, "y", 2)


def test_names_alone_make_no_dims_one():
    sources = _reshape_to_shape_of()
    assert not sources.same_dim("x", 2, "y", 2)  # both declare H


def test_transpose_and_shape_keeping_ops_carry_dims():
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
             helper.make_node("Cast", ["t"], ["c"], to=TensorProto.FLOAT16),
             helper.make_node("Sigmoid", ["c"], ["out"])]
    sources = _sources(nodes, [X])
    assert sources.same_dim("out", 1, "x", 2) and sources.same_dim("out", 3, "x", 1)
    assert not sources.same_dim("out", 1, "x", 1)


def test_broadcasting_ops_and_constant_entries_prove_nothing():
    nodes = [helper.make_node("Add", ["x", "y"], ["sum"]),
             helper.make_node("Reshape", ["x", "fixed"], ["v"])]
    sources = _sources(nodes, [X, Y], [_ints("fixed", [-1, 3, 4, 5])])
    assert not sources.same_dim("sum", 2, "x", 2)
    assert not sources.same_dim("v", 3, "x", 3)


@pytest.mark.parametrize("allowzero", [0, 1])
def test_a_zero_entry_copies_the_datas_dim_unless_allowzero(allowzero):
    # onnxsim folds x.reshape(-1, 3, H, W) to Reshape(x, [-1, 3, 0, 0])
    nodes = [helper.make_node("Reshape", ["x", "target"], ["v"], allowzero=allowzero)]
    sources = _sources(nodes, [X], [_ints("target", [-1, 3, 0, 0])])
    assert sources.same_dim("v", 3, "x", 3) is (not allowzero)


def _padded(pads="torch", axes=False):
    """p = Pad(x, pads): ``"torch"`` as TorchScript writes F.pad(x, [0, W == 1, 0, H == 1]) (the
    torch-order pads concatenated with zeros, reshaped to pairs, reversed, transposed, flattened);
    ``"batch"`` the same with a run-time pad on the batch too; else a constant pads list."""
    nodes = [helper.make_node("Shape", ["x"], ["s"])]
    inits = [_ints("one", [1]), _ints("zero1", [0]), _ints("pairs", [-1, 2]), _ints("flat", [-1]),
             _ints("rev_start", [-1]), _ints("rev_end", [-(2 ** 62)]), _ints("rev_axis", [0]), _ints("rev_step", [-1])]
    if pads in ("torch", "batch"):
        for axis in (0, 2, 3):
            nodes += [helper.make_node("Gather", ["s", f"i{axis}"], [f"n{axis}"], axis=0),
                      helper.make_node("Equal", [f"n{axis}", "one"], [f"e{axis}"]),
                      helper.make_node("Cast", [f"e{axis}"], [f"p{axis}"], to=TensorProto.INT64)]
            inits.append(_ints(f"i{axis}", [axis]))
        # torch's order: (W before, W after, H before, H after, C..., N...)
        torch_order = ["zero1", "p3", "zero1", "p2"] + (["zero1", "zero1", "zero1", "p0"] if pads == "batch" else [])
        rest = helper.make_tensor("v", TensorProto.INT64, [1], [0])
        nodes += [helper.make_node("Concat", torch_order, ["t"], axis=0),
                  helper.make_node("ConstantOfShape", ["rest_len"], ["rest"], value=rest),
                  helper.make_node("Concat", ["t", "rest"], ["tz"], axis=0),
                  helper.make_node("Reshape", ["tz", "pairs"], ["tp"]),
                  helper.make_node("Slice", ["tp", "rev_start", "rev_end", "rev_axis", "rev_step"], ["tr"]),
                  helper.make_node("Transpose", ["tr"], ["tt"], perm=[1, 0]),
                  helper.make_node("Reshape", ["tt", "flat"], ["pads"])]
        inits.append(_ints("rest_len", [8 - len(torch_order)]))
    else:
        inits.append(_ints("pads", pads))
    pad_inputs = ["x", "pads", "", "axes"] if axes else ["x", "pads"]
    if axes:
        inits.append(_ints("axes", [0, 1, 2, 3]))
    nodes.append(helper.make_node("Pad", pad_inputs, ["p"], mode="constant"))
    return _sources(nodes, [X], inits)


def test_a_pad_keeps_the_dims_its_pads_leave_alone():
    # F.pad for a one-pixel axis (kornia's warp_perspective): the batch and channels are the input's
    sources = _padded()
    assert sources.same_dim("p", 0, "x", 0) and sources.same_dim("p", 1, "x", 1)
    assert not sources.same_dim("p", 2, "x", 2) and not sources.same_dim("p", 3, "x", 3)  # a pixel more at 1
    constant = _padded([0, 0, 0, 1, 0, 0, 0, 0])
    assert constant.same_dim("p", 2, "x", 2) and not constant.same_dim("p", 3, "x", 3)


def test_a_pad_of_the_batch_or_of_named_axes_keeps_nothing_there():
    assert not _padded("batch").same_dim("p", 0, "x", 0)
    assert not _padded([0, 0, 0, 0, 0, 0, 0, 0], axes=True).same_dim("p", 0, "x", 0)  # opset 18: pads per axes
