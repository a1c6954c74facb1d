"""What the pool tests run in a child process (a module of its own: a spawned child imports it by
name). Each returns plain data the parent checks."""

from __future__ import annotations

import numpy as np

import surgeon

from .stn_sample import SMALL, STN, stn_feeds


def fuse_run_validate(seed: int) -> tuple:
    """fuse (validated), validate and run the STN sample, then run every small sample (more
    models than the runner cache holds, so whatever it held is evicted); returns (validated,
    the output's sum, how many samples ran)."""
    result = surgeon.fuse(STN, validate=True, quiet=True)
    passed = result.validation.passed and surgeon.validate(STN, result.model, far=False, quiet=True).passed
    y = surgeon.run(result.model, stn_feeds(seed), quiet=True)["y"]
    ran = sum(1 for path in SMALL if surgeon.run(surgeon.fuse(path, quiet=True).model, quiet=True))
    return passed, float(np.sum(y)), ran
