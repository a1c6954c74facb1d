"""The three kinds of step a graph plan runs: an onnxruntime stage, a custom node on its
reference kernel, and an ``If`` evaluated in Python because a branch holds custom nodes."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import onnx
from onnx import GraphProto, helper

from ..errors import PluginError, SurgeonError
from .sessions import build_session, run_session

Fetch = Callable[[str], np.ndarray]


@dataclass
class ModelContext:
    """What every plan of one model shares: opsets, functions, device, and the session count."""

    opsets: list
    ir_version: int
    functions: list
    providers: list[str]
    device: str
    external_dir: str | None
    loaded: Any  # LoadedModel, for reading external tensors the kernels need
    libraries: tuple[str, ...] = ()  # custom-op libraries every session registers
    optimize: bool = True  # False: onnxruntime runs the graph as written (validate's reference)
    sessions: int = 0


class OrtStep:
    """A run of standard nodes as one InferenceSession, built on first use.

    Input types come from the arrays of the first run (the values between stages often have
    no declared type), with every dim left dynamic. The stage's own copy of the graph (weights
    included) is dropped once the session holds it; feeds are checked against the model's
    declared types, so later runs bring the same dtypes and ranks.
    """

    def __init__(self, ctx: ModelContext, index: int, graph: GraphProto, inputs: list[str], outputs: list[str]):
        self.ctx = ctx
        self.graph = graph  # nodes, initializers and outputs; inputs are added per dtype key
        self.inputs = inputs
        self.outputs = outputs
        first, last = graph.node[0], graph.node[-1]
        span = f"{_name(first)}" if len(graph.node) == 1 else f"{_name(first)} .. {_name(last)}"
        self.label = f"stage {index} ({len(graph.node)} node(s): {span})"
        self._session_obj = None
        self._key: tuple = ()
        self.node_count = len(graph.node)
        self._lock = threading.Lock()  # threads share cached runners: the first run builds, once

    def _session(self, arrays: list[np.ndarray]):
        with self._lock:
            return self._built(arrays)

    def _built(self, arrays: list[np.ndarray]):
        key = tuple((a.dtype.str, a.ndim) for a in arrays)
        if self._session_obj is not None:
            if key != self._key:
                raise SurgeonError(f"{self.label}: its inputs changed dtype or rank between runs "
                                   f"({self._key} -> {key})")
            return self._session_obj
        graph = self.graph
        for name, a in zip(self.inputs, arrays):
            graph.input.append(helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(a.dtype), [None] * a.ndim))
        model = helper.make_model(graph, opset_imports=self.ctx.opsets, functions=self.ctx.functions)
        model.ir_version = self.ctx.ir_version
        del graph.input[:]
        session = build_session(model, self.ctx.providers, self.ctx.external_dir, self.label, self.ctx.libraries,
                                path=getattr(self.ctx.loaded, "path", None), optimize=self.ctx.optimize)
        self.ctx.sessions += 1
        self._session_obj, self._key = session, key
        self.graph = None  # the session has its own copy of the weights
        return session

    def run(self, env: dict, fetch: Fetch) -> None:
        # np.require keeps a scalar 0-d; np.ascontiguousarray would make it 1-d
        arrays = [np.require(fetch(n), requirements="C") for n in self.inputs]
        session = self._session(arrays)
        results = run_session(session, self.outputs, dict(zip(self.inputs, arrays)), self.label)
        env.update(zip(self.outputs, results))


class KernelStep:
    """One custom node, run on its registered reference kernel."""

    def __init__(self, ctx: ModelContext, node: onnx.NodeProto, kernel, attrs: dict):
        self.ctx = ctx
        self.kernel = kernel
        self.attrs = attrs
        self.inputs = list(node.input)
        self.outputs = list(node.output)
        self.op = f"{node.domain}::{node.op_type}"
        self.label = f"{self.op} (node {_name(node)!r})"

    def run(self, env: dict, fetch: Fetch) -> None:
        args = [fetch(n) if n else None for n in self.inputs]
        try:
            results = self.kernel(args, dict(self.attrs), device=self.ctx.device)
        except SurgeonError:
            raise
        except Exception as exc:
            text = str(exc).strip().splitlines()
            raise PluginError(f"reference kernel for {self.label} failed: {type(exc).__name__}: "
                               f"{text[0] if text else ''}") from None
        if isinstance(results, np.ndarray) or not isinstance(results, (list, tuple)):
            results = [results]
        wanted = [i for i, n in enumerate(self.outputs) if n]
        if len(results) < (wanted[-1] + 1 if wanted else 0):
            raise PluginError(f"reference kernel for {self.label} returned {len(results)} output(s), "
                               f"the node has {len(self.outputs)}")
        for i in wanted:
            value = results[i]
            if value is None:
                raise PluginError(f"reference kernel for {self.label} returned no value for output {i}")
            env[self.outputs[i]] = np.asarray(value)


class IfStep:
    """An ``If`` whose branches hold custom nodes: decide in Python, run the branch's own plan."""

    def __init__(self, node: onnx.NodeProto, then_plan, else_plan):
        self.cond = node.input[0]
        self.outputs = list(node.output)
        self.then_plan, self.else_plan = then_plan, else_plan
        self.label = f"If (node {_name(node)!r})"

    def run(self, env: dict, fetch: Fetch) -> None:
        cond = np.asarray(fetch(self.cond))
        if cond.size != 1:
            raise SurgeonError(f"{self.label}: condition has {cond.size} elements, expected 1")
        plan = self.then_plan if bool(cond.reshape(-1)[0]) else self.else_plan
        values = plan.run({n: fetch(n) for n in plan.needs})
        for out, branch_out in zip(self.outputs, plan.wanted):
            if out:
                env[out] = values[branch_out]


def _name(node: onnx.NodeProto) -> str:
    return node.name or f"{node.op_type}->{node.output[0] if node.output else '?'}"
