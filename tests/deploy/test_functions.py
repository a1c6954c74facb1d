"""``fuse(functions=True)`` / ``surgeon fuse --functions``: fused samples carrying model-local
function bodies, run with no op library in onnxruntime and in onnx.reference against the
original models; every mode and the traps FACTS.md measured; surgeon's own runtime."""

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import helper

import surgeon
from surgeon.cli import cli

from ..builders import custom_op_feeds, custom_op_model
from ..error_bounds import unit_roundoff
from .fused_samples import (DYNAMIC_HW, FUSED_SAMPLES, MANIFEST, MODELS, assert_close, contract_bound, custom_nodes,
                            feed_sets, feeds_for, fused, opset_of, original_outputs, ort_run,
                            reference_knows_opset16_modes, reference_run, output_bounds, torch_custom)

# onnx.reference's AffineGrid computes 2/(n-1) for a size-1 dim before it needs it.
pytestmark = pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")

ATTRIBUTES = {"FusedGridSample": {"align_corners", "mode", "padding_mode"}, "AffineGrid": {"align_corners"}}


def expected_error(name: str) -> str | None:
    opset, dims = MANIFEST[name]["opset"], MANIFEST[name]["dims"]
    if opset < 16:
        return "needs opset 16 or higher"
    if dims == 3 and opset < 20:
        return "3-D sampling needs opset 20"
    return None


def reference_outputs(model, feeds):
    if opset_of(model) >= 20:
        return reference_run(model, feeds)
    with reference_knows_opset16_modes():
        return reference_run(model, feeds)


def check_functions(model, plain) -> None:
    """Full check; one function per custom op; the custom nodes as they were, every attribute
    written on them."""
    onnx.checker.check_model(model, full_check=True)
    nodes = custom_nodes(model)
    assert [(n.op_type, list(n.input)) for n in nodes] == [(n.op_type, list(n.input)) for n in custom_nodes(plain)]
    assert sorted((f.domain, f.name) for f in model.functions) == sorted({(n.domain, n.op_type) for n in nodes})
    for node in nodes:
        assert ATTRIBUTES[node.op_type] <= {a.name for a in node.attribute}, node.name
    for body in model.functions:
        assert [(o.domain, o.version) for o in body.opset_import] == [("", opset_of(model))]


@pytest.mark.parametrize("fixed", [True, False], ids=["fixed", "dynamic"])
@pytest.mark.parametrize("name", FUSED_SAMPLES)
def test_sample_functions_equal_original(name, fixed):
    error = expected_error(name)
    if error:
        with pytest.raises(surgeon.SurgeonError, match=error) as info:
            fused(name, fixed=fixed, functions=True)
        needed = 20 if MANIFEST[name]["dims"] == 3 else 16
        assert "\n" not in str(info.value) and "no function body at opset" in str(info.value)
        assert str(info.value).endswith(f"--raise-opset (raise_opset=True) converts the model to opset {needed} first")
        shapes = {k: v for k, v in MANIFEST[name]["inputs"].items() if v} if fixed else None
        result = surgeon.fuse(f"{MODELS}/{name}", input_shapes=shapes, functions=True, raise_opset=True)
        model = result.model
        assert opset_of(model) == needed
        assert f"functions: raised the model from opset {MANIFEST[name]['opset']} to {needed}" in \
            " ".join(result.report.notes)
    else:
        model = fused(name, fixed=fixed, functions=True)
    check_functions(model, fused(name, fixed=fixed))
    for feeds in feed_sets(name, fixed):
        want = original_outputs(name, feeds)
        assert_close(ort_run(model, feeds), want, f"{name} onnxruntime", output_bounds(name, feeds))
        assert_close(reference_outputs(model, feeds), want, f"{name} onnx.reference", output_bounds(name, feeds))


def test_reference_evaluator_needs_opset20_names_below_20():
    # Not ours to fix: onnx.reference rejects opset-16 GridSample names, in any model.
    model = fused("lib_matmul_ts_opset17.onnx", functions=True)
    with pytest.raises(Exception, match="only supports nearest, linear, and cubic"):
        reference_run(model, feeds_for("lib_matmul_ts_opset17.onnx"))


@pytest.mark.parametrize("name", DYNAMIC_HW)
def test_dynamic_size_input(name):
    plain = fused(name, fixed=False)
    model = surgeon.fuse(f"{MODELS}/{name}", functions=True).model
    check_functions(model, plain)
    (node,) = custom_nodes(model)
    assert len(node.input) == 3 and not [a for a in node.attribute if a.name == "output_size"]
    for shapes in (MANIFEST[name]["inputs"], MANIFEST[name]["alt_inputs"], {"x": [3, 3, 20, 9], "theta": [3, 2, 3]}):
        feeds = feeds_for(name, shapes)
        want = original_outputs(name, feeds)
        bounds = output_bounds(name, feeds)
        assert_close(ort_run(model, feeds), want, f"{name} {shapes} onnxruntime", bounds)
        assert_close(reference_outputs(model, feeds), want, f"{name} {shapes} onnx.reference", bounds)


def with_functions(model):
    """Functions for the custom nodes a model already holds (the patterns match nothing here)."""
    result = surgeon.fuse(model, functions=True)
    assert not result.report.rewrites
    return result.model


# Below opset 20 the body passes the mode through: the contract's writers use torch's names,
# which are opset 16's (an opset-20 spelling there is a documented limitation).
MODES = [(16, m) for m in ("bilinear", "nearest", "bicubic")] + \
        [(20, m) for m in ("bilinear", "nearest", "bicubic", "linear", "cubic")]


@pytest.mark.parametrize("opset,mode", MODES)
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_every_mode_and_padding(opset, mode, padding, align):
    model = with_functions(custom_op_model("FusedGridSample", x_shape=[2, 3, 6, 5], theta_shape=[2, 2, 3],
                                        output_size=[4, 7], align=align, mode=mode, padding=padding, opset=opset))
    onnx.checker.check_model(model, full_check=True)
    feeds = custom_op_feeds("FusedGridSample", x_shape=[2, 3, 6, 5], theta_shape=[2, 2, 3], size=None, dynamic=False)
    torch_mode = {"linear": "bilinear", "cubic": "bicubic"}.get(mode, mode)
    want = [torch_custom("FusedGridSample", feeds, [2, 3, 4, 7], align, torch_mode, padding)]
    bounds = [contract_bound("FusedGridSample", feeds, [2, 3, 4, 7], align, torch_mode, padding)]
    assert_close(ort_run(model, feeds), want, "onnxruntime", bounds)
    if torch_mode == "bicubic" and padding == "border":
        return  # onnx.reference clamps the coordinate, torch each tap (FACTS.md): not comparable
    assert_close(reference_outputs(model, feeds), want, "onnx.reference", bounds)


CASES = [([5, 7], 0), ([5, 7], 1), ([1, 7], 1), ([5, 1], 1), ([1, 1], 1)]


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("spatial,align", CASES)
@pytest.mark.parametrize("opset", [16, 18, 20])
def test_size_one_dims_follow_torch(opset, spatial, align, dynamic):
    for op in ("FusedGridSample", "AffineGrid"):
        size = [2, 3, *spatial]
        model = with_functions(custom_op_model(op, x_shape=[2, 3, 6, 5], theta_shape=[2, 2, 3], output_size=spatial,
                                            dynamic=dynamic, align=align, opset=opset))
        onnx.checker.check_model(model, full_check=True)
        feeds = custom_op_feeds(op, x_shape=[2, 3, 6, 5], theta_shape=[2, 2, 3], size=size, dynamic=dynamic)
        want = [torch_custom(op, feeds, size, align)]
        bounds = [contract_bound(op, feeds, size, align)]
        assert_close(ort_run(model, feeds), want, f"{op} {size} {align} onnxruntime", bounds)
        assert_close(reference_outputs(model, feeds), want, f"{op} {size} {align} onnx.reference", bounds)


@pytest.mark.parametrize("dynamic", [False, True])
def test_3d_at_opset_20(dynamic):
    size = [2, 2, 1, 4, 3]
    for op in ("FusedGridSample", "AffineGrid"):
        model = with_functions(custom_op_model(op, x_shape=[2, 2, 4, 5, 3], theta_shape=[2, 3, 4], output_size=size[2:],
                                            dynamic=dynamic, align=1, opset=20))
        feeds = custom_op_feeds(op, x_shape=[2, 2, 4, 5, 3], theta_shape=[2, 3, 4], size=size, dynamic=dynamic)
        want = [torch_custom(op, feeds, size, 1)]
        bounds = [contract_bound(op, feeds, size, 1)]
        assert_close(ort_run(model, feeds), want, f"{op} onnxruntime", bounds)
        assert_close(reference_outputs(model, feeds), want, f"{op} onnx.reference", bounds)


def test_defaults_are_written_on_the_node():
    # The reference evaluator and the inliners ignore a function's declared defaults.
    model = custom_op_model("FusedGridSample", x_shape=[1, 2, 5, 4], theta_shape=[1, 2, 3], output_size=[3, 3],
                         attrs={"output_size": [3, 3]})
    model = with_functions(model)
    (node,) = custom_nodes(model)
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    assert attrs == {"output_size": [3, 3], "align_corners": 0, "mode": b"bilinear", "padding_mode": b"zeros"}
    feeds = custom_op_feeds("FusedGridSample", x_shape=[1, 2, 5, 4], theta_shape=[1, 2, 3], size=None, dynamic=False)
    want = [torch_custom("FusedGridSample", feeds, [1, 2, 3, 3], 0)]
    bounds = [contract_bound("FusedGridSample", feeds, [1, 2, 3, 3], 0)]
    assert_close(ort_run(model, feeds), want, "onnxruntime", bounds)
    assert_close(reference_outputs(model, feeds), want, "onnx.reference", bounds)


def test_two_arities_of_one_op_are_an_error():
    model = custom_op_model("FusedGridSample", x_shape=[1, 1, 4, 4], theta_shape=[1, 2, 3], output_size=[2, 2])
    dynamic = helper.make_node("FusedGridSample", ["x", "theta", "size"], ["y2"], name="dynamic", domain="custom.ops",
                               align_corners=0, mode="bilinear", padding_mode="zeros")
    model.graph.node.append(dynamic)
    model.graph.input.append(helper.make_tensor_value_info("size", onnx.TensorProto.INT64, [4]))
    model.graph.output.append(helper.make_tensor_value_info("y2", onnx.TensorProto.FLOAT, None))
    with pytest.raises(surgeon.SurgeonError, match="need different bodies"):
        surgeon.fuse(model, functions=True)


def test_functions_again_replace_the_old_ones():
    model = fused("multi_chain.onnx", functions=True)
    again = with_functions(model)
    assert len(again.functions) == 2 == len({(f.domain, f.name) for f in again.functions})
    onnx.checker.check_model(again, full_check=True)


def test_surgeon_runs_and_validates_files_with_functions():
    name = "stn_ts_opset20_2d.onnx"
    model = fused(name, functions=True)
    feeds = feeds_for(name)
    got = surgeon.run(model, feeds)
    assert_close([got[o.name] for o in model.graph.output], original_outputs(name, feeds), "surgeon.run",
                 output_bounds(name, feeds))
    report = surgeon.validate(f"{MODELS}/{name}", model, feeds)
    assert report.passed, report.summary()


def test_command(tmp_path):
    out = tmp_path / "fused.onnx"
    done = CliRunner().invoke(cli, ["fuse", f"{MODELS}/affine_dynamo_opset20_2d_ac1.onnx", str(out), "--functions",
                                    "--validate"])
    assert done.exit_code == 0, done.output
    assert "functions: custom.ops::FusedGridSample (opset 20)" in done.output
    model = onnx.load(out)
    assert len(model.functions) == 1
    feeds = feeds_for("affine_dynamo_opset20_2d_ac1.onnx")
    name = "affine_dynamo_opset20_2d_ac1.onnx"
    assert_close(ort_run(model, feeds), original_outputs(name, feeds), "cli", output_bounds(name, feeds))
    failed = CliRunner().invoke(cli, ["fuse", f"{MODELS}/affine_dynamo_opset18_3d.onnx", str(tmp_path / "no.onnx"),
                                      "--functions"])
    assert failed.exit_code == 1 and "3-D sampling needs opset 20" in failed.output
    assert "--raise-opset (raise_opset=True) converts the model to opset 20 first" in failed.output
    assert not (tmp_path / "no.onnx").exists()
    raised = CliRunner().invoke(cli, ["fuse", f"{MODELS}/affine_dynamo_opset18_3d.onnx", str(out), "--functions",
                                      "--raise-opset", "--validate"])
    assert raised.exit_code == 0, raised.output
    assert "note: functions: raised the model from opset 18 to 20" in raised.output
    feeds = feeds_for("affine_dynamo_opset18_3d.onnx")
    name = "affine_dynamo_opset18_3d.onnx"
    assert_close(ort_run(onnx.load(out), feeds), original_outputs(name, feeds), "raised", output_bounds(name, feeds))
    alone = CliRunner().invoke(cli, ["fuse", f"{MODELS}/affine_dynamo_opset18_3d.onnx", str(tmp_path / "no.onnx"),
                                     "--raise-opset"])
    assert alone.exit_code == 1 and "give it with --functions" in alone.output


def half_bound(op, feeds, size, want):
    """The float32 computation's bound on float16 inputs, plus the output's one float16 rounding."""
    return [contract_bound(op, {k: v.astype(np.float32) for k, v in feeds.items()}, size, 0)
            + unit_roundoff(np.float16) * np.abs(want)]


@pytest.mark.parametrize("op", ["FusedGridSample", "AffineGrid"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("opset,k", [(16, 2), (18, 2), (20, 2), (20, 3)])
@pytest.mark.parametrize("batch", [1, 2])
def test_float16_bodies_run_in_onnxruntime(op, dynamic, opset, k, batch):
    """onnxruntime has no float16 AffineGrid: its fallback (ONNX's own body) failed on float16
    models at opset 20 ("axis 1 is not in valid range" with one batch item, "Input to 'Range' op
    should be scalars"). The body computes in float32 and casts back."""
    x_shape, theta_shape = ([batch, 3, 9, 7], [batch, 2, 3]) if k == 2 else ([batch, 2, 5, 4, 6], [batch, 3, 4])
    spatial = [6, 11] if k == 2 else [3, 4, 7]
    size = [batch, x_shape[1], *spatial]
    model = with_functions(custom_op_model(op, x_shape=x_shape, theta_shape=theta_shape, output_size=spatial,
                                        dynamic=dynamic, opset=opset, elem=onnx.TensorProto.FLOAT16, mode="bilinear"))
    onnx.checker.check_model(model, full_check=True)
    feeds = custom_op_feeds(op, x_shape=x_shape, theta_shape=theta_shape, size=size, dynamic=dynamic, dtype=np.float16)
    (got,) = ort_run(model, feeds)
    assert got.dtype == np.float16
    want = torch_custom(op, feeds, size, 0)
    assert_close([got.astype(np.float32)], [want], f"{op} float16", half_bound(op, feeds, size, want))


@pytest.mark.parametrize("opset", [16, 18, 20])
def test_float16_unfused_runs_in_onnxruntime(opset):
    """unfuse writes the same float32 computation: a float16 AffineGrid fails in onnxruntime."""
    for op in ("FusedGridSample", "AffineGrid"):
        model = custom_op_model(op, x_shape=[1, 3, 9, 7], theta_shape=[1, 2, 3], output_size=[6, 11], opset=opset,
                             elem=onnx.TensorProto.FLOAT16)
        feeds = custom_op_feeds(op, x_shape=[1, 3, 9, 7], theta_shape=[1, 2, 3], size=None, dynamic=False,
                             dtype=np.float16)
        (got,) = ort_run(surgeon.unfuse(model).model, feeds)
        assert got.dtype == np.float16
        want = torch_custom(op, feeds, [1, 3, 6, 11], 0)
        assert_close([got.astype(np.float32)], [want], op, half_bound(op, feeds, [1, 3, 6, 11], want))
