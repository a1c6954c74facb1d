"""Recognise a flow warp by what its grid computes, whatever ops spell it, with surgeon's
``Recogniser``: the grid is proved affine in a flow-shaped run-time value ``[N, 2, H, W]``
(nearest candidate first: RAFT's ``base + flow`` before the flow itself), then identified on
probes: at zero flow it is the identity grid, and a flow moves it by a constant scale, channel 0
along x and channel 1 along y, in normalised or input-pixel units."""

from __future__ import annotations

import numpy as np

from surgeon import NOT_MINE, Refusal, not_mine, refuse
from surgeon.recognise import Recogniser

from .kernel import base_grid, flow_scale


def _is_flow(ctx, value: str) -> bool:
    dims = ctx.shape(value)
    return dims is not None and len(dims) == 4 and dims[1] == 2


def _units(align_corners: int):
    def identify(probe) -> str | Refusal:
        n, _, h, w = probe.shape(probe.region.variable)
        flow = 4.0 * np.random.default_rng(0).standard_normal((n, 2, h, w)).astype(np.float32)
        at_zero = probe(np.zeros_like(flow)).astype(np.float64)
        tol = 1e-5 * (1 + np.abs(at_zero).max())
        if at_zero.shape != (n, h, w, 2) or not np.allclose(at_zero, base_grid(h, w, bool(align_corners)), atol=tol):
            other = at_zero.shape == (n, h, w, 2) and np.allclose(at_zero, base_grid(h, w, not align_corners), atol=tol)
            if other:
                return refuse(f"the base grid is the align_corners={1 - align_corners} identity grid but the "
                              f"sampler has align_corners={align_corners}; FlowWarp has one flag for both")
            return not_mine("not a flow warp: at zero flow the grid is not an identity grid")
        delta, offset = probe(flow).astype(np.float64) - at_zero, np.moveaxis(flow.astype(np.float64), 1, -1)
        scale = (delta * offset).sum(axis=(0, 1, 2)) / (offset * offset).sum(axis=(0, 1, 2))
        if not np.allclose(delta, offset * scale, atol=10 * tol):
            return not_mine("the grid is not the base plus a scaled flow")
        for units in ("normalized", "pixels"):
            if np.allclose(scale, flow_scale(units, probe.shape_of("image")[2:], bool(align_corners)), rtol=1e-4):
                return units
        return refuse(f"the flow is scaled by ({scale[0]:.6g}, {scale[1]:.6g}): neither normalised nor input-pixel units")
    return identify


# A grid the recogniser cannot prove affine in a flow is another chain, not a flow warp it refuses.
RECOGNISERS = {ac: Recogniser(_is_flow, _units(ac), family="affine", unproved=NOT_MINE) for ac in (0, 1)}


def recognise(ctx, sampler, align_corners: int):
    """``Recognised`` (its ``region.variable`` is the flow, ``verdict`` the units) or a Refusal: a near
    miss for a flow warp FlowWarp cannot take, not mine for any other grid."""
    return RECOGNISERS[align_corners](ctx, sampler.inputs[1], image=sampler.inputs[0])
