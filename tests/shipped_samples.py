"""The shipped sample models as the tests read them: their folder and manifest, plain onnxruntime
runs and walks over every graph of a model, the originals' outputs (onnxruntime, or the torch
module a sample came from where onnxruntime cannot run it), and inputs whose transform matrices
flip and rotate (``surgeon_ops.draws``, what ``validate`` draws)."""

from __future__ import annotations

import json
import os

import numpy as np
import onnx
import onnxruntime as ort

from samples import check
from samples.catalog import BY_FILE
from surgeon_ops.draws import draw_theta

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "samples", "models")
with open(os.path.join(MODELS, "manifest.json")) as _f:
    MANIFEST = json.load(_f)
FUSED = sorted(f for f, e in MANIFEST.items() if e["expected"] == "fuse")  # the samples surgeon rewrites
TRANSFORMS = ("theta", "theta2", "M")  # the samples' inputs that hold transform matrices


def ort_run(model, feeds: dict, outputs: list[str] | None = None) -> list[np.ndarray]:
    """A plain onnxruntime session (no op library, nothing from surgeon) on the feeds it takes."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    return session.run(outputs, {k: v for k, v in feeds.items() if k in names})


def all_graphs(graph):
    """A graph and every graph in it (If branches, Loop bodies), depth first."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from all_graphs(attr.g)


def all_nodes(graph):
    """The nodes of a graph and of every graph in it, each before the graphs it holds."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from all_nodes(attr.g)


def original_outputs(name: str, feeds: dict) -> list[np.ndarray]:
    """The original sample in onnxruntime; the torch module it came from where onnxruntime cannot
    run it (ATen fallback nodes need a training build)."""
    sample = BY_FILE[name]
    model = check.runnable(sample, onnx.load(os.path.join(MODELS, name)))
    if model is None:
        return check.torch_outputs(sample, feeds)
    return ort_run(model, feeds)


def signed_transforms(feeds: dict, seed: int = 20) -> dict:
    """``feeds`` with every transform matrix redrawn: flips, rotations past 90 degrees, shifts
    past the edge."""
    signed = dict(feeds)
    rng = np.random.default_rng(seed)
    for key in TRANSFORMS:
        if key in signed:
            signed[key] = draw_theta(signed[key].shape, np.float32, rng)
    return signed


_bound_models: dict = {}
CONTRACT_TOL = 1e-5  # outputs past the sampler (a classifier after an STN) or inside a branch


def output_bounds(name: str, feeds: dict) -> list:
    """Per output of a sample, what a rewrite of it may differ from the original by: the bound of
    two computations of the warp that writes it (tests/error_bounds.py), the manifest's declared
    tolerance where the original itself rounds more (a half-precision grid), and the contract's
    1e-5 for an output past the sampler or inside a branch, where the bound does not reach."""
    import surgeon

    if name not in _bound_models:
        _bound_models[name] = surgeon.fuse(os.path.join(MODELS, name)).model
    return fused_bounds(_bound_models[name], feeds, MANIFEST[name].get("tolerance"))


def fused_bounds(fused, feeds: dict, declared: float | None = None) -> list:
    """``output_bounds`` of any fused model, per graph output."""
    from .error_bounds import fused_output_bounds

    bounds = fused_output_bounds(fused, feeds)
    return [declared or bounds.get(o.name, CONTRACT_TOL) for o in fused.graph.output]


def assert_outputs_within(got: list, want: list, bounds: list, label: str) -> float:
    """Each output within its bound (``output_bounds``); returns the largest absolute error."""
    from .error_bounds import assert_within

    assert len(got) == len(want) == len(bounds), label
    worst = 0.0
    for g, w, b in zip(got, want, bounds):
        assert np.shape(g) == np.shape(w), (label, np.shape(g), np.shape(w))
        w64 = np.asarray(w, np.float64)
        if np.isscalar(b):  # a declared tolerance is absolute and relative, as assert_allclose's
            b = b + b * np.abs(w64)
        assert_within(g, w, b, label)
        worst = max(worst, float(np.abs(np.asarray(g, np.float64) - w64).max()) if np.size(g) else 0.0)
    return worst
