"""Every shipped sample that surgeon fuses, fused and run in a plain onnxruntime session with the
op library, against the original model in onnxruntime (or, where onnxruntime cannot run the
original, the torch module it was exported from) at the contract's tolerance."""

import os

import pytest

import surgeon
from samples.catalog import BY_FILE, make_inputs

from ..shipped_samples import FUSED, MANIFEST, MODELS, all_graphs, assert_outputs_within, original_outputs, output_bounds
from .conftest import new_session



@pytest.mark.parametrize("name", FUSED)
def test_fused_sample_runs_in_plain_onnxruntime(name, library):
    entry = MANIFEST[name]
    model = surgeon.fuse(os.path.join(MODELS, name)).model
    custom = [n for g in all_graphs(model.graph) for n in g.node if n.domain == "custom.ops"]
    assert custom, "nothing was fused"
    sess = new_session(model)
    wanted = {i.name for i in sess.get_inputs()}
    for shapes in filter(None, [entry["inputs"], entry.get("alt_inputs")]):
        feeds = make_inputs(BY_FILE[name], shapes, seed=0)
        got = sess.run(None, {k: v for k, v in feeds.items() if k in wanted})
        want = original_outputs(name, feeds)
        assert_outputs_within(got, want, output_bounds(name, feeds), f"{name} {shapes}")
