"""OpenVINO's CPU plugin and reduced precision: its default inference precision is bf16 on CPUs
that have it (AVX-512 BF16, AMX) and f16 on some others, and it then runs matrix products and
convolutions in it (keeping the rest in float32). A sampling position computed through one of
them keeps 8 significant bits: a coordinate near 1 moves by up to 2^-8, which is a pixel or more
on images a few hundred wide, and the output changes by a pixel's contrast, silently.

A site is an op whose inputs say where it reads: GridSample's grid and AffineGrid's first input
(the standard ops), and the inputs a plugin's op declares (``CustomOp.position_inputs``). Its hazard
names the rounding ops upstream of them: MatMul, Gemm, Conv, ConvTranspose, Einsum, and the
standard AffineGrid (the frontend writes it as a MatMul). Measured on the shipped samples
(docs/benchmarks.md): wherever this flags a node, bf16 moved the output by 4.4e-5 to 1.48 from
onnxruntime's; wherever it does not, by at most 2e-6 (its float32 error)."""

from __future__ import annotations

from .report import Hazard

ROUNDING = ("MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum", "AffineGrid")
STANDARD_SITES = {"GridSample": (1,), "AffineGrid": (0,)}
SHOWN = 3  # rounding nodes named in a line; the rest are counted


def check(view, ctx):
    for site in view.sites:
        node = site.node
        positions = _positions(ctx, site)
        if not positions:
            continue
        if _feeds_only_sites(view, node, ctx):
            continue  # a grid only a sampler reads: the sampler's line names the same ops
        rounding = _rounding_upstream(view, [node.input[i] for i in positions if i < len(node.input)])
        if not site.domain and node.op_type == "AffineGrid":
            rounding.insert(0, site.name)
        if not rounding:
            continue
        names = ", ".join(rounding[:SHOWN]) + (f" and {len(rounding) - SHOWN} more" if len(rounding) > SHOWN else "")
        yield Hazard("ov-grid-precision", site.name, node.op_type, site.domain,
                     "under OpenVINO's default CPU precision (bf16 where the CPU has it) its sampling positions are "
                     f"computed in bf16 by {names}: they keep 8 significant bits, and the output moves by up to a "
                     "pixel's contrast, silently", _fix(ctx), site.graph)


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


def _fix(ctx) -> str:
    return ("compile with float32 inference precision: core.compile_model(model, \"CPU\", "
            "{\"INFERENCE_PRECISION_HINT\": \"f32\"}); a plugin op that computes the positions in float32 itself "
            "helps only when its own inputs do not come through these ops")
