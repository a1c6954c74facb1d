"""onnx's Slice data propagation crashes the process on a step past 2^31 (a segmentation fault,
or memory until killed): inference must run without it there (fuzz case 2029:25020)."""

import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from surgeon.graph.propagation import propagation_hazard


def _sliced_shape(step: int, form: str = "value") -> onnx.ModelProto:
    """Shape(ref) sliced with ``step``, held as a Constant's ``value`` or ``value_ints``, or an initializer."""
    def const(name, value):
        return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(value, np.int64)))

    consts = [const("st", [1]), const("en", [2**63 - 1]), const("ax", [0])]
    inits = []
    if form == "initializer":
        inits.append(numpy_helper.from_array(np.array([step], np.int64), "sp"))
    elif form == "value_ints":
        consts.append(helper.make_node("Constant", [], ["sp"], value_ints=[step]))
    else:
        consts.append(const("sp", [step]))
    nodes = [helper.make_node("Shape", ["ref"], ["s"]), *consts,
             helper.make_node("Slice", ["s", "st", "en", "ax", "sp"], ["part"]),
             helper.make_node("Reshape", ["x", "part"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("ref", TensorProto.FLOAT, ["N", 6]),
                                           helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("step, hazard", [(1, False), (100, False), (2**31 - 1, False), (2**31, True),
                                          (2**40, True), (-(2**40), True)])
def test_a_step_past_2_31_is_a_hazard(step, hazard):
    for form in ("value", "value_ints", "initializer"):
        assert (propagation_hazard(_sliced_shape(step, form)) is not None) == hazard, form


def test_inference_survives_a_huge_slice_step(tmp_path):
    # In a child process: the regression is the process dying, which pytest itself would not survive.
    path = tmp_path / "m.onnx"
    onnx.save(_sliced_shape(2**31 + 5), str(path))
    code = ("import sys, surgeon\nfrom surgeon.rewrite.shapes import infer_shapes\nimport onnx\n"
            "found = infer_shapes(onnx.load(sys.argv[1]))\nprint(found['part'].type.tensor_type.shape.dim[0].dim_value)")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])
    assert done.stdout.strip() == "1", done.stdout  # Shape [N, 6] from 1 with a huge step: one element
