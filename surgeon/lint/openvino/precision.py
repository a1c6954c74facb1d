"""OpenVINO's CPU plugin and reduced precision: its default inference precision is bf16 on CPUs
that have it (AVX-512 BF16, AMX; f16 on some others), and it then runs the heavy ops (matrix
products, convolutions) in it. A sampling position computed through one of them keeps 8
significant bits: a coordinate near 1 moves by up to 2^-8, a pixel or more on images a few
hundred wide, and the output changes by a pixel's contrast, silently.

A site is an op whose inputs say where it reads: GridSample's grid and AffineGrid's first input
(the standard ops), and the inputs a plugin's op declares (``CustomOp.position_inputs``).

Which ops the plugin lowers depends on its release and on the graph (a product with a constant
operand may stay in float32), so where OpenVINO and a CPU with bf16 or f16 are at hand the
positions are measured: the model is compiled at that precision and at f32 with the positions
as extra outputs and run on seeded random inputs; a site is flagged when its positions differ.
Elsewhere (no OpenVINO or no such CPU, a model that does not run here, positions inside an If
or Loop body) the rule is static: a site is flagged when its positions come through MatMul, Gemm,
Conv, ConvTranspose, Einsum or the standard AffineGrid (a MatMul in OpenVINO)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from .probe import openvino_version
from ..report import Hazard

ROUNDING = ("MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum", "AffineGrid")
STANDARD_SITES = {"GridSample": (1,), "AffineGrid": (0,)}
SHOWN = 3  # rounding nodes named in a line; the rest are counted
MOVED = 1e-5  # positions differing by more than this (relative to their magnitude) were rounded


def check(view, ctx):
    sites = []
    for site in view.sites:
        positions = _positions(ctx, site)
        if positions and not _feeds_only_sites(view, site.node, ctx):  # else its sampler's line says it
            values = [site.node.input[i] for i in positions if i < len(site.node.input) and site.node.input[i]]
            sites.append((site, values))
    if not sites:
        return
    measured, precision = _measure(view, ctx, [v for _, values in sites for v in values])
    for site, values in sites:
        rounding = _rounding_upstream(view, values)
        if not site.domain and site.node.op_type == "AffineGrid":
            rounding.insert(0, site.name)
        names = ", ".join(rounding[:SHOWN]) + (f" and {len(rounding) - SHOWN} more" if len(rounding) > SHOWN else "")
        if measured is not None and all(v in measured for v in values):  # (not in an If/Loop body, not an input)
            moved = max((measured[v] for v in values), default=0.0)
            if moved <= 0.0:
                continue
            what = (f"under OpenVINO's default CPU precision ({precision} on this CPU) the input{'s' if len(values) > 1 else ''}"
                    f" placing its samples move{'' if len(values) > 1 else 's'} by up to {moved:.2g} (measured here on "
                    f"random inputs){', computed through ' + names if names else ''}")
        elif rounding:
            what = ("under OpenVINO's default CPU precision (bf16 where the CPU has it) what places its samples is "
                    f"computed in bf16 by {names}")
        else:
            continue
        yield Hazard("ov-grid-precision", site.name, site.node.op_type, site.domain,
                     what + ": 8 significant bits, so samples land up to a pixel or more away and the output changes by up to a "
                     "pixel's contrast, silently",
                     _fix(), site.graph)


def _positions(ctx, site) -> tuple[int, ...]:
    if not site.domain:
        return STANDARD_SITES.get(site.node.op_type, ())
    op = ctx.custom_op(site.node.domain, site.node.op_type)
    return tuple(op.position_inputs) if op is not None else ()


def _feeds_only_sites(view, node, ctx) -> bool:
    """Every consumer of the node's output reads it as a position (a GridSample's grid...)."""
    out = node.output[0] if node.output else ""
    readers = [(s, i) for s in view.sites for i, v in enumerate(s.node.input) if v == out and out]
    return bool(readers) and all(i in _positions(ctx, s) for s, i in readers)


def _rounding_upstream(view, values: list[str], limit: int = 100_000) -> list[str]:
    """Names of the rounding nodes the values are computed through, nearest first."""
    seen, found, queue = set(), [], list(values)
    while queue and len(seen) < limit:
        value = queue.pop(0)
        if not value or value in seen:
            continue
        seen.add(value)
        site = view.producer.get(value)
        if site is None:
            continue  # a graph input or an initializer
        if not site.domain and site.node.op_type in ROUNDING and site.name not in found:
            found.append(site.name)
        queue.extend(site.node.input)
    return found


def _measure(view, ctx, values: list[str]) -> tuple[dict | None, str]:
    """{value: how far the reduced precision moves it (0: not at all)}, and that precision; None
    (with a note saying why) when it cannot be measured here."""
    if openvino_version() is None:
        return None, ""  # ov_ops notes that openvino is missing
    from ...errors import SurgeonError
    from ...io.load import iter_tensors, load_model_proto
    from ...validate.draws import input_drawers
    from ...runtime.inputs import random_inputs
    from ...runtime.openvino import new_core, ov_message

    inputs = {v: 0.0 for v in values if v not in view.producer}  # straight from a graph input: never rounded
    computed = [v for v in dict.fromkeys(values) if v in view.producer and view.producer[v].graph == "main"]
    if not computed:
        return inputs, ""
    try:
        core = new_core(ctx.ov_extensions)
        capabilities = core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")
        precision = "bf16" if "BF16" in capabilities else "f16" if "FP16" in capabilities else None
        if precision is None:
            ctx.note("this CPU has neither bf16 nor f16: sampling positions were not measured, only the ops they "
                     "come through were looked at")
            return None, ""
        loaded = load_model_proto(view.proto)
        feeds, _ = random_inputs(loaded, drawers=input_drawers(view.proto, ctx.plugin_set()))
        results = []
        if any(t.data_location == TensorProto.EXTERNAL for t in iter_tensors(view.proto.graph)):
            ctx.note("sampling positions not measured (the model keeps its weights in external data); only the ops "
                     "they come through were looked at")
            return None, ""
        for hint in (precision, "f32"):
            model = core.read_model(view.proto.SerializeToString(), b"")
            known = {name for op in model.get_ordered_ops() for port in op.outputs() for name in port.get_names()}
            computed = [v for v in computed if v in known]  # a value the frontend folded away: the static rule
            if computed:
                model.add_outputs(computed)
            compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": hint})
            request = compiled.create_infer_request()
            request.start_async(feeds)  # (a synchronous infer() on one thread may lose a run-time error)
            request.wait()
            results.append({name: np.array(t.data, dtype=np.float64) for port, t in
                            zip(compiled.outputs, request.output_tensors) for name in port.get_names()})
    except SurgeonError as exc:
        ctx.note(f"sampling positions not measured: {exc}")
        return None, ""
    except Exception as exc:  # the model does not convert or run here: ov_ops says why
        ctx.note(f"sampling positions not measured (OpenVINO cannot run the model here: {ov_message(exc)}); "
                 "only the ops they come through were looked at")
        return None, ""
    low, exact = results
    moved = dict(inputs)
    for value in computed:
        a, b = low[value], exact[value]
        scale = max(1.0, float(np.max(np.abs(b)))) if b.size else 1.0
        diff = float(np.max(np.abs(a - b))) if b.size else 0.0
        moved[value] = diff if diff > MOVED * scale else 0.0
    return moved, precision


def _fix() -> str:
    return ("compile with float32 inference precision: core.compile_model(model, \"CPU\", "
            "{\"INFERENCE_PRECISION_HINT\": \"f32\"}); a plugin op that computes the positions in float32 itself "
            "helps only when its own inputs do not come through these ops")
