"""The ``flow-warp`` pattern: dense flow warping -> ``custom.ops::FlowWarp(X, flow)``.

Two ways in. The template is the plain spelling both torch exporters write for
``grid_sample(x, base + flow.permute(0, 2, 3, 1))`` with a constant base; it is cheap and
exact. Anything else (a base computed at run time, pixel-unit flows normalised per channel,
RAFT's add-before-permute) goes to ``recognise``, which proves the grid affine in the flow and
identifies it on probes (surgeon's ``Recogniser``) instead of reading its ops.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from surgeon import Const, CustomOp, Match, Pattern, Refusal, match_template

from .kernel import MODES, PADDING_MODES, base_grid, flow_warp_kernel, torch_mode
from .recognise import recognise

DOMAIN = "custom.ops"


class FlowWarp(Pattern):
    """grid_sample(X, identity grid + flow) -> custom.ops::FlowWarp(X, flow)."""

    name = "flow-warp"
    description = "grid_sample(x, base_grid + flow.permute(0,2,3,1)) -> custom.ops::FlowWarp"
    anchor_ops = ("GridSample",)
    domains = {DOMAIN: 1}
    ops = [CustomOp(DOMAIN, "FlowWarp", kernel=flow_warp_kernel)]

    @staticmethod
    def template(op, x, flow, base=Const()):
        grid = op.Add(base, op.Transpose(flow, perm=[0, 2, 3, 1]))
        return op.GridSample(x, grid, _name="sampler")

    def match(self, ctx, node):
        align_corners = int(node.attr("align_corners", 0))
        found = match_template(self, ctx, node)
        if found is not None and self._is_identity(ctx.constant(found.values["base"]), align_corners):
            found.values["units"] = "normalized"
            return found
        found = recognise(ctx, node, align_corners)
        if isinstance(found, Refusal):
            return found  # a near miss is reported; "not mine" (another grid) is not
        nodes = ctx.exclusive(found.region.nodes + [node], list(node.outputs))
        return Match(anchor=node, nodes=nodes, values={"x": node.inputs[0], "flow": found.region.variable,
                                                       "sampler": node, "units": found.verdict})

    @staticmethod
    def _is_identity(base: np.ndarray, align_corners: int) -> bool:
        if base is None or base.ndim not in (3, 4) or base.shape[-1] != 2 or (base.ndim == 4 and base.shape[0] != 1):
            return False
        h, w = base.shape[-3:-1]
        return bool(np.allclose(base.reshape(h, w, 2), base_grid(h, w, bool(align_corners)), atol=1e-5, rtol=0))

    def check(self, ctx, match):
        sampler = match.values["sampler"]
        mode = torch_mode(sampler.attr("mode", "bilinear"))
        if mode not in MODES:
            return f"mode {mode!r} is not one FlowWarp implements"
        if sampler.attr("padding_mode", "zeros") not in PADDING_MODES:
            return f"padding_mode {sampler.attr('padding_mode')!r} is not one FlowWarp implements"
        if ctx.dtype(match.values["x"]) not in (None, TensorProto.FLOAT, TensorProto.FLOAT16):
            return "FlowWarp takes float32 or float16 images"
        return None

    @staticmethod
    def replacement(op, x, flow, sampler, units):
        # The output keeps the type and shape the model gave the sampler's output.
        return op.FlowWarp(x, flow, align_corners=int(sampler.attr("align_corners", 0)),
                           mode=torch_mode(sampler.attr("mode", "bilinear")), padding_mode=sampler.attr("padding_mode", "zeros"),
                           flow_units=units, _domain=DOMAIN)
