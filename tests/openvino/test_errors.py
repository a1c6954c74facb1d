"""Bad models and bad feeds are clean OpenVINO errors naming the node, never a crash: attribute
errors when the model is read (the ONNX frontend's conversion), shape errors when it is read
(static shapes) or run (dynamic ones). The process goes on: every test here runs in it."""

import numpy as np
import pytest

from ..builders import F16, FLOAT, affine_grid_model, fused_grid_sample_model
from ..ort.contract_cases import ATTRIBUTE_ERRORS
from .conftest import F32, compiled, infer, ranked, run


def x4(n=2, c=3, h=8, w=7, dtype=np.float32):
    return np.random.default_rng(0).random((n, c, h, w)).astype(dtype)


def theta2(n=2, dtype=np.float32):
    return np.tile(np.eye(2, 3, dtype=dtype), (n, 1, 1))


def read(core, model):
    return core.read_model(ranked(model).SerializeToString(), b"")


@pytest.mark.parametrize("attrs,message", ATTRIBUTE_ERRORS)
def test_attribute_errors_fail_read_model(core, attrs, message):
    with pytest.raises(RuntimeError, match="custom.ops::FusedGridSample node 'fgs': " + message):
        read(core, fused_grid_sample_model(**attrs))


def test_both_output_size_and_size_input(core):
    with pytest.raises(RuntimeError, match="fgs': has both an output_size attribute and a size input"):
        read(core, fused_grid_sample_model(size_input=True, output_size=[4, 4]))


def test_float16_x_with_float32_theta(core):
    with pytest.raises(RuntimeError, match=r"theta is float32 but X is float16; "
                                           r"theta must have X's element type \(ops/OPS.md\)"):
        read(core, fused_grid_sample_model(x_type=F16, theta_type=FLOAT, output_size=[4, 4]))


def test_opset20_mode_names_are_read_as_torchs(core):
    x, theta = x4(), theta2()
    want = run(fused_grid_sample_model(mode="bicubic", output_size=[5, 6]), core, x=x, theta=theta)
    np.testing.assert_array_equal(run(fused_grid_sample_model(mode="cubic", output_size=[5, 6]), core, x=x, theta=theta), want)


def test_affine_grid_attribute_errors(core):
    with pytest.raises(RuntimeError, match="custom.ops::AffineGrid node 'ag': align_corners must be 0 or 1"):
        read(core, affine_grid_model(align_corners=5, output_size=[4, 4]))
    with pytest.raises(RuntimeError, match="AffineGrid node 'ag': has neither an output_size attribute nor a size"):
        read(core, affine_grid_model())


@pytest.mark.parametrize("feeds,message", [
    (dict(x=x4(), theta=np.zeros((2, 3, 3), np.float32)), r"theta must have shape \[N, 2, 3\] for 2-D sampling, "
                                                          r"got \[2,3,3\]"),
    (dict(x=x4(n=2), theta=theta2(n=3)), "theta has batch 3, X has 2"),
    (dict(x=x4(n=2), theta=theta2(n=1)), "theta has batch 1, X has 2"),  # no broadcast: the contract's N
])
@pytest.mark.parametrize("threads", [1, 2])
def test_input_errors_fail_the_run(core, feeds, message, threads):
    model = compiled(fused_grid_sample_model(output_size=[5, 6]), core, threads=threads)
    with pytest.raises(RuntimeError, match="custom.ops::FusedGridSample node 'fgs': " + message):
        infer(model, feeds)
    if threads > 1:  # a synchronous infer() reports it too
        with pytest.raises(RuntimeError, match="custom.ops::FusedGridSample node 'fgs': " + message):
            model(feeds)
    assert infer(model, dict(x=x4(), theta=theta2())).shape == (2, 3, 5, 6)  # the model still runs


@pytest.mark.parametrize("size,message", [
    ([3, 3, 5, 6], r"size \[3,3,5,6\] has batch 3, the inputs have 2"),
    ([2, 4, 5, 6], r"size \[2,4,5,6\] has 4 channels, X has 3"),
    ([2, 3, -5, 6], r"size \[2,3,-5,6\] has a negative dimension"),
])
def test_bad_size_values_fail_the_run(core, size, message):
    with pytest.raises(RuntimeError, match="fgs': " + message):
        run(fused_grid_sample_model(size_input=True), core, x=x4(), theta=theta2(), size=np.array(size, np.int64))


def test_static_shapes_are_checked_when_read(core):
    """With the shapes in the file, a wrong theta or batch is an error of read_model."""
    from onnx import TensorProto, helper

    for theta_shape, message in (([2, 3, 3], r"theta must have shape \[N, 2, 3\]"), ([1, 2, 3], "theta has batch 1")):
        model = fused_grid_sample_model(output_size=[5, 6])
        for vi, dims in zip(model.graph.input, ([2, 3, 8, 7], theta_shape)):
            vi.CopyFrom(helper.make_tensor_value_info(vi.name, TensorProto.FLOAT, dims))
        with pytest.raises(RuntimeError, match="custom.ops::FusedGridSample node 'fgs': " + message):
            core.read_model(model.SerializeToString(), b"")


def test_output_size_must_match_the_input_rank(core):
    x = np.zeros((1, 1, 3, 4, 5), np.float32)
    theta = np.tile(np.eye(3, 4, dtype=np.float32), (1, 1, 1))
    with pytest.raises(RuntimeError, match=r"output_size has 2 values but the input is 3-D \(it needs 3\)"):
        run(fused_grid_sample_model(rank=5, output_size=[4, 4]), core, x=x, theta=theta)


def test_x_of_the_wrong_rank(core):
    with pytest.raises(RuntimeError, match=r"fgs': X must be 4-D \[N, C, H, W\] or 5-D"):
        core.read_model(ranked(fused_grid_sample_model(output_size=[4, 4]), x=3).SerializeToString(), b"")


def test_errors_name_an_unnamed_node_by_its_output(core):
    model = fused_grid_sample_model(mode="bogus", output_size=[4, 4])
    model.graph.node[0].name = ""
    with pytest.raises(RuntimeError, match="custom.ops::FusedGridSample node '[^']*': unknown mode"):
        read(core, model)
    assert F32  # the float32 config the other tests compile with
