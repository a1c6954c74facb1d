"""How the engine's two readings of a region see the grid ops (``custom.ops::AffineGrid``,
ONNX's ``AffineGrid``, the ATen fallback ``affine_grid_generator``), for patterns that meet them.

``PROOF_RULES``: for the affine proof (``surgeon.recognise.prove_affine``), each grid element is
row ``i`` of its item's theta times coordinates that follow the size. ``EXACT_RULES``: for the
exact evaluation (``surgeon.recognise.evaluate_exactly``), each element as a rational function of
theta's elements, the size and the position (torch's coordinates; ``grid_element``).
"""

from __future__ import annotations

import numpy as np
import sympy

from surgeon.recognise import (AFFINE, DIMS, KNOWN, Abstract, NotExact, NotProved, Ratio, Sym, branch_of, integers,
                               mark_branch, to_ratio)

from .function_bodies import DOMAIN


def _proof_rule(theta_index: int, size_index: int | None):
    def rule(node, ins, vals, outs):
        theta, out = ins[theta_index], np.asarray(outs[0])
        size = ins[size_index] if size_index is not None and size_index < len(ins) else None
        if size is not None and size.top() >= AFFINE:
            raise NotProved(f"{node.label}: its size depends on theta")
        k = out.shape[-1]
        rows_kind = theta.kind[:, :k, :].max(axis=2)  # [N, k]
        rows_reads = np.bitwise_or.reduce(theta.reads[:, :k, :], axis=2)
        if size is not None and size.top() != KNOWN:
            rows_kind = np.maximum(rows_kind, DIMS)  # the coordinates follow the size
        shape = (out.shape[0],) + (1,) * (out.ndim - 2) + (k,)
        place = lambda x: np.broadcast_to(np.broadcast_to(x, (out.shape[0], k)).reshape(shape), out.shape).copy()
        inf = np.full(out.shape, np.inf)
        result = Abstract(place(rows_kind).astype(np.int8), place(rows_reads).astype(np.uint32), -inf, inf,
                          theta.why, theta.data)
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


def _aten_proof(node, ins, vals, outs):
    if node.attr("operator") == "affine_grid_generator":
        return _proof_rule(0, 1)(node, ins, vals, outs)
    raise NotProved(f"{node.label}: no rule for ATen operator {node.attr('operator')!r}")


PROOF_RULES = {("", "AffineGrid"): _proof_rule(0, 1), (DOMAIN, "AffineGrid"): _proof_rule(0, 1),
               **{(domain, "ATen"): _aten_proof for domain in ("", "org.pytorch.aten", "com.microsoft")}}


def coordinate(extent, position, align_corners: int) -> Ratio:
    """The normalised coordinate of ``position`` along an axis of ``extent`` (sympy integers)."""
    if extent == 1:
        if align_corners:
            raise NotExact("a size-1 dim with align_corners=1 (its coordinate is a convention)")
        return Ratio.const(0.0)
    if align_corners:
        return Ratio(to_ratio(2 * position - extent + 1).num, to_ratio(extent - 1).num).tidy()
    return Ratio(to_ratio(2 * position + 1 - extent).num, to_ratio(extent).num).tidy()


def grid_element(row, spatial, positions, align_corners: int) -> Ratio:
    """One coordinate of affine_grid at ``positions``: sum_j row(j) coord_j + row(k), ``row(j)``
    theta's element in that coordinate's row, coord_0 along the last spatial axis (x)."""
    k = len(spatial)
    if len(positions) != k:
        raise NotExact("a grid whose spatial axes are not the leading ones")
    total = row(k)
    for j in range(k):
        total = total + row(j) * coordinate(spatial[k - 1 - j], positions[k - 1 - j], align_corners)
    return total


def _affine_grid_exact(ev, node, ins):
    theta = ins[0]
    if len(ins) > 1 and ins[1] is not None:
        spatial = tuple(integers(ins[1])[2:])
    elif node.attr("output_size"):
        spatial = tuple(sympy.Integer(int(s)) for s in node.attr("output_size"))[2:]
    else:
        raise NotExact(f"{node.label}: a grid op without a size")
    if node.op_type == "ATen":  # affine_grid_generator(theta, size, align_corners): the flag is an input
        if node.attr("operator") != "affine_grid_generator" or len(ins) < 3 or ins[2] is None:
            raise NotExact(f"{node.label}: no exact rule for ATen operator {node.attr('operator')!r}")
        ac = int(integers(ins[2])[0] != 0)
    else:
        ac = int(node.attr("align_corners", 0) or 0)
    k = len(spatial)

    def at(index):
        return grid_element(lambda j: theta.at((index[0], index[-1], sympy.Integer(j))), spatial, index[1:1 + k], ac)

    return [Sym((theta.shape[0], *spatial, sympy.Integer(k)), at)]


EXACT_RULES = {("", "AffineGrid"): _affine_grid_exact, (DOMAIN, "AffineGrid"): _affine_grid_exact,
               **{(domain, "ATen"): _affine_grid_exact for domain in ("", "org.pytorch.aten", "com.microsoft")}}
