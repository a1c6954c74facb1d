"""Fusing as the pattern tests fuse: with the affine-grid pattern alone (a model from
tests.builders, or a sample by its file name, cached), the refusals' reasons, and inputs with the
torch warp the rewrites are held to."""

from __future__ import annotations

import os
import warnings

import numpy as np
import torch
import torch.nn.functional as F

import surgeon
from surgeon_patterns import AffineGridSample

from ..shipped_samples import MODELS

RNG = np.random.default_rng(7)  # the hand-built spellings' inputs, drawn in test order

_samples: dict = {}


def fuse_alone(model, **kw):
    """``surgeon.fuse`` with the affine-grid pattern alone (no installed plugins)."""
    return surgeon.fuse(model, plugins=[AffineGridSample()], **kw)


def fuse_sample(name: str, **kw):
    """``fuse_alone`` of a shipped sample, by file name; cached per (sample, options)."""
    key = (name, repr(sorted(kw.items())))
    if key not in _samples:
        _samples[key] = fuse_alone(os.path.join(MODELS, name), **kw)
    return _samples[key]


def refusal_reasons(result) -> str:
    return " | ".join(r.reason for r in result.report.refusals)


def inputs(x_shape, theta_shape, name="theta"):
    """An image and a theta near the identity (from ``RNG``)."""
    eye = np.eye(theta_shape[-2], theta_shape[-1], dtype=np.float32)
    return {"x": RNG.random(x_shape, dtype=np.float32),
            name: (eye + 0.2 * RNG.standard_normal(theta_shape)).astype(np.float32)}


def torch_warp(x, theta, out, ac, mode="bilinear", padding="zeros"):
    theta = torch.from_numpy(theta)
    with warnings.catch_warnings():  # torch warns about size-1 dims with align_corners=True
        warnings.simplefilter("ignore", UserWarning)
        grid = F.affine_grid(theta, [theta.shape[0], x.shape[1], *out], align_corners=bool(ac))
    return F.grid_sample(torch.from_numpy(x), grid, mode=mode, padding_mode=padding, align_corners=bool(ac)).numpy()


def torch_grid(theta, out, ac):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        theta = torch.from_numpy(np.asarray(theta, np.float32))
        return F.affine_grid(theta, [theta.shape[0], 1, *out], align_corners=bool(ac)).numpy()


def exact_verdicts(monkeypatch) -> list:
    """What the exact check (patterns/exact_grid.py) says of each region fused after this call:
    its refusal's reason, or the verdict's ``exact`` ("proved", "proved where ...", or why not)."""
    from surgeon_patterns import identify

    seen = []
    real = identify.exact_refusal

    def spy(ctx, cut, symbols, dims, values, verdict, layout):
        found = real(ctx, cut, symbols, dims, values, verdict, layout)
        seen.append(found.reason if found is not None else verdict.exact)
        return found

    monkeypatch.setattr(identify, "exact_refusal", spy)
    return seen
