"""Standard nodes written for an older default-domain opset where onnx.version_converter cannot
step them down: it has no adapter (ConstantOfShape from 20, GlobalMaxPool from 22, GridSample
from 20, LpPool, Pad and Split from 18), or the node uses what only the newer version has.

``hide(proto, target)`` checks every default-domain node against the target's schemas (the op
exists there, its types are allowed there) and replaces each node an op here lowers by a
placeholder the converter leaves alone; ``restore`` puts the lowered nodes in their place once
the converter has run. A node that cannot be written at the target is an error naming it.
``LOWERINGS`` is what a test holds against the converter's adapters, version by version.

May import: ``graph/``, ``rewrite/`` (shapes), ``errors``.
"""

from __future__ import annotations

from .grid_sample import sample_by_gathers
from .hiding import Hidden, hide, restore
from .registry import LOWERINGS

__all__ = ["LOWERINGS", "Hidden", "hide", "restore", "sample_by_gathers"]
