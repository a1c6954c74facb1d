"""Step 2, prove: is the grid, from the ops, affine in theta (or, with no theta, a function of
the dims alone), and which theta elements does it read? The engine's proof
(``surgeon.recognise.affine_proof``), with a rule for each grid op onnxruntime cannot run: each
grid element is row ``i`` of its item's theta times shape-derived coordinates.

Decides, before any probe theta is compared: an ``AffineProof`` (the theta elements read), or a
``Refusal`` naming the op on theta's path with no affine rule, the branch on sizes, the integer
input used as data, or the value_info the evaluated region contradicts.
"""

from __future__ import annotations

import numpy as np

from surgeon import Refusal
from surgeon.recognise import (AFFINE, AT_LEAST_ONE, DIMS, KNOWN, Abstract, AffineProof, NotProved, Region, branch_of,
                               mark_branch, prove_affine)

from .cut import theta_layout
from .grid_ops import CUSTOM_DOMAIN


def _grid_rule(theta_index: int, size_index: int | None):
    def rule(node, ins, vals, outs):
        theta, out = ins[theta_index], np.asarray(outs[0])
        if size_index is not None and size_index < len(ins) and ins[size_index] is not None \
                and ins[size_index].top() >= AFFINE:
            raise NotProved(f"{node.label}: its size depends on theta")
        static = size_index is None or size_index >= len(ins) or ins[size_index] is None \
            or ins[size_index].top() == KNOWN
        k = out.shape[-1]
        rows_kind = theta.kind[:, :k, :].max(axis=2)  # [N, k]
        rows_reads = np.bitwise_or.reduce(theta.reads[:, :k, :], axis=2)
        if not static:
            rows_kind = np.maximum(rows_kind, DIMS)  # the coordinates follow the size
        shape = (out.shape[0],) + (1,) * (out.ndim - 2) + (k,)
        place = lambda x: np.broadcast_to(np.broadcast_to(x, (out.shape[0], k)).reshape(shape), out.shape).copy()
        inf = np.full(out.shape, np.inf)
        result = Abstract(place(rows_kind).astype(np.int8), place(rows_reads).astype(np.uint32), -inf, inf,
                          theta.why, theta.data)
        size = ins[size_index] if size_index is not None and size_index < len(ins) else None
        if size is not None and size.sym is not None and size.kind.size == out.ndim:
            syms = [int(v) for v in size.syms().reshape(-1)]
            result.axes = (syms[0], *syms[2:], -1)
            result.branch = size.branch
        # A size computed any way at all (a floor division, a branch) only sets the grid's extent:
        # the rewrite reads the same size tensor (a Computed dim), so its extent is the original's.
        source = branch_of([theta])
        if source:
            result = mark_branch(result, np.ones(out.shape, bool), source)
        return [result]
    if size_index is not None:
        rule.sizing = (size_index,)  # the size only sets the grid's extent
    return rule


GRID_RULES = {("", "AffineGrid"): _grid_rule(0, 1), (CUSTOM_DOMAIN, "AffineGrid"): _grid_rule(0, 1)}


def _aten(node, ins, vals, outs):
    if node.attr("operator") == "affine_grid_generator":
        return _grid_rule(0, 1)(node, ins, vals, outs)
    raise NotProved(f"{node.label}: no rule for ATen operator {node.attr('operator')!r}")


for _domain in ("", "org.pytorch.aten", "com.microsoft"):
    GRID_RULES[(_domain, "ATen")] = _aten


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
    return prove_affine(ctx, cut, symbols, feeds, group_of, values, bounds, GRID_RULES, item, kept, "grid", "theta")


def unread(reads: int, rows: int, cols: int, k: int) -> list[tuple[int, int]]:
    """The (row, column) elements of theta's first ``k`` rows the grid never reads."""
    return [(i, j) for i in range(k) for j in range(cols) if not reads >> (i * cols + j) & 1]
