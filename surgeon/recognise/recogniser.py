"""Recognising a region by what it computes, whatever ops spell it: the engine's facility.

``Recogniser(is_variable, identify, family=...)`` is called with a context and an output value:

1. cut: the regions from the output back to each candidate variable, nearest first;
2. prove (when ``family="affine"``): the output is affine in the variable by the ops, element
   by element (``surgeon.recognise.prove``); a refusal names the op, branch or leaf;
3. identify: ``identify(probe)`` runs the region on values of the variable at probe dims (all
   distinct, over more than one round) and returns what the region is, or a ``Refusal``; every
   round must agree;
4. cache: verdicts are kept by the region's structure (``region_key``), so identical chains are
   proved and probed once.

The result is a ``Recognised`` (the region, the verdict, the variable's elements the output
reads) or a ``surgeon.Refusal`` with the nearest candidate's reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from onnx import TensorProto, helper

from ..errors import SurgeonError
from ..rewrite.match import NEAR_MISS, Refusal
from .elements import AFFINE, OTHER, NotProved, dims, variable
from .key import region_key, shape_tag
from .prove import prove
from .region import Probe, Region, cut, probes

FAMILIES = (None, "affine")


@dataclass
class Recognised:
    region: Region
    verdict: Any  # what ``identify`` returned
    reads: int | None = None  # family "affine": bitmask of the variable's elements per item read


class Recogniser:
    def __init__(self, is_variable: Callable[[Any, str], bool], identify: Callable[[Probe], Any],
                 family: str | None = None, rounds: int = 2, item_axes: int = 1, max_nodes: int = 400,
                 unproved: str = NEAR_MISS):
        """``is_variable(ctx, value)``: the run-time values a region may be a function of;
        ``identify(probe)``: the verdict at one probe, or a ``surgeon.Refusal`` saying why it is
        not what the pattern looks for; ``family``: "affine" to prove it affine in the variable first;
        ``item_axes``: the variable's leading axes that index items (the rest are one item's
        elements, for ``reads``); ``unproved``: the kind of the refusals the recogniser makes
        itself (no candidate, not affine, not running): ``NEAR_MISS`` where every output offered
        is the pattern's chain, ``NOT_MINE`` where such an output is simply another chain (those
        ``identify`` returns keep their own kind)."""
        if family not in FAMILIES:
            raise ValueError(f"family {family!r}: known are {FAMILIES}")
        self.is_variable, self.identify, self.family = is_variable, identify, family
        self.rounds, self.item_axes, self.max_nodes, self.unproved = rounds, item_axes, max_nodes, unproved
        self.verdicts: dict[tuple, Recognised | Refusal] = {}

    def __call__(self, ctx, output: str, **named: str) -> Recognised | Refusal:
        """``named``: tensors ``identify`` needs the dims of by role (``image=x``), read in the
        probe as ``probe.shape_of("image")``."""
        refusals = []
        for region in cut(ctx, output, self.is_variable, self.max_nodes):
            if not isinstance(region, Refusal):
                region.named = dict(named)
            found = self._no(region.reason) if isinstance(region, Refusal) else self._one(ctx, region)
            if isinstance(found, Recognised):
                return found
            refusals.append(found)
        return refusals[0] if refusals else self._no("no candidate the output is computed from")

    def _no(self, reason: str) -> Refusal:
        return Refusal(reason, kind=self.unproved)

    def _one(self, ctx, region: Region) -> Recognised | Refusal:
        tensors = region.tensors(ctx)
        roles = {t: r for r, t in region.named.items()}
        fed = {id(n): shape_tag(n, tensors[n.inputs[0]], roles.get(n.inputs[0], n.inputs[0] == region.variable))
               for n in region.shapes}
        named = tuple((r, tensors[t]) for r, t in sorted(region.named.items()))
        try:
            key = region_key(ctx, region.nodes, output=region.output, leaves={region.variable: ("variable",)},
                             fed=fed, extra=(self.family, tensors[region.variable], ctx.dtype(region.variable), named))
        except ValueError as exc:
            return self._no(str(exc))
        if key not in self.verdicts:
            self.verdicts[key] = self._decide(ctx, region)
        found = self.verdicts[key]
        return Recognised(region, found.verdict, found.reads) if isinstance(found, Recognised) else found

    def _decide(self, ctx, region: Region) -> Recognised | Refusal:
        verdict, reads, ran = None, None, False
        dtype = helper.tensor_dtype_to_np_dtype(ctx.dtype(region.variable) or TensorProto.FLOAT)
        for probe in probes(ctx, region, self.rounds):
            shape = probe.shape(region.variable)
            sample = np.random.default_rng(len(shape)).standard_normal(shape).astype(dtype)
            try:
                probe(sample)
            except SurgeonError:
                continue  # not at these dims: the model does not run there either
            if self.family == "affine" and reads is None:
                reads = self._prove(ctx, region, probe, sample)
                if isinstance(reads, Refusal):
                    return reads
            found = self.identify(probe)
            if isinstance(found, Refusal):
                return found
            if ran and found != verdict:
                return self._no(f"what the region computes changes with its dims ({verdict} and {found})")
            verdict, ran = found, True
        if not ran:
            return self._no(f"the region from {region.variable!r} does not run at any probe dims")
        return Recognised(region, verdict, reads)

    def _prove(self, ctx, region: Region, probe: Probe, sample: np.ndarray) -> int | Refusal:
        feeds = probe.feeds(sample)
        item = int(np.prod(sample.shape[self.item_axes:])) if sample.ndim > self.item_axes else 1
        leaves = {region.variable: variable(sample.shape, min(item, 32))}  # reads: exact for items up to 32
        for node in region.shapes:
            leaves[node.outputs[0]] = dims(np.shape(feeds[node.outputs[0]]), 1, np.inf)
        try:
            proof = prove(ctx, region.nodes, [region.output], leaves, feeds)
        except NotProved as exc:
            return self._no(str(exc))
        out = proof.outputs[region.output]
        if (out.kind == OTHER).any():
            return self._no(f"not affine in {region.variable!r}: {out.why or 'an op on its path has no affine rule'}")
        if out.branch or out.resized:
            return self._no(f"the output depends on {out.branch or out.resized}")
        if not (out.kind == AFFINE).any():
            return self._no(f"the output does not depend on {region.variable!r}")
        return out.all_reads()
