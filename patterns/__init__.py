"""Built-in pattern plugins: the affine_grid -> grid_sample family."""

PATTERNS: list = []
