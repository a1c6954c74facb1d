"""``surgeon.run``: run a model that may hold custom ops."""

from __future__ import annotations

import logging
from typing import Mapping, Sequence

import numpy as np

from ..logs import log_lines
from .inputs import DEFAULT_MAX_BYTES, DEFAULT_SEED, random_inputs
from .runners import get_runner

log = logging.getLogger("surgeon.run")


def run(model, plugins, feeds: Mapping[str, np.ndarray] | None = None, device: str = "cpu",
        outputs: Sequence[str] | None = None, *, input_shapes: Mapping[str, Sequence[int]] | None = None,
        seed: int = DEFAULT_SEED, max_bytes: int = DEFAULT_MAX_BYTES, engine: str = "auto") -> dict[str, np.ndarray]:
    """Run ``model`` (a path, ModelProto or LoadedModel) and return ``{name: array}``.

    Runs in onnxruntime (sessions kept for later calls); custom nodes run on the onnxruntime op
    libraries of ``plugins`` (a PluginSet) where there are some, else on their reference kernels
    between onnxruntime stages (``engine``: auto, ort, reference). ``feeds=None`` draws seeded
    random inputs (``input_shapes`` fixes dynamic dims; the rest are 1). ``outputs`` may name
    intermediate values of the top-level graph as well as graph outputs.
    """
    runner = get_runner(model, plugins, device, engine)
    notes: list[str] = []
    if feeds is None:
        feeds, notes = random_inputs(runner.loaded, input_shapes, seed=seed, max_bytes=max_bytes)
    values = runner.run(dict(feeds), outputs)
    log_lines(log, [*notes, *runner.engine.notes])
    return values
