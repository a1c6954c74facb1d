"""replace_grid_samplers(module): the drop-in for existing models.  Each module's own forward is
traced with torch.fx (its child modules kept as calls), every F.affine_grid whose grid is read
only by F.grid_sample calls with the same align_corners is rewritten into fused_grid_sample,
and the module's forward is replaced by the rewritten one (instance attribute; its class, its
other methods, parameters and state_dict stay as they were)."""

from __future__ import annotations

import functools
import inspect
import types
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import fx

from ._api import fused_grid_sample

_NAMES = ("affine_grid", "grid_sample")


def fused_or_pair(x, theta, size, mode, padding_mode, align_corners):
    """fused_grid_sample where the kernels apply (float32/float16 on CPU or CUDA), torch's own
    pair elsewhere (float64, bfloat16, other devices), so the rewrite never narrows a model."""
    if x.dtype in (torch.float32, torch.float16) and x.device.type in ("cpu", "cuda") and theta.dtype == x.dtype:
        return fused_grid_sample(x, theta, size, mode, padding_mode, align_corners)
    grid = F.affine_grid(theta, size, align_corners=align_corners)
    return F.grid_sample(x, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners)


@dataclass
class DropInReport:
    fused: list[str] = field(default_factory=list)  # "module: affine_grid -> grid_sample" per chain
    skipped: list[str] = field(default_factory=list)  # why a module or chain that names them was left alone

    def __str__(self) -> str:
        lines = [f"fused {len(self.fused)} chain(s)"] + [f"  {f}" for f in self.fused]
        return "\n".join(lines + [f"skipped: {s}" for s in self.skipped])


class _OwnForward(fx.Tracer):
    """Traces one module's forward; every child module stays a call (it is visited on its own)."""

    def is_leaf_module(self, m, qualname) -> bool:
        return True


def _args(fn, node) -> dict:
    bound = inspect.signature(fn).bind(*node.args, **node.kwargs)
    bound.apply_defaults()
    return bound.arguments


def _constant(value) -> bool:
    return not isinstance(value, fx.Node)


def _rewrite(graph: fx.Graph, name: str, report: DropInReport) -> bool:
    changed = False
    for grid_node in [n for n in graph.nodes if n.op == "call_function" and n.target is F.affine_grid]:
        g = _args(F.affine_grid, grid_node)
        readers = list(grid_node.users)
        samplers = [r for r in readers if r.op == "call_function" and r.target is F.grid_sample]
        why = None
        if len(samplers) != len(readers):
            why = "the grid has readers other than F.grid_sample"
        elif not _constant(g["align_corners"]):
            why = "align_corners is computed at run time"
        calls = [_args(F.grid_sample, s) for s in samplers]
        for s in calls:
            if why is None and (s["grid"] is not grid_node or s["input"] is grid_node):
                why = "the grid is not F.grid_sample's grid argument"
            elif why is None and not all(_constant(s[k]) for k in ("mode", "padding_mode", "align_corners")):
                why = "mode, padding_mode or align_corners is computed at run time"
            elif why is None and bool(s["align_corners"]) != bool(g["align_corners"]):
                why = "affine_grid and grid_sample use different align_corners"
        if why is not None:
            report.skipped.append(f"{name}: {grid_node.name}: {why}")
            continue
        for node, s in zip(samplers, calls):
            with graph.inserting_before(node):
                fused = graph.call_function(fused_or_pair, (s["input"], g["theta"], g["size"], s["mode"],
                                                            s["padding_mode"], bool(g["align_corners"])))
            node.replace_all_uses_with(fused)
            graph.erase_node(node)
            report.fused.append(f"{name}: {grid_node.name} -> {node.name}")
        graph.erase_node(grid_node)
        changed = True
    return changed


def _mentions(module) -> bool:
    code = getattr(type(module).forward, "__code__", None)
    return code is not None and any(n in code.co_names for n in _NAMES)


def _install(module, graph: fx.Graph) -> None:
    gm = fx.GraphModule(module, graph)
    for node in graph.nodes:  # constants the tracer created (tensor literals) live on gm only
        if node.op == "get_attr":
            try:
                functools.reduce(getattr, node.target.split("."), module)
            except AttributeError:
                module.register_buffer(node.target, getattr(gm, node.target), persistent=False)
    module.forward = types.MethodType(type(gm).forward, module)


def replace_grid_samplers(module: torch.nn.Module) -> DropInReport:
    """Rewrites, in place, every F.affine_grid -> F.grid_sample chain found in the forward of
    `module` or of any module inside it; returns what was fused and what was left alone."""
    report = DropInReport()
    for name, sub in module.named_modules():
        if type(sub).__module__.startswith("torch.") or isinstance(sub, (torch.jit.ScriptModule, fx.GraphModule)):
            continue  # torch's own modules never hold the pair
        try:
            graph = _OwnForward().trace(sub)
        except Exception as exc:  # not traceable by fx: data-dependent control flow, ...
            if _mentions(sub):
                report.skipped.append(f"{name or type(sub).__name__}: not traceable by torch.fx "
                                      f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})")
            continue
        if _rewrite(graph, name or type(sub).__name__, report):
            graph.lint()
            _install(sub, graph)
    return report
