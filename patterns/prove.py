"""Step 2, prove: is the grid, from the ops, affine in theta (or, with no theta, a function of
the dims alone), and which theta elements does it read? The engine's proof
(``surgeon.recognise.affine_proof``), with the grid ops' rules (``surgeon_ops.grid_rules``: each grid
element is row ``i`` of its item's theta times coordinates that follow the size).

Decides, before any probe theta is compared: an ``AffineProof`` (the theta elements read), or a
``Refusal`` naming the op on theta's path with no affine rule, the branch on sizes, the integer
input used as data, or the value_info the evaluated region contradicts.
"""

from __future__ import annotations

from surgeon import Refusal
from surgeon.recognise import AT_LEAST_ONE, AffineProof, Region, prove_affine
from surgeon_ops.grid_rules import PROOF_RULES

from .cut import theta_layout


def prove_grid(ctx, cut: Region, symbols, feeds: dict, fixed: bool, group_of, values: dict | None = None,
               bounds=lambda group: AT_LEAST_ONE) -> AffineProof | Refusal:
    """The engine's proof (``surgeon.recognise.prove_affine``) with the grid ops' rules, at one set
    of dims; ``fixed``: no theta is fed."""
    item = None
    if cut.variable is not None and not fixed:
        layout = theta_layout(symbols.owners[cut.variable])
        item = layout.rows * layout.cols
    # The grid is a grid op's output whose extent is its size tensor: computed however it is (a
    # floor division, a branch), the rewrite reads that same tensor (every spatial dim Computed:
    # ``min(W, 64)`` is W at every probe, and past them it is not).
    kept = any(k.size and k.node.outputs[0] == cut.output for k in cut.computed)
    return prove_affine(ctx, cut, symbols, feeds, group_of, values, bounds, PROOF_RULES, item, kept, "grid", "theta")


def unread(reads: int, rows: int, cols: int, k: int) -> list[tuple[int, int]]:
    """The (row, column) elements of theta's first ``k`` rows the grid never reads."""
    return [(i, j) for i in range(k) for j in range(cols) if not reads >> (i * cols + j) & 1]
