"""Memory grows with the graph, not the weights: folding and probing size a value from its dims
before reading or computing it (benchmarks/huge_weights.py measures the multi-GB case)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from surgeon.errors import SurgeonError
from surgeon.graph import GraphIndex
from surgeon.graph.extract import MAX_VALUE, RegionEvaluator
from surgeon.graph.fold import MAX_READ, ConstantFolder
from surgeon.io.load import skeleton_model

from ..builders import write_model


def never_read(tensor):
    raise AssertionError(f"read {tensor.name} ({list(tensor.dims)})")


def folder_for(graph, read=never_read):
    return GraphIndex(graph), ConstantFolder(read, lambda name: None, 17)


def graph_of(nodes, inits=(), inputs=()):
    return helper.make_graph(nodes, "g", list(inputs), [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                             list(inits))


def test_a_weight_past_the_bound_is_never_read():
    huge = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[MAX_READ + 1])
    index, folder = folder_for(graph_of([helper.make_node("Neg", ["w"], ["y"])], [huge]))
    assert folder.value(index, "w") is None and folder.value(index, "y") is None
    assert folder.too_large(index, "w") == MAX_READ + 1


@pytest.mark.parametrize("node, inits", [
    (helper.make_node("ConstantOfShape", ["s"], ["y"]), {"s": np.array([1 << 40], np.int64)}),
    (helper.make_node("Expand", ["a", "s"], ["y"]), {"a": np.ones(1, np.float32), "s": np.array([1 << 20, 1 << 20])}),
    (helper.make_node("Tile", ["a", "s"], ["y"]), {"a": np.ones(4, np.float32), "s": np.array([1 << 30])}),
    (helper.make_node("Add", ["a", "b"], ["y"]),
     {"a": np.ones((4096, 1), np.float32), "b": np.ones((1, 4096), np.float32)}),
    (helper.make_node("Range", ["a", "b", "c"], ["y"]),
     {"a": np.array(0, np.int64), "b": np.array(1 << 40, np.int64), "c": np.array(1, np.int64)}),
])
def test_a_node_whose_output_would_be_large_is_not_computed(node, inits):
    graph = graph_of([node], [numpy_helper.from_array(v, k) for k, v in inits.items()])
    index, folder = folder_for(graph, read=lambda t: numpy_helper.to_array(t))
    assert folder.value(index, "y") is None


def test_small_shape_computations_still_fold():
    graph = graph_of([helper.make_node("ConstantOfShape", ["s"], ["c"]), helper.make_node("Add", ["c", "c"], ["y"])],
                     [numpy_helper.from_array(np.array([2, 3], np.int64), "s")])
    index, folder = folder_for(graph, read=lambda t: numpy_helper.to_array(t))
    np.testing.assert_array_equal(folder.value(index, "y"), np.zeros((2, 3), np.float32))


def _region(size):
    nodes = [helper.make_node("AffineGrid", ["theta", "size"], ["y"], align_corners=0)]
    graph = graph_of(nodes, [numpy_helper.from_array(np.array(size, np.int64), "size")],
                     [helper.make_tensor_value_info("theta", TensorProto.FLOAT, [1, 2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    index, folder = folder_for(graph, read=lambda t: numpy_helper.to_array(t))
    return RegionEvaluator(model, folder), index


def test_a_probe_that_would_compute_a_huge_grid_is_refused_before_running():
    evaluator, index = _region([1, 1, 1 << 16, 1 << 16])
    with pytest.raises(SurgeonError, match=f"at most {MAX_VALUE}"):
        evaluator.run(index, ["y"], {"theta": np.zeros((1, 2, 3), np.float32)})
    evaluator, index = _region([1, 1, 4, 5])
    assert evaluator.run(index, ["y"], {"theta": np.zeros((1, 2, 3), np.float32)})[0].shape == (1, 4, 5, 2)


def _peak(args, cwd) -> int:
    proc = subprocess.Popen([sys.executable, "-m", "surgeon", *map(str, args)], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    assert status == 0, proc.stderr.read().decode()
    return usage.ru_maxrss * 1024


def test_inspect_peak_does_not_follow_the_weights(tmp_path):
    """A 1 GB weight (sparse file: no disk) on the grid path and one added to an input: inspect
    peaks within 1.5x of inspecting the same graph without its data."""
    n, side = 1 << 27, 1 << 13  # 512 MB each
    nodes = [helper.make_node("Add", ["x", "v"], ["xv"]),
             helper.make_node("AffineGrid", ["theta", "size"], ["g0"], align_corners=0),
             helper.make_node("Add", ["g0", "offset"], ["g"]),
             helper.make_node("GridSample", ["img", "g"], ["y"], align_corners=0)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, n // 2]),
                     helper.make_tensor_value_info("theta", TensorProto.FLOAT, [1, 2, 3]),
                     helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 1, side, side])],
        [helper.make_tensor_value_info("xv", TensorProto.FLOAT, [2, n // 2]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, side, side])],
        [numpy_helper.from_array(np.array([1, 1, side, side], np.int64), "size")])
    for k, (name, dims) in enumerate((("v", [2, n // 2]), ("offset", [1, side, side, 2]))):
        tensor = graph.initializer.add(name=name, data_type=TensorProto.FLOAT, dims=dims,
                                       data_location=TensorProto.EXTERNAL)
        for key, value in (("location", "m.onnx.data"), ("offset", str(k * n * 4)), ("length", str(n * 4))):
            tensor.external_data.add(key=key, value=value)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    write_model(model, tmp_path / "m.onnx")
    with open(tmp_path / "m.onnx.data", "wb") as f:
        f.truncate(2 * n * 4)
    write_model(skeleton_model(model), tmp_path / "bare.onnx")
    heavy = _peak(["inspect", tmp_path / "m.onnx"], tmp_path)
    bare = _peak(["inspect", tmp_path / "bare.onnx"], tmp_path)
    assert heavy <= 1.5 * bare, (heavy / 2**20, bare / 2**20)
