"""Shared by the deploy tests: the shipped samples fused and their originals' outputs, plain
onnxruntime and reference-evaluator runs, torch's numbers for a hand-built custom node, and a
name-free view of a graph for comparing two fuses."""

from __future__ import annotations

import contextlib
import os
import warnings

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

import surgeon
from samples.catalog import BY_FILE, make_inputs

# The samples' folder, manifest, originals' outputs and plain runs, for the deploy tests too.
from ..error_bounds import affine_grid_bound, grid_sample_bound
from ..shipped_samples import (FUSED, MANIFEST, MODELS, all_nodes, assert_outputs_within, fused_bounds, original_outputs,
                               ort_run, output_bounds, signed_transforms)

FUSED_SAMPLES = FUSED
# Samples with dynamic H/W whose fused node takes the size as a run-time input (the second
# has align_corners=1, and H=1 in its second shape set).
DYNAMIC_HW = ["affine_ts_opset20_2d_dynamic.onnx", "size_one_dynamic_ts_opset20.onnx"]

_fused: dict = {}


def fused(name: str, *, fixed: bool = True, functions: bool = False):
    """``surgeon.fuse`` of a shipped sample, its dims fixed to the manifest's inputs (cached)."""
    key = (name, fixed, functions)
    if key not in _fused:
        # Scalars (the If samples' cond) are left out: apply_input_shapes drops a scalar's
        # shape field, which check_model(full_check=True) then rejects.
        shapes = {k: v for k, v in MANIFEST[name]["inputs"].items() if v} if fixed else None
        _fused[key] = surgeon.fuse(os.path.join(MODELS, name), input_shapes=shapes, functions=functions).model
    return _fused[key]


def feeds_for(name: str, shapes=None, seed: int = 0) -> dict:
    return make_inputs(BY_FILE[name], shapes or MANIFEST[name]["inputs"], seed=seed)


def feed_sets(name: str, fixed: bool = True) -> list[dict]:
    """The manifest's inputs (and its second shape set when the dims are not fixed), then the
    first again with signed transform matrices (flips, rotations past 90 degrees, large shifts)."""
    entry = MANIFEST[name]
    shapes = [entry["inputs"]] + ([entry["alt_inputs"]] if entry.get("alt_inputs") and not fixed else [])
    sets = [feeds_for(name, s, seed=i) for i, s in enumerate(shapes)]
    return sets + [signed_transforms(sets[0])]


def reference_run(model, feeds: dict) -> list[np.ndarray]:
    from onnx.reference import ReferenceEvaluator

    names = {i.name for i in model.graph.input}
    return ReferenceEvaluator(model).run(None, {k: v for k, v in feeds.items() if k in names})


@contextlib.contextmanager
def reference_knows_opset16_modes():
    """onnx.reference has one GridSample, with opset-20 mode names only: it rejects opset 16's
    ``bilinear``/``bicubic`` (FACTS.md), also in the exporters' own models. Teach it the names
    (and nothing else), to check the rest of a body written for opsets 16-19."""
    from onnx.reference.ops import op_grid_sample

    original = op_grid_sample.GridSample._run

    def run(self, X, grid, mode=None, padding_mode=None, align_corners=None):
        mode = mode or self.mode
        mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
        return original(self, X, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners)

    op_grid_sample.GridSample._run = run
    try:
        yield
    finally:
        op_grid_sample.GridSample._run = original


def assert_close(got: list, want: list, label: str, bounds: list) -> float:
    """Each output within its bound (``output_bounds`` of a sample, ``contract_bound`` of a
    hand-built node, ``fused_bounds`` of any fused model); returns the largest absolute error."""
    return assert_outputs_within(got, want, bounds, label)


def opset_of(model) -> int:
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def custom_nodes(model) -> list:
    return [n for n in all_nodes(model.graph) if n.domain == "custom.ops"]


# -- what a hand-built custom node (tests.builders.custom_op_model) is held to ------------------

def contract_bound(op: str, feeds: dict, size, align: int, mode="bilinear", padding="zeros") -> np.ndarray:
    """What ``torch_custom``'s numbers are held to: the bound of two computations of them
    (tests/error_bounds.py)."""
    theta = feeds["theta"].astype(np.float32)
    if op == "AffineGrid":
        bound = affine_grid_bound(theta)
        return bound.reshape(bound.shape[0], *[1] * bound.shape[1], bound.shape[1])
    return grid_sample_bound(feeds["x"].astype(np.float32), theta, list(size)[2:], mode, padding, align)


def torch_custom(op: str, feeds: dict, size, align: int, mode="bilinear", padding="zeros") -> np.ndarray:
    """The contract's numbers: torch's affine_grid (and grid_sample)."""
    with warnings.catch_warnings():  # torch warns about size-1 dims with align_corners=True
        warnings.simplefilter("ignore", UserWarning)
        theta = torch.from_numpy(feeds["theta"].astype(np.float32))
        grid = F.affine_grid(theta, list(size), align_corners=bool(align))
        if op == "AffineGrid":
            return grid.numpy()
        x = torch.from_numpy(feeds["x"].astype(np.float32))
        return F.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=bool(align)).numpy()


# -- a graph without its names ------------------------------------------------------------------

def canonical(graph) -> list:
    """Nodes in order, with op, attributes, initializer contents and value links, but no names
    other than the graph's own inputs and outputs: two fuses of one model compare equal."""
    names = {v.name: v.name for v in list(graph.input) + list(graph.output)}
    inits = {t.name: t for t in graph.initializer}

    def name(value: str):
        if not value:
            return ""
        if value in inits:
            array = numpy_helper.to_array(inits[value])
            return ("const", array.dtype.str, array.shape, array.tobytes())
        return names.setdefault(value, f"v{len(names)}")

    found = []
    for node in graph.node:
        attrs = sorted((a.name, a.SerializeToString()) for a in node.attribute if a.type != onnx.AttributeProto.GRAPH)
        bodies = [canonical(a.g) for a in node.attribute if a.type == onnx.AttributeProto.GRAPH]
        found.append((node.domain, node.op_type, [name(i) for i in node.input], [name(o) for o in node.output],
                      attrs, bodies))
    return found
