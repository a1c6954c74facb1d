"""Built-in pattern plugins: the affine_grid -> grid_sample family.

``PATTERNS`` is what the ``surgeon.patterns`` entry point ``affine-grid`` names.
"""

from .affine_grid_sample import AffineGridSample

PATTERNS: list = [AffineGridSample]

__all__ = ["PATTERNS", "AffineGridSample"]
