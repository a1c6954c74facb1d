"""Every shipped sample that surgeon fuses, fused and run in a plain onnxruntime session with the
op library, against the original model in onnxruntime (or, where onnxruntime cannot run the
original, the torch module it was exported from) at the contract's tolerance."""

import json
import os

import numpy as np
import onnx
import pytest

import surgeon
from samples import check
from samples.catalog import BY_FILE, make_inputs

from .conftest import new_session

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "samples",
                      "models")
MANIFEST = json.load(open(os.path.join(MODELS, "manifest.json")))
FUSE = sorted(f for f, e in MANIFEST.items() if e["expected"] == "fuse")


def original_outputs(name: str, feeds: dict) -> list[np.ndarray]:
    sample = BY_FILE[name]
    original = check.runnable(sample, onnx.load(os.path.join(MODELS, name)))
    if original is None:  # ATen fallback nodes: only a training build of onnxruntime has them
        return check.torch_outputs(sample, feeds)
    return check.ort_outputs(original, feeds)


@pytest.mark.parametrize("name", FUSE)
def test_fused_sample_runs_in_plain_onnxruntime(name, library):
    entry = MANIFEST[name]
    model = surgeon.fuse(os.path.join(MODELS, name)).model
    custom = [n for g in _graphs(model.graph) for n in g.node if n.domain == "custom.ops"]
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


def _graphs(graph):
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _graphs(attr.g)
