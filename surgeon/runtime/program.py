"""A model made runnable: plans per set of requested values, sessions kept (which runner a
model gets, and the runners kept, are runners.py's)."""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np

from ..io.load import LoadedModel
from .device import providers_for
from .engines import choose
from .inputs import check_feeds, input_specs
from .schedule import ORT_DOMAINS, GraphPlan, Planner
from .steps import ModelContext


class Runner:
    """Runs one model: onnxruntime, with custom nodes on the plugins' op libraries or on their
    reference kernels between onnxruntime stages (``engine``, see engines.py)."""

    def __init__(self, loaded: LoadedModel, plugins, device: str = "cpu", engine: str = "auto",
                 optimize: bool = True):
        self.loaded = loaded
        self.proto = loaded.proto
        self.device = device
        self.engine = choose(self.proto, plugins, device, engine)
        self.ctx = ModelContext(
            opsets=list(self.proto.opset_import), ir_version=self.proto.ir_version,
            functions=list(self.proto.functions), providers=providers_for(device), device=device,
            external_dir=loaded.base_dir if loaded.external else None, loaded=loaded,
            libraries=self.engine.libraries, optimize=optimize)
        self.planner = Planner(self.ctx, [(f.domain, f.name) for f in self.proto.functions], plugins,
                               self.engine.served)
        self.specs = input_specs(self.proto)
        self.output_names = [o.name for o in self.proto.graph.output]
        self._plans: dict[tuple[str, ...], GraphPlan] = {}
        self._lock = threading.Lock()

    @property
    def sessions_created(self) -> int:
        """onnxruntime sessions this runner has built (one per stage, on first run)."""
        return self.ctx.sessions

    @staticmethod
    def is_custom(node) -> bool:
        """A node of a custom op, however it runs (library, function body or reference kernel):
        what a rewrite wrote, for validation."""
        return node.domain not in ORT_DOMAINS

    def custom_nodes(self) -> list:
        """Custom nodes at the top level and in bodies, in graph order."""
        found = []

        def walk(graph):
            for node in graph.node:
                if self.is_custom(node):
                    found.append(node)
                for a in node.attribute:
                    for body in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                        walk(body)
        walk(self.proto.graph)
        return found

    def plan(self, outputs: Sequence[str] | None = None) -> GraphPlan:
        key = tuple(outputs) if outputs is not None else tuple(self.output_names)
        with self._lock:
            plan = self._plans.get(key)
            if plan is None:
                available = {s.name for s in self.specs}
                plan = self.planner.compile(self.proto.graph, list(key), available)
                self._plans[key] = plan
        return plan

    def run(self, feeds: dict[str, np.ndarray], outputs: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Values of ``outputs`` (default: the graph outputs; intermediates may be named too)."""
        check_feeds(self.specs, feeds)
        if outputs is not None:
            outputs = list(dict.fromkeys(o for o in outputs if o))
        return self.plan(outputs).run(dict(feeds))
