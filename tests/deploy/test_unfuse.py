"""``surgeon unfuse``: fused samples written back as standard ONNX at opsets 16, 18 and 20, run
in plain onnxruntime against the original models; the errors for what an opset cannot
express; fuse -> unfuse -> fuse; dynamic sizes; torch's size-1 convention; the command."""

import os

import onnx
import pytest
from click.testing import CliRunner
from onnx import helper

import surgeon
from surgeon.cli import cli

from ..builders import custom_op_feeds, custom_op_model
from .fused_samples import (DYNAMIC_HW, FUSED_SAMPLES, MANIFEST, MODELS, assert_close, canonical, contract_bound,
                            custom_nodes, feed_sets, feeds_for, fused, opset_of, original_outputs, ort_run,
                            output_bounds, torch_custom)

OPSETS = (16, 18, 20)


@pytest.mark.parametrize("fixed", [True, False], ids=["fixed", "dynamic"])
def test_every_sample_is_fused(fixed):
    """The deploy tests below need each sample fused (the matcher's job, checked here once)."""
    missing = [name for name in FUSED_SAMPLES
               if len(custom_nodes(fused(name, fixed=fixed))) != MANIFEST[name]["chains"]]
    shapes = "the manifest's" if fixed else "None"
    assert not missing, f"fuse(input_shapes={shapes}) fused fewer chains than the manifest says: {missing}"


def expected_error(model, dims: int, opset: int) -> str | None:
    """What unfuse must refuse: only opsets before GridSample. Every fused sample holds only ops
    that exist at 16, so it converts to every opset from 16 (standard ops onnx has no adapter
    for, GridSample 20 -> 19 and ConstantOfShape 20 -> 19 among them, are lowered by surgeon;
    a volume below 20 is sampled with gathers)."""
    if opset < 16:
        return "needs opset 16 or higher"
    return None


def check_standard(model, opset: int) -> None:
    onnx.checker.check_model(model, full_check=True)
    assert not custom_nodes(model)
    assert "custom.ops" not in {o.domain for o in model.opset_import}
    assert not [f for f in model.functions if f.domain == "custom.ops"]
    assert opset_of(model) == opset


@pytest.mark.parametrize("fixed", [True, False], ids=["fixed", "dynamic"])
@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", FUSED_SAMPLES)
def test_sample_unfused_equals_original(name, opset, fixed):
    model = fused(name, fixed=fixed)
    error = expected_error(model, MANIFEST[name]["dims"], opset)
    if error:
        with pytest.raises(surgeon.SurgeonError, match=error) as info:
            surgeon.unfuse(model, opset=opset)
        assert "\n" not in str(info.value)
        return
    result = surgeon.unfuse(model, opset=opset)
    check_standard(result.model, opset)
    assert len(result.report.rewrites) == len(custom_nodes(model))
    for feeds in feed_sets(name, fixed):
        assert_close(ort_run(result.model, feeds), original_outputs(name, feeds), f"{name} opset {opset}",
                     output_bounds(name, feeds))


@pytest.mark.parametrize("name", FUSED_SAMPLES)
def test_unfuse_keeps_the_models_opset(name):
    model = fused(name)
    own = opset_of(model)
    error = expected_error(model, MANIFEST[name]["dims"], own)
    if error:
        with pytest.raises(surgeon.SurgeonError, match=error):
            surgeon.unfuse(model)
        return
    result = surgeon.unfuse(model)
    check_standard(result.model, own)
    assert not [n for n in result.report.notes if "converted" in n]


def size_from_input_values(model) -> bool:
    """Whether a custom node's size input is computed from a model input's values (not only
    from shapes): no standard spelling below opset 20 lets fuse read such a grid back."""
    producer = {o: n for n in model.graph.node for o in n.output}
    inputs = {i.name for i in model.graph.input}
    stack = [n.input[-1] for n in custom_nodes(model) if len(n.input) == (3 if n.op_type == "FusedGridSample" else 2)]
    while stack:
        value = stack.pop()
        if value in inputs:
            return True
        node = producer.get(value)
        if node is not None and node.op_type != "Shape":
            stack.extend(node.input)
    return False


@pytest.mark.parametrize("name", FUSED_SAMPLES)
def test_fuse_unfuse_fuse_gives_the_same_graph(name):
    model = fused(name)
    for opset in (None, 20) if custom_nodes(model) else (None,):  # converting standard ops changes them
        if expected_error(model, MANIFEST[name]["dims"], opset or opset_of(model)):
            continue
        if MANIFEST[name]["dims"] == 3 and (opset or opset_of(model)) < 20:
            continue  # sampled with gathers there, which no pattern reads back as a sampler (numbers: above)
        again = surgeon.fuse(surgeon.unfuse(model, opset=opset).model).model
        if not size_from_input_values(model):
            assert canonical(again.graph) == canonical(model.graph), (name, opset)
            continue
        # The size is a model input's value: at opset 20 fuse reads AffineGrid back but builds
        # its size tensor again; below 20 it cannot read the grid back (the matcher's). Same numbers.
        for feeds in feed_sets(name):
            assert_close(ort_run(surgeon.unfuse(again, opset=20).model, feeds), original_outputs(name, feeds), name,
                         output_bounds(name, feeds))


@pytest.mark.parametrize("name", DYNAMIC_HW)
@pytest.mark.parametrize("opset", OPSETS)
def test_dynamic_sizes_stay_dynamic(name, opset):
    model = fused(name, fixed=False)
    (node,) = custom_nodes(model)
    assert len(node.input) == 3  # the size is a run-time value
    result = surgeon.unfuse(model, opset=opset)
    check_standard(result.model, opset)
    for shapes in (MANIFEST[name]["inputs"], MANIFEST[name]["alt_inputs"], {"x": [3, 3, 20, 9], "theta": [3, 2, 3]}):
        feeds = feeds_for(name, shapes)
        got = ort_run(result.model, feeds)
        assert got[0].shape[2:] == tuple(shapes["x"][2:])
        assert_close(got, original_outputs(name, feeds), f"{name} {shapes}", output_bounds(name, feeds))


# -- hand-built nodes: every setting, and torch's size-1 convention ----------------------------

CASES = [  # (output size, align_corners): size-1 dims are where torch and ONNX part ways
    ([5, 7], 0), ([5, 7], 1), ([1, 7], 1), ([5, 1], 1), ([1, 1], 1), ([1, 7], 0),
]


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("spatial,align", CASES)
@pytest.mark.parametrize("opset", OPSETS)
def test_size_one_dims_follow_torch(opset, spatial, align, dynamic):
    for op in ("FusedGridSample", "AffineGrid"):
        size = [2, 3, *spatial]
        model = custom_op_model(op, x_shape=[2, 3, 6, 5], theta_shape=[2, 2, 3], output_size=spatial,
                             dynamic=dynamic, align=align, opset=opset)
        result = surgeon.unfuse(model)
        check_standard(result.model, opset)
        feeds = custom_op_feeds(op, x_shape=[2, 3, 6, 5], theta_shape=[2, 2, 3], size=size, dynamic=dynamic)
        assert_close(ort_run(result.model, feeds), [torch_custom(op, feeds, size, align)], f"{op} {size} {align}",
                     [contract_bound(op, feeds, size, align)])


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic", "linear", "cubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("opset", [16, 20])
def test_every_mode_and_padding(opset, mode, padding, align):
    model = custom_op_model("FusedGridSample", x_shape=[2, 3, 6, 5], theta_shape=[2, 2, 3], output_size=[4, 7],
                         align=align, mode=mode, padding=padding, opset=opset)
    result = surgeon.unfuse(model)
    check_standard(result.model, opset)
    modes = [a.s.decode() for n in result.model.graph.node for a in n.attribute if a.name == "mode"]
    assert modes == [{"linear": "bilinear", "cubic": "bicubic"}.get(mode, mode) if opset < 20
                     else {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)]
    feeds = custom_op_feeds("FusedGridSample", x_shape=[2, 3, 6, 5], theta_shape=[2, 2, 3], size=None, dynamic=False)
    torch_mode = {"linear": "bilinear", "cubic": "bicubic"}.get(mode, mode)
    want = torch_custom("FusedGridSample", feeds, [2, 3, 4, 7], align, torch_mode, padding)
    assert_close(ort_run(result.model, feeds), [want], f"{mode} {padding} {align}",
                 [contract_bound("FusedGridSample", feeds, [2, 3, 4, 7], align, torch_mode, padding)])


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("spatial,align", [([3, 4, 5], 0), ([3, 4, 5], 1), ([1, 4, 1], 1)])
def test_3d_at_opset_20(spatial, align, dynamic):
    size = [2, 2, *spatial]
    for op in ("FusedGridSample", "AffineGrid"):
        model = custom_op_model(op, x_shape=[2, 2, 4, 5, 3], theta_shape=[2, 3, 4], output_size=spatial,
                             dynamic=dynamic, align=align, opset=20)
        result = surgeon.unfuse(model)
        check_standard(result.model, 20)
        feeds = custom_op_feeds(op, x_shape=[2, 2, 4, 5, 3], theta_shape=[2, 3, 4], size=size, dynamic=dynamic)
        assert_close(ort_run(result.model, feeds), [torch_custom(op, feeds, size, align)], f"{op} {size}",
                     [contract_bound(op, feeds, size, align)])


@pytest.mark.parametrize("opset", [16, 18])
def test_3d_affine_grid_alone_is_expressible_before_20(opset):
    # Only the 5-D sampler needs opset 20: a 3-D grid is built from standard ops at any opset.
    size = [2, 1, 3, 1, 5]
    model = custom_op_model("AffineGrid", x_shape=None, theta_shape=[2, 3, 4], output_size=size[2:], align=1, opset=opset)
    result = surgeon.unfuse(model)
    check_standard(result.model, opset)
    feeds = custom_op_feeds("AffineGrid", x_shape=None, theta_shape=[2, 3, 4], size=size, dynamic=False)
    assert_close(ort_run(result.model, feeds), [torch_custom("AffineGrid", feeds, size, 1)], "3-D grid",
                     [contract_bound("AffineGrid", feeds, size, 1)])


@pytest.mark.parametrize("opset", [16, 19])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_3d_sampler_before_20_is_written_with_gathers(opset, dynamic, mode, padding, align):
    """GridSample is 4-D only before opset 20: a volume is sampled with gathers, torch's numbers."""
    shape, size = [2, 3, 4, 5, 6], [2, 3, 3, 7, 5]
    model = custom_op_model("FusedGridSample", x_shape=shape, theta_shape=[2, 3, 4], output_size=size[2:],
                         dynamic=dynamic, align=align, mode=mode, padding=padding, opset=opset)
    result = surgeon.unfuse(model)
    check_standard(result.model, opset)
    assert "GridSample" not in {n.op_type for n in result.model.graph.node}
    for seed in (0, 1):
        feeds = custom_op_feeds("FusedGridSample", x_shape=shape, theta_shape=[2, 3, 4], size=size, dynamic=dynamic,
                             seed=seed)
        feeds["theta"] *= 1.6  # well past the edges, where the padding decides
        want = torch_custom("FusedGridSample", feeds, size, align, mode, padding)
        assert_close(ort_run(result.model, feeds), [want], f"{mode} {padding} {align}",
                     [contract_bound("FusedGridSample", feeds, size, align, mode, padding)])


def test_contract_violations_are_errors():
    model = custom_op_model("FusedGridSample", x_shape=[1, 1, 4, 4], theta_shape=[1, 2, 3], output_size=[2, 2],
                         attrs={"mode": "lanczos", "output_size": [2, 2]})
    with pytest.raises(surgeon.SurgeonError, match="unknown mode 'lanczos'"):
        surgeon.unfuse(model)
    both = custom_op_model("FusedGridSample", x_shape=[1, 1, 4, 4], theta_shape=[1, 2, 3], dynamic=True,
                        attrs={"output_size": [2, 2]})
    with pytest.raises(surgeon.SurgeonError, match="exactly one of the size input and the output_size"):
        surgeon.unfuse(both)


def test_unknown_custom_nodes_stay_with_their_import():
    model = custom_op_model("FusedGridSample", x_shape=[1, 1, 4, 4], theta_shape=[1, 2, 3], output_size=[2, 2])
    other = helper.make_node("Mystery", ["y"], ["z"], name="mystery", domain="my.ops")
    model.graph.node.append(other)
    model.graph.output[0].name = "z"
    model.opset_import.append(helper.make_opsetid("my.ops", 1))
    result = surgeon.unfuse(model)
    assert result.left == ["mystery (my.ops::Mystery)"]
    assert [n.op_type for n in result.model.graph.node][-1] == "Mystery"
    domains = {o.domain for o in result.model.opset_import}
    assert "my.ops" in domains and "custom.ops" not in domains


def test_functions_of_unfused_ops_are_dropped():
    model = fused("stn_ts_opset20_2d.onnx", functions=True)
    assert model.functions
    result = surgeon.unfuse(model)
    check_standard(result.model, 20)
    assert not result.model.functions


def test_input_is_not_modified_and_written_atomically(tmp_path):
    model = fused("affine_ts_opset20_2d_static.onnx")
    before = model.SerializeToString()
    out = tmp_path / "std.onnx"
    surgeon.unfuse(model, out, opset=16)
    assert model.SerializeToString() == before
    check_standard(onnx.load(out), 16)


def test_command(tmp_path):
    src = tmp_path / "fused.onnx"
    onnx.save(fused("lib_matmul_ts_opset17.onnx"), src)
    out = tmp_path / "std.onnx"
    runner = CliRunner()
    done = runner.invoke(cli, ["unfuse", str(src), str(out), "--opset", "20", "--report", str(tmp_path / "r.json")])
    assert done.exit_code == 0, done.output
    assert "unfused 1 custom node(s) at opset 20" in done.output
    assert "converted the model from opset 17 to 20" in done.output
    check_standard(onnx.load(out), 20)
    assert os.path.exists(tmp_path / "r.json")
    native = tmp_path / "native.onnx"  # a standard AffineGrid (from opset 20): custom.ops::AffineGrid's form
    onnx.save(surgeon.fuse(os.path.join(MODELS, "neg_nonaffine_grid.onnx")).model, native)
    lowered = runner.invoke(cli, ["unfuse", str(native), str(tmp_path / "native16.onnx"), "--opset", "16"])
    assert lowered.exit_code == 0, lowered.output
    check_standard(onnx.load(tmp_path / "native16.onnx"), 16)
    later = tmp_path / "later.onnx"  # an op from opset 18 that no plugin writes
    node = helper.make_node("BitwiseAnd", ["a", "b"], ["c"], name="/And")
    ints = [helper.make_tensor_value_info(v, onnx.TensorProto.INT32, [3]) for v in "abc"]
    onnx.save(helper.make_model(helper.make_graph([node], "g", ints[:2], ints[2:]),
                                opset_imports=[helper.make_opsetid("", 18)]), later)
    failed = runner.invoke(cli, ["unfuse", str(later), str(tmp_path / "no.onnx"), "--opset", "16"])
    assert failed.exit_code == 1
    assert failed.output == "error: cannot write node /And (BitwiseAnd) at opset 16: BitwiseAnd exists from opset 18 on\n"
    assert not os.path.exists(tmp_path / "no.onnx")

