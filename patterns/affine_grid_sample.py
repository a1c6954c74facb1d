"""The affine-grid-sample pattern: every grid sampler whose grid is an affine grid of one theta,
in whatever spelling, becomes ``custom.ops::FusedGridSample`` (or ``custom.ops::AffineGrid`` when
the grid is needed by itself); in float64, which the contract's ops do not take, ONNX's own
AffineGrid + GridSample (opset 20 on).

Options read: ``target`` — ``fused-grid-sample`` (default), ``affine-grid`` (write
``custom.ops::AffineGrid`` and keep a standard sampler) or ``tensorrt`` (the TensorRT profile of
surgeon_ops.tensorrt: plugin lookup attributes, static output sizes only); ``onnxruntime`` and
``openvino`` name engines that run the default form (with surgeon_ops.ort, surgeon_ops.openvino).
"""

from __future__ import annotations

from onnx import TensorProto

from surgeon import Match, MatchContext, Node, Pattern, Refusal, RewriteContext, computing, refuse
from surgeon_ops.node_kernels import CUSTOM_OPS
from surgeon_ops.tensorrt import profile as tensorrt_profile

from .grid_ops import CUSTOM_DOMAIN, read_known_grid, written_by
from .plan import AFFINE, ENGINE_FORMS, FUSED, TARGETS, half_grid_atol, make_plan
from .recognise import GridRecogniser
from .samplers import ANCHOR_OPS, Sampler, read_sampler
from .write import Plan, Writer


class AffineGridSample(Pattern):
    name = "affine-grid-sample"
    description = ("affine_grid -> grid_sample in any spelling (native pair, dynamo decomposition, seed op, "
                   "ATen, library code), recognised by what the grid computes")
    anchor_ops = ANCHOR_OPS
    domains = {CUSTOM_DOMAIN: 1}
    ops = CUSTOM_OPS
    targets = TARGETS + tuple(ENGINE_FORMS)

    def __init__(self):
        self._recognise = GridRecogniser(self.name)  # keeps probe verdicts by region structure

    # -- match ---------------------------------------------------------------------------------

    def match(self, ctx: MatchContext, node: Node):
        target = ctx.options.get("target") or FUSED
        target = ENGINE_FORMS.get(target, target)
        if target not in TARGETS:
            return refuse(f"unknown target {target!r} (known: {', '.join(TARGETS + tuple(ENGINE_FORMS))})")
        sampler = read_sampler(ctx, node)
        if sampler is None:
            return None
        if isinstance(sampler, str):
            return refuse(sampler)
        readers = _other_readers(ctx, sampler)
        producer = ctx.producer(sampler.grid)
        if producer is not None and producer.is_op(tensorrt_profile.op_type("AffineGrid"), CUSTOM_DOMAIN):
            return None  # the TensorRT profile's grid: already this pattern's form
        written = producer is not None and read_known_grid(ctx, producer, self.name)
        kept = target == AFFINE or readers or written and written.align_corners != sampler.align_corners
        if written and written.ours and kept:
            return None  # already the form this pattern writes (rewriting it again drops its declared atol)
        native = _native_grid(ctx, producer)
        if native is not None and written_by(native, self.name):
            return None  # ONNX's own pair this pattern wrote for a type the contract lacks
        found = self._recognise(ctx, sampler)  # cut, prove, identify
        if isinstance(found, Refusal):
            return _half_first(ctx, sampler, found)
        plan = make_plan(ctx, sampler, found, target, readers)
        if isinstance(plan, Refusal):
            return plan
        if plan.native_type is not None and native is not None:
            return refuse("already ONNX's own AffineGrid + GridSample, what this pattern writes where the contract's "
                          "ops cannot hold the chain's types: nothing to gain")
        region = list(found.cut.nodes)
        kept = {id(n) for n in computing(ctx.producer, plan.reads(), region)}  # read by the rewrite: stay
        region = [n for n in region if id(n) not in kept]
        outputs = [sampler.grid]
        if plan.form == "fused" or plan.rewrite_sampler:
            region += [sampler.node] + [p for p in map(ctx.producer, sampler.constant_inputs)
                                        if p is not None and p.is_op("Constant")]
            outputs = [o for o in sampler.node.outputs if o] if plan.form == "fused" else outputs + [plan.output]
        nodes = ctx.exclusive(region, outputs)
        return Match(anchor=node, nodes=nodes, outputs=outputs, values={"plan": plan}, warnings=plan.warnings,
                     atol=plan.atol, undefined_at=plan.undefined_at, runs_at=plan.runs_at)

    # -- rewrite -------------------------------------------------------------------------------

    def rewrite(self, ctx: RewriteContext, match: Match) -> None:
        plan: Plan = match.values["plan"]
        writer = Writer(ctx, plan)
        if plan.form == "fused":
            writer.fused()
        else:
            writer.grid()


def _half_first(ctx: MatchContext, sampler: Sampler, refusal: Refusal) -> Refusal:
    """A grid held in half precision whose rounding no tolerance bounds would be refused whatever
    it computes: that hazard first, then what recognition found."""
    half = {TensorProto.FLOAT16: "half", TensorProto.BFLOAT16: "bfloat16"}.get(ctx.dtype(sampler.grid))
    hazard = half_grid_atol(ctx, sampler, half) if half else None
    return Refusal(f"{hazard}; and {refusal.reason}", kind=refusal.kind) if isinstance(hazard, str) else refusal


def _native_grid(ctx: MatchContext, producer: Node | None) -> Node | None:
    """ONNX's own AffineGrid the grid comes from, directly or through one Cast; else None."""
    if producer is not None and producer.is_op("Cast") and producer.inputs:
        producer = ctx.producer(producer.inputs[0])
    return producer if producer is not None and producer.is_op("AffineGrid") else None


def _other_readers(ctx: MatchContext, sampler: Sampler) -> list[str]:
    """Who else needs the grid itself (other grid samplers do not: each fuses on its own)."""
    others = []
    if ctx.is_graph_output(sampler.grid):
        others.append(f"graph output {sampler.grid!r}")
    for reader in ctx.consumers(sampler.grid):
        if reader is sampler.node or reader.proto is sampler.node.proto:
            continue
        other = read_sampler(ctx, reader)
        if isinstance(other, Sampler) and other.grid == sampler.grid and other.x != sampler.grid:
            continue
        others.append(reader.label)
    return others

