"""Every sample model: what is written for it, and that the numbers stay the same.

Numbers: the original in onnxruntime (or, where onnxruntime cannot run it, the torch module it
was exported from) against the rewritten model with the custom nodes run by torch, on the
manifest's inputs and on a third set whose transform matrices flip and rotate (``signed_transforms``).
"""

import os

import numpy as np
import onnx
import pytest

import surgeon

from samples.catalog import BY_FILE, make_inputs

from ..shipped_samples import (FUSED, MANIFEST, assert_outputs_within, fused_bounds, original_outputs, output_bounds,
                               signed_transforms)
from .fusing import MODELS, fuse_sample
from .rewritten_graphs import all_graphs, assert_custom_shapes, custom_nodes, declared, fused_settings, op_counts
from .runner import expand_custom, ort_run, run_split

UNTOUCHED = sorted(f for f, e in MANIFEST.items() if e["expected"] == "untouched")
ORIGINAL_OPS = {"GridSample", "com.microsoft::GridSample", "AffineGrid", "org.pytorch.aten::ATen"}


def feed_sets(name: str) -> list[dict]:
    """The manifest's shape sets, then the first again with signed transform matrices."""
    entry, sample = MANIFEST[name], BY_FILE[name]
    sets = [make_inputs(sample, shapes, seed=i) for i, shapes in enumerate(filter(None, [entry["inputs"],
                                                                                        entry.get("alt_inputs")]))]
    return sets + [signed_transforms(sets[0])]


def rewritten_outputs(model, feeds: dict) -> list[np.ndarray]:
    in_body = any(g is not model.graph and any(n.domain == "custom.ops" for n in g.node)
                  for g in all_graphs(model.graph))
    return ort_run(expand_custom(model), feeds) if in_body else run_split(model, feeds)


@pytest.mark.parametrize("name", FUSED)
def test_fused_ops(name):
    entry = MANIFEST[name]
    result = fuse_sample(name)
    assert len(result.report.rewrites) == entry["chains"], result.report.summary()
    assert not result.report.refusals, result.report.summary()
    counts = op_counts(result.model)
    if name == "multi_chain.onnx":
        # Chain 3's grid is also a graph output: AffineGrid for it, its sampler kept.
        assert counts["custom.ops::FusedGridSample"] == 2 and counts["custom.ops::AffineGrid"] == 1
        assert counts["GridSample"] == 1
        assert any("also read by graph output 'grid'" in w for r in result.report.rewrites for w in r.warnings)
        settings = [tuple(s) for s in entry["chain_settings"][:2]]
    else:
        assert counts["custom.ops::FusedGridSample"] == entry["chains"]
        assert not ORIGINAL_OPS & set(counts), counts
        settings = [(entry["align_corners"], entry["mode"], entry["padding_mode"])] * entry["chains"]
    assert sorted(fused_settings(result.model)) == sorted(settings)
    assert {"custom.ops": 1}.items() <= {o.domain: o.version for o in result.model.opset_import}.items()
    onnx.checker.check_model(result.model)
    assert_custom_shapes(result.model)


@pytest.mark.parametrize("name", FUSED)
def test_fused_numbers(name):
    model = fuse_sample(name).model
    for feeds in feed_sets(name):
        assert_outputs_within(rewritten_outputs(model, feeds), original_outputs(name, feeds), output_bounds(name, feeds),
                              f"{name} {[v.shape for v in feeds.values()]}")


@pytest.mark.parametrize("name", UNTOUCHED)
def test_negatives_untouched(name):
    result = fuse_sample(name)
    original = onnx.load(os.path.join(MODELS, name))
    assert not result.report.rewrites
    assert result.model.graph.SerializeToString() == original.graph.SerializeToString()
    assert list(result.model.opset_import) == list(original.opset_import)
    reasons = " ".join(r.reason for r in result.report.refusals)
    assert MANIFEST[name]["refusal"] in reasons, reasons


def test_a_grid_nan_at_size_one_fuses_with_dynamic_dims_and_says_so():
    # Its grid is NaN at H=1 or W=1 (0/0 in TorchScript's linspace): fused with H, W dynamic, a
    # warning naming each dim; and with --input-shape fixing them, without the warnings.
    name = "lib_elementwise_ts_opset17.onnx"
    result = fuse_sample(name)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1
    assert [w.split(" (")[0] for w in result.report.rewrites[0].warnings] == ["with H=1", "with W=1"]
    fixed = fuse_sample(name, input_shapes={"x": [2, 3, 16, 12]})
    assert op_counts(fixed.model) == {"custom.ops::FusedGridSample": 1} and not fixed.report.rewrites[0].warnings
    for model in (result.model, fixed.model):
        feeds = make_inputs(BY_FILE[name], MANIFEST[name]["inputs"])
        assert_outputs_within(rewritten_outputs(model, feeds), original_outputs(name, feeds),
                              fused_bounds(model, feeds), name)
    # the rewrite says where the original is undefined; validate's default draws go around it
    undefined = {e.value for n in result.model.graph.node for e in n.metadata_props if e.key == "surgeon.undefined_at"}
    assert undefined == {"x[2]=1,x[3]=1"}
    report = surgeon.validate(os.path.join(MODELS, name), result.model, quiet=True)
    assert report.passed, report.summary()
    assert [i["shape"] for i in report.inputs if i["name"] == "x"] == [[1, 3, 2, 2]]
    assert sum("set to 2: at 1 the original is undefined there" in n for n in report.notes) == 2


def test_seed_output_dims_repaired():
    # Exported as y: [N, GridSampley_dim_1, ...]; after the rewrite the dims mean something.
    model = fuse_sample("seed_custom_affinegrid_opset16.onnx").model
    assert declared(model, "y")[1] == ["N", 3, 16, 12]


def test_homogeneous_theta_is_sliced():
    model = fuse_sample("lib_homogeneous_ts_opset17.onnx").model
    (node,) = custom_nodes(model, "FusedGridSample")
    slices = [n for n in model.graph.node if n.op_type == "Slice"]
    assert len(slices) == 1 and slices[0].input[0] == "M" and node.input[1] == slices[0].output[0]


@pytest.mark.parametrize("name", FUSED)
def test_target_affine_grid(name):
    result = fuse_sample(name, target="affine-grid")
    entry = MANIFEST[name]
    counts = op_counts(result.model)
    assert counts["custom.ops::AffineGrid"] == entry["chains"] and not counts["custom.ops::FusedGridSample"]
    assert counts["GridSample"] + counts["com.microsoft::GridSample"] == entry["chains"]
    assert not {"AffineGrid", "org.pytorch.aten::ATen"} & set(counts)
    onnx.checker.check_model(result.model)
    assert_custom_shapes(result.model)
    for feeds in feed_sets(name):  # the same warps as the fused node's, computed in two ops
        assert_outputs_within(rewritten_outputs(result.model, feeds), original_outputs(name, feeds),
                              output_bounds(name, feeds), name)


@pytest.mark.parametrize("name", [n for n in FUSED if MANIFEST[n].get("tolerance")])
def test_a_rewrite_of_a_half_precision_grid_declares_its_tolerance(name):
    import surgeon

    path = os.path.join(MODELS, name)
    result = surgeon.fuse(path)
    [node] = [n for n in result.model.graph.node if n.domain == "custom.ops"]
    declared_atol = {e.key: e.value for e in node.metadata_props}["surgeon.atol"]
    assert float(declared_atol) >= MANIFEST[name]["tolerance"]
    report = surgeon.validate(path, result.model, make_inputs(BY_FILE[name]))
    assert report.passed and report.outputs[0].atol == float(declared_atol), report.summary()
