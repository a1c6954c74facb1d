"""surgeon-flowwarp: an example third-party pattern plugin for surgeon.

It rewrites dense flow warping (``grid_sample`` on an identity grid plus a flow field) into
``custom.ops::FlowWarp(X, flow)`` and brings the op's numpy reference kernel. surgeon finds it
through the ``surgeon.patterns`` entry point declared in pyproject.toml.
"""

from .kernel import flow_warp, flow_warp_kernel
from .pattern import FlowWarp

__version__ = "0.1.0"
PATTERNS = [FlowWarp]

__all__ = ["FlowWarp", "PATTERNS", "flow_warp", "flow_warp_kernel"]
