"""The original's side of the scale draws (scaled.py): each rewrite's part of the original, run on
drawn inputs.

Through the original model itself where the parts read nothing but its inputs and constants: its
runner is kept between calls, so a 350-node original builds no second session. Else as one model
of the parts (originals.py), built for the call.
"""

from __future__ import annotations

import onnx

from ..io.load import LoadedModel
from .originals import model_of, parts_graph
from ..graph.index import proto_reads
from .rounding import all_names


class OriginalParts:
    """``run(values)``: ``{(region index, value): array}`` for what each region produces, the
    parts reading ``values``; ``computed(values, j)``: every value part ``j`` computes, by the
    original's names (for the rounding probe)."""

    def __init__(self, orig, regions: list, parts: list, kept: dict, feeds: dict, probe_runner):
        self.orig, self.regions, self.feeds = orig, regions, feeds
        reads = set()
        for part in parts:
            made = {o for n in part for o in n.output if o}
            reads.update(r for n in part for r in proto_reads(n) if r not in made)
        given = {s.name for s in orig.specs} | {t.name for t in orig.proto.graph.initializer}
        self.made = [[o for n in part for o in n.output if o] for part in parts]
        self.direct = reads <= given
        if self.direct:
            return
        graph, self.produced, made = parts_graph(orig.loaded, regions, parts, kept, all_names(orig.proto.graph))
        self.inputs = [i.name for i in graph.input]
        self.local = [{new: old for (k, old), new in made.items() if k == j} for j in range(len(parts))]
        graph.output.extend(onnx.ValueInfoProto(name=n) for n in dict.fromkeys(self.produced.values()))
        self.runner = probe_runner(LoadedModel(model_of(graph, orig.proto)))  # not kept: the cache holds models

    def run(self, values: dict) -> dict:
        if self.direct:
            wanted = [name for r in self.regions for name in r.produces]
            got = self.orig.run(self._model_feeds(values), wanted)
            return {(j, name): got[name] for j, r in enumerate(self.regions) for name in r.produces}
        got = self.runner.run({n: values[n] for n in self.inputs})
        return {(j, name): got[self.produced[f"{j}:{name}"]] for j, r in enumerate(self.regions)
                for name in r.produces if f"{j}:{name}" in self.produced}

    def computed(self, values: dict, j: int) -> dict:
        if self.direct:
            return self.orig.run(self._model_feeds(values), self.made[j])
        got = self.runner.run({n: values[n] for n in self.inputs}, list(self.local[j]))
        return {self.local[j][n]: v for n, v in got.items()}

    def _model_feeds(self, values: dict) -> dict:
        return {name: values.get(name, value) for name, value in self.feeds.items()}
