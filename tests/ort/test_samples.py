"""Every shipped sample that surgeon fuses, fused and run in a plain onnxruntime session with the
op library, against the original model in onnxruntime (or, where onnxruntime cannot run the
original, the torch module it was exported from) at the contract's tolerance."""

import os

import numpy as np
import pytest

import surgeon
from samples.catalog import BY_FILE, make_inputs

from ..shipped_samples import FUSED, MANIFEST, MODELS, all_graphs, original_outputs
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
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            tol = entry.get("tolerance") or 1e-5  # looser only where the original rounds (float16 grids)
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=f"{name} {shapes}")
