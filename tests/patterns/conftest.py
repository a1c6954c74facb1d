import os

import pytest

import surgeon
from surgeon_patterns import AffineGridSample

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(ROOT, "samples", "models")

_results: dict = {}


def fuse_sample(name: str, **kwargs):
    """surgeon.fuse on a sample model with only this pattern; cached per (model, options)."""
    key = (name, repr(sorted(kwargs.items())))
    if key not in _results:
        _results[key] = surgeon.fuse(os.path.join(MODELS, name), plugins=[AffineGridSample()], **kwargs)
    return _results[key]


@pytest.fixture
def fuse():
    return fuse_sample
