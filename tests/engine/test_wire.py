"""The streamed model writer: its bytes parse back into the same model."""

import io
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from surgeon.errors import SurgeonError
from surgeon.io.wire import data_nbytes, varint, without, write_model

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "samples" / "models").glob("*.onnx"))


def streamed(model: onnx.ModelProto) -> bytes:
    buf = io.BytesIO()
    write_model(model, buf)
    return buf.getvalue()


def assert_round_trip(model: onnx.ModelProto) -> None:
    back = onnx.ModelProto()
    back.ParseFromString(streamed(model))
    assert back == model
    assert back.SerializeToString(deterministic=True) == model.SerializeToString(deterministic=True)


def rich_model() -> onnx.ModelProto:
    """Large raw weights, a small one, a float_data weight, an externally stored one, a body
    with its own initializer, and metadata everywhere."""
    rng = np.random.default_rng(0)
    big = numpy_helper.from_array(rng.random((300, 300), np.float32), "big")
    big.doc_string = "a weight"
    small = numpy_helper.from_array(np.arange(3, dtype=np.int64), "small")
    listed = helper.make_tensor("listed", TensorProto.FLOAT, [20000], rng.random(20000).tolist())
    ext = TensorProto(name="ext", data_type=TensorProto.FLOAT, dims=[4], data_location=TensorProto.EXTERNAL)
    for key, value in (("location", "w.bin"), ("offset", "0"), ("length", "16")):
        ext.external_data.add(key=key, value=value)
    big.metadata_props.add(key="k", value="v")
    body = helper.make_graph(
        [helper.make_node("Add", ["big", "inner"], ["o"])], "body", [],
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, [300, 300])],
        initializer=[numpy_helper.from_array(np.ones((300, 300), np.float32), "inner")])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body, name="if")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [300, 300])],
                              initializer=[big, small, listed, ext], doc_string="graph doc")
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="t")
    helper.set_model_props(model, {"author": "tests"})
    return model


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**31, 2**63 - 1])
def test_varint_matches_protobuf(value):
    # A uint64 field's encoding is tag (one byte here) + the varint.
    encoded = TensorProto(dims=[value]).SerializeToString()
    assert encoded == b"\x08" + varint(value)


def test_without_drops_one_field_only():
    model = rich_model()
    copy = without(model.graph, "initializer")
    assert len(copy.initializer) == 0
    assert copy.node == model.graph.node and copy.doc_string == "graph doc"
    assert list(copy.input) == list(model.graph.input)


def test_rich_model_round_trips():
    model = rich_model()
    data = streamed(model)
    assert_round_trip(model)
    # The big weight's bytes are written as they are, not re-encoded.
    assert model.graph.initializer[0].raw_data in data


def test_models_without_weights_are_written_whole():
    model = rich_model()
    del model.graph.initializer[:]
    assert streamed(model) == model.SerializeToString()
    assert streamed(onnx.ModelProto()) == b""


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_samples_round_trip(path):
    assert_round_trip(onnx.load(str(path)))


def with_unknown_field(message, field_number=1000):
    """``message`` as a newer schema might have written it: plus a field this one lacks."""
    extra = type(message)()
    extra.ParseFromString(message.SerializeToString() + varint(field_number << 3) + varint(7))
    return extra


@pytest.mark.parametrize("where", ["model", "graph", "tensor"])
def test_fields_unknown_to_this_onnx_are_kept(where):
    model = rich_model()
    if where == "model":
        model = with_unknown_field(model)
    elif where == "graph":
        model.graph.CopyFrom(with_unknown_field(model.graph))
    else:
        model.graph.initializer[0].CopyFrom(with_unknown_field(model.graph.initializer[0]))
    data = streamed(model)
    assert data.count(varint(1000 << 3) + varint(7)) == 1
    back = onnx.ModelProto()
    back.ParseFromString(data)
    assert back.SerializeToString(deterministic=True) == model.SerializeToString(deterministic=True)



@pytest.mark.parametrize("size", [1 << 10, 1 << 17])  # serialised whole, and split
def test_raw_data_that_does_not_fit_its_dims_is_refused(size):
    tensor = onnx.numpy_helper.from_array(np.zeros(size, np.float32), "w")
    tensor.raw_data = tensor.raw_data[:-4]
    model = onnx.helper.make_model(onnx.helper.make_graph([], "g", [], [], [tensor]))
    with pytest.raises(SurgeonError, match="'w': its data holds"):
        streamed(model)


@pytest.mark.parametrize("dtype, dims, nbytes", [
    (onnx.TensorProto.FLOAT, [3, 5], 60), (onnx.TensorProto.INT4, [5], 3), (onnx.TensorProto.UINT4, [2, 2], 2),
    (onnx.TensorProto.BOOL, [7], 7), (onnx.TensorProto.STRING, [2], None), (999, [2], None),
    (onnx.TensorProto.FLOAT, [-1], None),
])
def test_data_nbytes(dtype, dims, nbytes):
    assert data_nbytes(onnx.TensorProto(data_type=dtype, dims=dims)) == nbytes


def top_level_fields(data: bytes) -> list[int]:
    """The field numbers of a serialised message, in the order they come."""
    numbers, i = [], 0
    while i < len(data):
        key, i = _read_varint(data, i)
        numbers.append(key >> 3)
        if key & 7 == 2:
            size, i = _read_varint(data, i)
            i += size
        elif key & 7 == 0:
            _, i = _read_varint(data, i)
        else:
            raise AssertionError(f"wire type {key & 7}")
    return numbers


def _read_varint(data: bytes, i: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def test_fields_come_in_number_order():
    """OpenVINO's ONNX frontend takes a file for ONNX by its first three distinct top-level fields
    and refuses one where a field repeats first: two opset imports may not come before the graph."""
    model = rich_model()
    model.ClearField("producer_name")
    model.opset_import.append(helper.make_opsetid("custom.ops", 1))
    data = streamed(model)
    assert top_level_fields(data) == sorted(top_level_fields(data))
    assert onnx.ModelProto.FromString(data) == model
    weight = numpy_helper.from_array(np.ones(3, np.float32), "w")
    small = helper.make_model(helper.make_graph([], "g", [], [], [weight]),
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("custom.ops", 1)])
    assert streamed(small) == small.SerializeToString()  # nothing split: the same bytes
