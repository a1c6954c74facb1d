"""``unfuse --opset`` going down where onnx.version_converter cannot: every op the converter has
no down-adapter for is lowered by surgeon or named in a one-line error (checked against the
converter itself, version by version), and each lowering computes what the original computes in
onnxruntime."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import surgeon
from surgeon.deploy.lowering import LOWERINGS

from ..builders import onnx_model
from .adapters import FLOOR, histories, invalid_down_steps, missing_down_adapters, smallest_model
from .fused_samples import opset_of, ort_run

vi = helper.make_tensor_value_info


def lowered(model, opset=FLOOR):
    result = surgeon.unfuse(model, opset=opset)
    onnx.shape_inference.infer_shapes(result.model, check_type=True, strict_mode=True)  # valid at the target
    assert opset_of(result.model) == opset
    return result


def assert_same(model, feeds, opset=FLOOR, ops=None):
    """Lowered to ``opset``, the model computes what the original does, in onnxruntime."""
    result = lowered(model, opset)
    want, got = ort_run(model, feeds), ort_run(result.model, feeds)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    types = {n.op_type for n in result.model.graph.node}
    assert not (ops or set()) - types, (ops, types)
    return result


# -- the converter's adapters ------------------------------------------------------------------

def test_every_missing_down_adapter_is_lowered_or_its_op_starts_above_16():
    missing = missing_down_adapters()
    assert {("ConstantOfShape", 20), ("Pad", 18), ("GridSample", 20)} <= set(missing)  # the probe sees them
    first = {name: min(v) for name, v in histories().items()}
    for op, version in missing:
        if first[op] > FLOOR:
            continue  # not at 16: the next test
        assert op in LOWERINGS, f"onnx.version_converter has no adapter from {op}-{version} down: lower it"
        assert LOWERINGS[op].since <= version, (op, version, LOWERINGS[op].since)


def test_ops_that_start_above_16_are_named_in_one_line():
    checked, plugins = 0, surgeon.PluginSet.installed()
    for op, versions in sorted(histories().items()):
        start = min(versions)
        if start <= FLOOR or plugins.equal_to_standard(op):
            continue  # (a plugin's op writes AffineGrid: test_unfuse_native.py)
        model = smallest_model(versions[start], start)
        if model is None:
            continue
        with pytest.raises(surgeon.SurgeonError) as info:
            surgeon.unfuse(model, opset=FLOOR)
        text = str(info.value)
        assert "\n" not in text and f"node probe ({op})" in text and f"exists from opset {start}" in text, text
        checked += 1
    assert checked > 30


# -- each lowering, in onnxruntime -------------------------------------------------------------

@pytest.mark.parametrize("value", [np.array([1.5], np.float32), np.array([7], np.int64), np.array([True])])
def test_constant_of_shape(value):
    node = helper.make_node("ConstantOfShape", ["s"], ["y"], value=numpy_helper.from_array(value))
    elem = helper.np_dtype_to_tensor_dtype(value.dtype)
    model = onnx_model([node], [vi("s", TensorProto.INT64, [2])], [vi("y", elem, None)], opset=21, ir_version=10, name="m")
    assert_same(model, {"s": np.array([2, 3], np.int64)}, ops={"ConstantOfShape"})


def test_constant_of_shape_of_a_type_16_lacks_is_named():
    value = helper.make_tensor("v", TensorProto.FLOAT8E4M3FN, [1], [1.0])
    node = helper.make_node("ConstantOfShape", ["s"], ["y"], name="zeros8", value=value)
    model = onnx_model([node], [vi("s", TensorProto.INT64, [2])], [vi("y", TensorProto.FLOAT8E4M3FN, None)], opset=21, ir_version=10, name="m")
    with pytest.raises(surgeon.SurgeonError, match=r"node zeros8 \(ConstantOfShape\) at opset 16: its output 0 is "
                       r"float8e4m3fn, which ConstantOfShape takes only from opset 20"):
        surgeon.unfuse(model, opset=16)


PAD_CASES = {
    "no axes": dict(axes=None, pads=[1, 2, 0, 3], mode="constant"),
    "axes constant": dict(axes=[1], pads=[2, 1], mode="constant"),
    "negative axes": dict(axes=[-1, 0], pads=[1, 0, 2, 1], mode="reflect"),
    "axes at run time": dict(axes="input", pads=[1, 2], mode="edge"),
    "pads at run time": dict(axes=[0], pads="input", mode="constant"),
}


@pytest.mark.parametrize("case", PAD_CASES)
@pytest.mark.parametrize("opset", [18, 21])
def test_pad(case, opset):
    spec = PAD_CASES[case]
    inputs, inits, feeds = [vi("x", TensorProto.FLOAT, [3, 4])], [], {"x": np.arange(12, dtype=np.float32).reshape(3, 4)}
    pads = np.array(spec["pads"] if spec["pads"] != "input" else [2, 1], np.int64)
    if spec["pads"] == "input":
        inputs.append(vi("pads", TensorProto.INT64, [2]))
        feeds["pads"] = pads
    else:
        inits.append(numpy_helper.from_array(pads, "pads"))
    names = ["x", "pads", "cv" if spec["mode"] == "constant" else ""]
    inits.append(numpy_helper.from_array(np.array(-2.5, np.float32), "cv"))
    if spec["axes"] == "input":
        inputs.append(vi("axes", TensorProto.INT64, [1]))
        feeds["axes"] = np.array([-1], np.int64)
        names.append("axes")
    elif spec["axes"] is not None:
        inits.append(numpy_helper.from_array(np.array(spec["axes"], np.int64), "axes"))
        names.append("axes")
    node = helper.make_node("Pad", names, ["y"], mode=spec["mode"])
    model = onnx_model([node], inputs, [vi("y", TensorProto.FLOAT, None)], inits, opset=opset, ir_version=10, name="m")
    assert_same(model, feeds, ops={"Pad"})


def test_pad_wrap_is_named():
    pads = numpy_helper.from_array(np.array([1, 1], np.int64), "pads")
    node = helper.make_node("Pad", ["x", "pads"], ["y"], name="wrapped", mode="wrap")
    model = onnx_model([node], [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, None)], [pads], opset=19, ir_version=10, name="m")
    with pytest.raises(surgeon.SurgeonError, match=r"node wrapped \(Pad\) at opset 17: mode 'wrap' exists from opset 19"):
        surgeon.unfuse(model, opset=17)


@pytest.mark.parametrize("dims,parts", [([2, 6], 3), ([2, 7], 3), (["N", "W"], 3)], ids=["even", "uneven", "dynamic"])
def test_split_num_outputs(dims, parts):
    outs = [f"y{i}" for i in range(parts)]
    node = helper.make_node("Split", ["x"], outs, axis=1, num_outputs=parts)
    model = onnx_model([node], [vi("x", TensorProto.FLOAT, dims)], [vi(o, TensorProto.FLOAT, None) for o in outs], opset=18, ir_version=10, name="m")
    assert_same(model, {"x": np.arange(14, dtype=np.float32).reshape(2, 7)[:, :dims[1] if dims[1] != "W" else 7]},
                ops={"Split"})


def test_split_sizes_given():
    sizes = numpy_helper.from_array(np.array([1, 4], np.int64), "sizes")
    node = helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=0)
    model = onnx_model([node], [vi("x", TensorProto.FLOAT, [5])], [vi("a", TensorProto.FLOAT, None),
                                                                  vi("b", TensorProto.FLOAT, None)], [sizes], opset=18, ir_version=10, name="m")
    assert_same(model, {"x": np.arange(5, dtype=np.float32)})


def test_lp_pool_and_global_max_pool():
    nodes = [helper.make_node("LpPool", ["x"], ["p"], kernel_shape=[2, 2], p=2, ceil_mode=0),
             helper.make_node("GlobalMaxPool", ["p"], ["y"])]
    model = onnx_model(nodes, [vi("x", TensorProto.FLOAT, [1, 2, 4, 4])], [vi("y", TensorProto.FLOAT, None)], opset=22, ir_version=10, name="m")
    assert_same(model, {"x": np.random.default_rng(0).random((1, 2, 4, 4), np.float32)}, ops={"LpPool"})


def test_lp_pool_ceil_mode_is_named():
    node = helper.make_node("LpPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2], ceil_mode=1)
    model = onnx_model([node], [vi("x", TensorProto.FLOAT, [1, 1, 5, 5])], [vi("y", TensorProto.FLOAT, None)], opset=18, ir_version=10, name="m")
    with pytest.raises(surgeon.SurgeonError, match=r"node pool \(LpPool\) at opset 16: ceil_mode=1 exists from opset 18"):
        surgeon.unfuse(model, opset=16)


def _grid(shape, rng):
    """Coordinates past the edges, and exact pixel centres and half-way points (nearest's ties)."""
    grid = rng.uniform(-1.4, 1.4, shape).astype(np.float32)
    flat = grid.reshape(-1)
    flat[: flat.size // 4] = np.round(flat[: flat.size // 4] * 4) / 4
    return grid


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("opset", [20, 22])
def test_grid_sample_volume_by_gathers(mode, padding, align, opset):
    rng = np.random.default_rng(3)
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=padding, align_corners=align)
    model = onnx_model([node], [vi("x", TensorProto.FLOAT, [2, 3, 4, 5, 6]), vi("g", TensorProto.FLOAT, [2, 3, 4, 5, 3])], [vi("y", TensorProto.FLOAT, None)], opset=opset, ir_version=10, name="m")
    feeds = {"x": rng.standard_normal((2, 3, 4, 5, 6)).astype(np.float32), "g": _grid((2, 3, 4, 5, 3), rng)}
    result = assert_same(model, feeds, ops={"GatherND"})
    assert "GridSample" not in {n.op_type for n in result.model.graph.node}


def test_grid_sample_volume_size_one_dims():
    rng = np.random.default_rng(4)
    for padding in ("zeros", "border", "reflection"):
        for align in (0, 1):
            node = helper.make_node("GridSample", ["x", "g"], ["y"], padding_mode=padding, align_corners=align)
            model = onnx_model([node], [vi("x", TensorProto.FLOAT, [1, 2, 1, 1, 3]),
                                      vi("g", TensorProto.FLOAT, [1, 2, 2, 2, 3])], [vi("y", TensorProto.FLOAT, None)], opset=20, ir_version=10, name="m")
            assert_same(model, {"x": rng.standard_normal((1, 2, 1, 1, 3)).astype(np.float32),
                                "g": _grid((1, 2, 2, 2, 3), rng)})


@pytest.mark.parametrize("mode,old", [("linear", "bilinear"), ("cubic", "bicubic"), ("nearest", "nearest")])
def test_grid_sample_4d_takes_the_old_names(mode, old):
    rng = np.random.default_rng(5)
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode="border", align_corners=1)
    model = onnx_model([node], [vi("x", TensorProto.FLOAT, [1, 2, 5, 6]), vi("g", TensorProto.FLOAT, [1, 3, 4, 2])], [vi("y", TensorProto.FLOAT, None)], opset=20, ir_version=10, name="m")
    result = assert_same(model, {"x": rng.standard_normal((1, 2, 5, 6)).astype(np.float32),
                                 "g": _grid((1, 3, 4, 2), rng)}, ops={"GridSample"})
    (sampler,) = [n for n in result.model.graph.node if n.op_type == "GridSample"]
    assert helper.get_attribute_value(sampler.attribute[-1]) == old.encode() or \
        {a.name: helper.get_attribute_value(a) for a in sampler.attribute}["mode"] == old.encode()


def test_grid_sample_cubic_volume_is_named():
    node = helper.make_node("GridSample", ["x", "g"], ["y"], name="cubic3d", mode="cubic")
    model = onnx_model([node], [vi("x", TensorProto.FLOAT, [1, 1, 2, 2, 2]), vi("g", TensorProto.FLOAT, [1, 1, 1, 1, 3])], [vi("y", TensorProto.FLOAT, None)], opset=20, ir_version=10, name="m")
    with pytest.raises(surgeon.SurgeonError, match=r"node cubic3d \(GridSample\) at opset 16: cubic sampling of a rank-5"):
        surgeon.unfuse(model, opset=16)


def test_lowered_inside_an_if_body():
    pads = numpy_helper.from_array(np.array([1, 1], np.int64), "pads")
    axes = numpy_helper.from_array(np.array([0], np.int64), "axes")
    then = helper.make_graph([helper.make_node("Pad", ["x", "pads", "", "axes"], ["t"])], "then", [],
                             [vi("t", TensorProto.FLOAT, None)], [pads, axes])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", TensorProto.FLOAT, None)])
    node = helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)
    model = onnx_model([node], [vi("x", TensorProto.FLOAT, [3]), vi("c", TensorProto.BOOL, [])], [vi("y", TensorProto.FLOAT, None)], opset=18, ir_version=10, name="m")
    for cond in (True, False):
        assert_same(model, {"x": np.arange(3, dtype=np.float32), "c": np.array(cond)})


# -- what the converter itself refuses, and types a lower opset lacks: the node is named -------

def test_a_type_the_target_lacks_is_named():
    node = helper.make_node("Acos", ["x"], ["y"], name="acos16")
    model = onnx_model([node], [vi("x", TensorProto.BFLOAT16, [2])], [vi("y", TensorProto.BFLOAT16, None)], opset=22, ir_version=10, name="m")
    with pytest.raises(surgeon.SurgeonError, match=r"node acos16 \(Acos\) at opset 16: its input 0 is bfloat16, "
                       r"which Acos takes only from opset 22"):
        surgeon.unfuse(model, opset=16)


def test_a_node_the_converter_refuses_is_named():
    # Mod-28 on floats with fmod=0 has no opset-27 form; the converter says so without the node.
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"), helper.make_node("Mod", ["r", "x"], ["y"], name="rem")]
    model = onnx_model(nodes, [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.FLOAT, [2, 3])], opset=28, ir_version=10, name="m")
    with pytest.raises(surgeon.SurgeonError) as info:
        surgeon.unfuse(model, opset=27)
    text = str(info.value)
    assert "\n" not in text and text.startswith("cannot convert node rem (Mod) from opset 28 to 27"), text


def test_every_down_step_that_writes_an_invalid_node_is_lowered():
    """With every attribute written at its default (as exporters write them), some adapters keep
    an attribute the older version does not know (ReduceMean's noop_with_empty_axes, Cast's
    saturate): the node they write is invalid, so surgeon lowers those ops itself."""
    faulty = invalid_down_steps()
    assert ("ReduceMean", 18) in {(op, v) for op, v, _ in faulty}
    first = {name: min(v) for name, v in histories().items()}
    for op, version, why in faulty:
        if first[op] > FLOOR:
            continue
        assert op in LOWERINGS and LOWERINGS[op].since <= version, f"{op}-{version} steps down invalid: {why}"


@pytest.mark.parametrize("op", ["ReduceMean", "ReduceMax", "ReduceL2", "ReduceLogSumExp", "ReduceProd"])
@pytest.mark.parametrize("axes", [[1], [-1, 0], [], None], ids=["one", "two", "empty", "absent"])
@pytest.mark.parametrize("noop", [0, 1])
def test_reduce_axes_input(op, axes, noop):
    inits = [numpy_helper.from_array(np.array(axes, np.int64), "axes")] if axes is not None else []
    node = helper.make_node(op, ["x", "axes" if axes is not None else ""], ["y"], keepdims=0, noop_with_empty_axes=noop)
    model = onnx_model([node], [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.FLOAT, None)], inits, opset=18, ir_version=10, name="m")
    assert_same(model, {"x": np.random.default_rng(1).random((2, 3), np.float32) + 0.5})


def test_reduce_axes_at_run_time_are_named():
    node = helper.make_node("ReduceMean", ["x", "axes"], ["y"], name="mean", noop_with_empty_axes=0)
    model = onnx_model([node], [vi("x", TensorProto.FLOAT, [2, 3]), vi("axes", TensorProto.INT64, [1])], [vi("y", TensorProto.FLOAT, None)], opset=18, ir_version=10, name="m")
    with pytest.raises(surgeon.SurgeonError, match=r"node mean \(ReduceMean\) at opset 16: its axes are known at run "
                       "time only"):
        surgeon.unfuse(model, opset=16)


def test_cast_and_quantize_attributes_of_newer_opsets():
    scale = numpy_helper.from_array(np.array(0.05, np.float32), "scale")
    zero = numpy_helper.from_array(np.array(3, np.uint8), "zero")
    nodes = [helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16, saturate=1),
             helper.make_node("CastLike", ["h", "x"], ["f"], saturate=1),
             helper.make_node("QuantizeLinear", ["f", "scale", "zero"], ["q"], saturate=1, block_size=0),
             helper.make_node("DequantizeLinear", ["q", "scale", "zero"], ["y"], block_size=0)]
    model = onnx_model(nodes, [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, None)], [scale, zero], opset=21, ir_version=10, name="m")
    assert_same(model, {"x": np.array([-1.0, 0.0, 0.3, 2.0], np.float32)})
    nodes[2] = helper.make_node("QuantizeLinear", ["f", "scale", "zero"], ["q"], name="blocked", block_size=2)
    blocked = onnx_model(nodes, [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, None)], [scale, zero], opset=21, ir_version=10, name="m")
    with pytest.raises(surgeon.SurgeonError, match=r"node blocked \(QuantizeLinear\) at opset 16: block_size=2 exists "
                       "from opset 21"):
        surgeon.unfuse(blocked, opset=16)
