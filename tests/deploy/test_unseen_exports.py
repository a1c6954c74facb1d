"""Real models exported by torch at opsets 18 and 20 (dynamo and TorchScript): fused, then
unfused to every opset from 16, or given function bodies (float16 too), and run in plain
onnxruntime against the original, at two batch sizes. They hold what the version converter cannot step down beside the fused nodes (Pad,
Split, ConstantOfShape, standard GridSamples of flow fields, 4-D and 5-D, ReduceMean with
noop_with_empty_axes)."""

import onnx
import pytest

import surgeon

from .fused_samples import assert_close, custom_nodes, fused_bounds, opset_of, ort_run
from .unseen_models import MODELS, export, inputs

EXPORTS = [(name, opset, dynamo) for name in MODELS for opset, dynamo in ((18, True), (20, True), (20, False))]


def label(case):
    name, opset, dynamo = case
    return f"{name}-{'dynamo' if dynamo else 'ts'}{opset}"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exports")
    paths = {}
    for case in EXPORTS:
        paths[case] = str(folder / f"{label(case)}.onnx")
        export(case[0], paths[case], case[1], case[2])
    return paths


def feed_sets(name):
    return [{k: v.numpy() for k, v in inputs(name, seed, batch).items()} for seed, batch in ((0, 2), (1, 3))]


@pytest.mark.parametrize("case", EXPORTS, ids=label)
def test_unfused_at_every_opset_equals_the_export(case, exported):
    original = onnx.load(exported[case])
    fused = surgeon.fuse(exported[case]).model
    assert len(custom_nodes(fused)) == 1, "the affine chain fuses; the flow warp stays a standard GridSample"
    assert "GridSample" in {n.op_type for n in fused.graph.node}
    for opset in (16, 17, 18, 19, 20):
        result = surgeon.unfuse(fused, opset=opset)
        assert opset_of(result.model) == opset and not custom_nodes(result.model)
        onnx.checker.check_model(result.model)
        for feeds in feed_sets(case[0]):
            assert_close(ort_run(result.model, feeds), ort_run(original, feeds), f"{label(case)} at {opset}",
                         fused_bounds(fused, feeds))


@pytest.mark.parametrize("case", EXPORTS, ids=label)
def test_function_bodies_run_in_onnxruntime(case, exported):
    result = surgeon.fuse(exported[case], functions=True, raise_opset=True)
    assert len(result.model.functions) == 1
    if case[0] == "volume" and case[1] < 20:
        assert opset_of(result.model) == 20  # a volume's body needs GridSample-20
    original = onnx.load(exported[case])
    for feeds in feed_sets(case[0]):
        assert_close(ort_run(result.model, feeds), ort_run(original, feeds), label(case),
                     fused_bounds(result.model, feeds))


def test_float16_export_with_function_bodies(tmp_path):
    path = str(tmp_path / "volume_half.onnx")
    export("volume", path, 18, dynamo=True, half=True)
    result = surgeon.fuse(path, functions=True, raise_opset=True)
    assert len(custom_nodes(result.model)) == 1 and opset_of(result.model) == 20
    original = onnx.load(path)
    for feeds in feed_sets("volume"):
        feeds = {k: v.astype("float16") for k, v in feeds.items()}
        got, want = ort_run(result.model, feeds), ort_run(original, feeds)
        assert got[0].dtype.name == "float16"
        # the original computes its grid in float16: what it loses so, declared (as the samples do)
        assert_close([g.astype("float32") for g in got], [w.astype("float32") for w in want], "float16", [5e-3])
