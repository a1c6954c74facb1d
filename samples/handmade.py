"""Models no exporter writes for us, built with onnx.helper."""
from onnx import TensorProto, helper


def if_branch(opset=20):
    """y = If(cond): GridSample(x, AffineGrid(theta, Shape(x))) else Identity(x).

    The torch exporters do not put a traced Python `if` into an If node; this is the shape a
    scripted or torch.cond model would leave: the chain sits in a subgraph that reads the
    outer x and theta.
    """
    fl = TensorProto.FLOAT
    then_g = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["size"]),
         helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=0),
         helper.make_node("GridSample", ["x", "grid"], ["y_then"], align_corners=0,
                          mode="linear", padding_mode="zeros")],
        "warp", [], [helper.make_tensor_value_info("y_then", fl, ["N", 3, "H", "W"])])
    else_g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y_else"])],
        "passthrough", [], [helper.make_tensor_value_info("y_else", fl, ["N", 3, "H", "W"])])
    graph = helper.make_graph(
        [helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)],
        "if_branch",
        [helper.make_tensor_value_info("x", fl, ["N", 3, "H", "W"]),
         helper.make_tensor_value_info("theta", fl, ["N", 2, 3]),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", fl, ["N", 3, "H", "W"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="surgeon-samples")
    model.ir_version = 9   # readable by onnxruntime 1.17+, the oldest the project supports
    return model


def native_size_input(opset=20):
    """y = GridSample(x, AffineGrid(theta, size)) with ``size`` a model input (int64 [4]): the
    standard op fed a size given as data, which no exporter writes (torch's affine_grid takes a
    Python size)."""
    fl = TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=0),
         helper.make_node("GridSample", ["x", "grid"], ["y"], align_corners=0, mode="linear",
                          padding_mode="zeros")],
        "native_size_input",
        [helper.make_tensor_value_info("x", fl, ["N", 3, 16, 12]),
         helper.make_tensor_value_info("theta", fl, ["N", 2, 3]),
         helper.make_tensor_value_info("size", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("y", fl, ["N", 3, "H_out", "W_out"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="surgeon-samples")
    model.ir_version = 9
    return model


BUILDERS = {"if_branch.onnx": if_branch, "native_size_input_opset20.onnx": native_size_input}
