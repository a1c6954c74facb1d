"""validate/: everything validation decides and draws. ``validate`` (``check.py``) runs the
original and the rewritten model on the same inputs and holds each rewrite, and the outputs end
to end, to a tolerance exact float math allows: where the rewritten graph differs
(``regions.py``, ``written.py``), the original's side of each rewrite (``originals.py``), the
inputs a plugin wants drawn its own way (``draws.py``) and the scale draws (``scaled.py``,
``magnitudes.py``, ``alike.py``, ``dependence.py``), the comparison (``compare.py``,
``tolerance.py``), the rounding probe that explains what is outside (``rounding.py``,
``ulps.py``, ``discontinuous.py``, ``explain.py``), the report and its pictures.

May import: ``runtime/`` (to run models), ``rewrite/`` (the plugin set; node counts),
``io/``, ``graph/``, ``visual/`` (the verdict table, ``to_html``) and the top-level helpers;
nothing imports it but ``api``, ``cli/``, ``lint/openvino`` (the draws) and ``surgeon``.

``surgeon.validate`` is the function (``surgeon/__init__.py`` binds it over this package's
name): import this package's modules by their path, ``from surgeon.validate import compare``.
"""

from .check import validate
from .report import ValidationReport

__all__ = ["validate", "ValidationReport"]
