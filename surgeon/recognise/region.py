"""Cutting a candidate region from an anchor back to one variable, and running it on probes.

``cut`` walks back from an output to a run-time value the pattern names (``is_variable``):
everything else the region reads must be constant or the shape of a run-time tensor (fed with
probe dims). Candidates come nearest first, so a value computed from the true variable (RAFT's
``base + flow``) is tried before the variable itself.

``Probe`` is the region at one set of concrete dims: every dynamic dim of the tensors the region
reads gets a value of its own (dims declared with one symbol share a value only in a second
round, and only when the region does not run with them apart: a name is a hint, never a fact).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
from onnx import TensorProto

from ..errors import SurgeonError
from ..graph.node import shape_range
from ..graph.walk import BackWalk
from ..rewrite.match import Refusal

_SHAPE_OPS = ("Shape", "Size")
SPATIAL = (5, 7, 6, 9, 11, 13, 10, 14, 8, 12, 15, 17, 19, 16, 18)  # probe values for dims, all distinct
BATCH = (2, 3, 4)


class DoesNotRun(Exception):
    """The region does not run at these dims (the original would not either): try others."""


@dataclass
class Region:
    """The part of a graph from a variable (or none: a region of constants and sizes) to an
    output, and what it reads: the shapes of run-time tensors, constants, sizes given as data."""

    output: str
    variable: str | None
    nodes: list  # graph order, from the variable to the output
    shapes: list = field(default_factory=list)  # Shape/Size nodes of run-time tensors: fed probe dims
    named: dict = field(default_factory=dict)  # role -> a tensor whose dims the caller needs (the anchor)
    folded: list = field(default_factory=list)  # Shape/Size whose value is static: constants of the region
    constants: list = field(default_factory=list)  # constant values the region reads
    ints: list = field(default_factory=list)  # run-time int tensors read as sizes: fed probe sizes
    constant_variable: bool = False  # the variable is known before run time
    computed: list = field(default_factory=list)  # the caller's own: nodes it computes itself for a probe
    # elements of one item of the variable every run holds, proved above the cut (exact.py):
    # flat position -> value; the proof takes them as constants and probes feed them
    fixed: dict = field(default_factory=dict)

    def tensors(self, ctx) -> dict[str, tuple]:
        """Every run-time tensor whose dims the region reads (the variable first), and the named
        ones -> declared dims."""
        found = {self.variable: tuple(ctx.shape(self.variable) or ())}
        for tensor in [n.inputs[0] for n in self.shapes] + list(self.named.values()):
            found.setdefault(tensor, tuple(ctx.shape(tensor) or ()))
        return found


def _is_shape(node) -> bool:
    return node.op_type in _SHAPE_OPS and node.domain in ("", "ai.onnx")


def reads_only_shapes(ctx, value: str, also=None, max_nodes: int = 64) -> bool:
    """True when ``value`` is computed from constants and the shapes of tensors alone (and values
    ``also(ctx, v)`` accepts); False when it reads other run-time data, or the walk runs long."""
    walk, count = BackWalk([value]), 0
    for v in walk:
        node = ctx.producer(v)
        accepted = also is not None and also(ctx, v)
        if node is None:
            if not (ctx.is_initializer(v) or ctx.constant(v) is not None or accepted):
                return False
            continue
        if node.is_op("Constant") or _is_shape(node) or accepted:
            continue
        count += 1  # walked values, not distinct nodes: a node reached twice counts twice
        if count > max_nodes or node.subgraphs():
            return False
        walk.into(node.inputs)
    return True


def cut(ctx, output: str, is_variable, max_nodes: int = 400, max_candidates: int = 4) -> list:
    """Regions from ``output`` back to each run-time value ``is_variable(ctx, value)`` accepts,
    nearest first; a ``Refusal`` where a candidate's region reads other run-time data."""
    candidates, frontier, seen = [], [output], {output}
    while frontier and len(candidates) < max_candidates:
        following = []
        for value in frontier:
            if ctx.constant(value) is not None:
                continue
            if value != output and is_variable(ctx, value):
                candidates.append(value)
            node = ctx.producer(value)
            if node is None or _is_shape(node) or node.subgraphs():
                continue
            for v in node.inputs:
                if v and v not in seen:
                    seen.add(v)
                    following.append(v)
        frontier = following
    return [_region(ctx, output, c, max_nodes) for c in candidates]


def _region(ctx, output: str, variable: str, max_nodes: int):
    shapes, walk = [], BackWalk([output])
    for value in walk:
        if value == variable:
            continue
        node = ctx.producer(value)
        if ctx.constant(value) is not None:
            continue
        if node is None:
            return Refusal(f"the output reads run-time data other than {variable!r}: {value!r}")
        if node.subgraphs():
            return Refusal(f"{node.label}: control flow between {variable!r} and the output")
        walk.take(node)
        if walk.taken > max_nodes:
            return Refusal(f"more than {max_nodes} nodes between {variable!r} and the output")
        source = node.inputs[0] if _is_shape(node) else None
        if source is not None and source != variable and (ctx.producer(source) is None or
                                                          not reads_only_shapes(ctx, source)):
            shapes.append(node)  # the dims of a run-time tensor: fed by the probe
            continue
        walk.into(node.inputs)
    return Region(output, variable, walk.nodes(), shapes)


class Probe:
    """The region at one set of concrete dims: per tensor whose dims it reads, its dims; per int
    tensor it reads as sizes, its values."""

    def __init__(self, ctx, region: Region, dims: dict[str, tuple]):
        self.ctx, self.region = ctx, region
        self.dims = dims  # tensor -> concrete dims (an int tensor: its values)

    def shape(self, tensor: str) -> tuple:
        """Concrete dims of the variable or of a tensor the region reads the shape of."""
        return self.dims[tensor]

    def shape_of(self, role: str) -> tuple:
        """Concrete dims of a named tensor (``Recogniser(...)(ctx, output, image=x)``)."""
        return self.dims[self.region.named[role]]

    def feeds(self, value: np.ndarray | None) -> dict:
        """What the region reads at these dims, ``value`` as the variable (None: not fed)."""
        feeds = {}
        for node in self.region.folded:  # a static Shape: fed, so the region never reads its tensor
            feeds[node.outputs[0]] = np.asarray(self.ctx.constant(node.outputs[0]))
        if value is not None:
            feeds[self.region.variable] = np.asarray(value)
        for node in self.region.shapes:
            dims = list(self.dims[node.inputs[0]])
            if node.op_type == "Size":
                feeds[node.outputs[0]] = np.array(int(np.prod(dims)), np.int64)
                continue
            start, end = shape_range(node, len(dims))
            feeds[node.outputs[0]] = np.array(dims[start:end], np.int64)
        for tensor in self.region.ints:
            data = np.array(self.dims[tensor], np.int32 if self.ctx.dtype(tensor) == TensorProto.INT32 else np.int64)
            feeds[tensor] = data.reshape(()) if self.ctx.shape(tensor) == () else data
        return feeds

    def __call__(self, value: np.ndarray) -> np.ndarray:
        """The output for this value of the variable (``SurgeonError`` when it does not run)."""
        return np.asarray(self.ctx.evaluate([self.region.output], self.feeds(value))[0])


def probes(ctx, region: Region, rounds: int = 2):
    """Probes at dims that all differ, then (when asked for) at other values, then with dims of
    one declared symbol tied."""
    tensors = region.tensors(ctx)
    yield from (Probe(ctx, region, dims) for dims in _assignments(tensors, rounds, tie=False))
    yield from (Probe(ctx, region, dims) for dims in _assignments(tensors, rounds, tie=True))


def _assignments(tensors: dict[str, tuple], rounds: int, tie: bool):
    for r in range(rounds):
        pools = {"batch": itertools.cycle(BATCH[r % len(BATCH):] + BATCH[:r % len(BATCH)]),
                 "spatial": itertools.cycle(SPATIAL[3 * r:] + SPATIAL[:3 * r])}
        named: dict[str, int] = {}
        out = {}
        for tensor, dims in tensors.items():
            concrete = []
            for axis, d in enumerate(dims):
                if isinstance(d, int):
                    concrete.append(d)
                elif tie and isinstance(d, str) and d in named:
                    concrete.append(named[d])
                else:
                    concrete.append(next(pools["batch" if axis == 0 else "spatial"]))
                    if isinstance(d, str):
                        named.setdefault(d, concrete[-1])
            out[tensor] = tuple(concrete)
        yield out


def runs(probe: Probe, value: np.ndarray) -> bool:
    try:
        probe(value)
        return True
    except SurgeonError:
        return False
