"""Step 3b, identify for every size: is the identified affine grid what the region computes, by
algebra rather than at the sizes the probes tried?

The region's generic element (``surgeon.recognise.symbolic``: dims, positions and theta's
elements as symbols, every constant exact) is compared with ``affine_grid(theta')`` built from
the verdict (theta as fed, its map, or the fitted theta, each coefficient the monomials of the
dims that identification fitted), as rational functions. A term the verdict lacks is refused,
however small at the probes' sizes (``1e-8 * x`` is 0.01 at a million columns); coefficients
may differ by rounding (``RTOL`` of their terms' magnitudes). A region with an op this has no
exact rule for keeps what the probes found (``Verdict.exact`` says which).

Decides: a ``Refusal`` naming the term, or nothing (the verdict stands).
"""

from __future__ import annotations

import sympy

from surgeon import Refusal
from surgeon.recognise import (NotExact, Ratio, Sym, coefficients, differs, evaluate_exactly, integers, mapped,
                               region_leaves, to_ratio, where, without_noise)

from .grid_ops import CUSTOM_DOMAIN
from .verify import GRID_TOLERANCES

# A coefficient's rounding, relative to the magnitude of its terms: identification's fits are
# held to the grid's own tolerance at the probes, so these only keep fitted weights' noise.
RTOL = {"double": 1e-9, "single": 1e-5, "half": 5e-3, "bfloat16": 3e-2}


def exact_refusal(ctx, cut, symbols, dims, values: dict, verdict, layout) -> Refusal | None:
    """None when the grid equals the verdict's for every size, or when no exact rule covers the
    region (then ``verdict.exact`` names the step); else the refusal naming the term."""
    rtol = RTOL.get(verdict.precision, RTOL["single"])
    atol = GRID_TOLERANCES.get(verdict.precision, GRID_TOLERANCES["single"])[0]

    def off(evaluation, element):
        """Where the verdict's grid leaves the region's (``differs``), with the coordinate."""
        theta = _theta(evaluation, element, cut, verdict, layout, dims)
        spatial, positions = element.shape[1:1 + verdict.k], element.positions[1:1 + verdict.k]
        for tail, value in element.values.items():
            target = grid_element(theta[tail[-1]].__getitem__, spatial, positions, verdict.align_corners)
            found = differs(value, target, rtol, evaluation.domain(value.symbols() | target.symbols()), atol)
            if found:
                return found, tail[-1]
        return None

    def compare(evaluation, element):
        found = off(evaluation, element)
        if found and verdict.theta_scaling is not None:  # fitted weights that are noise go, if that does it
            kept, verdict.theta_scaling = verdict.theta_scaling, without_noise(verdict.theta_scaling, rtol)
            if off(evaluation, element) is None:
                found = None
            else:
                verdict.theta_scaling = kept
        if found:
            return Refusal(f"the grid is not affine_grid at every size: by its exact expression, coordinate "
                           f"{found[1]}'s {where(found[0], symbols, 'theta')}, where the probes' sizes hid it")
        verdict.exact = "proved"
        return None

    try:
        return evaluate_exactly(ctx, cut.nodes, values, lambda ev: region_leaves(cut, symbols, dims, values, ev),
                                cut.output, RULES, compare)
    except NotExact as exc:
        verdict.exact = f"fitted at the probes' sizes ({exc})"
        return None


def _theta(evaluation, element, cut, verdict, layout, dims) -> list[list[Ratio]]:
    """theta' [k][k+1] the rewrite computes, for the item the element's first position names."""
    k = verdict.k
    scaled = coefficients(verdict.theta_scaling, dims) if verdict.theta_scaling is not None else None
    if verdict.theta_value is not None:
        if verdict.theta_value.shape[0] != 1:
            raise NotExact("a fitted theta per item")
        flat = scaled or [Ratio.const(float(x)) for x in verdict.theta_value[0].reshape(-1)]
    else:
        item = element.positions[0] if element.positions else sympy.Integer(0)
        variable = evaluation.sym(cut.variable)
        fed = [variable.at((item, sympy.Integer(m)) if layout.flat else
                           (item, sympy.Integer(m // layout.cols), sympy.Integer(m % layout.cols)))
               for m in range(layout.rows * layout.cols)]
        if verdict.theta_map is None:
            return [fed[r * layout.cols:r * layout.cols + k + 1] for r in range(k)]
        found = verdict.theta_map
        flat = mapped(fed, scaled or [Ratio.const(float(x)) for x in [*found.weight.reshape(-1), *found.bias]])
    return [flat[r * (k + 1):(r + 1) * (k + 1)] for r in range(k)]


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


def _affine_grid(ev, node, ins):
    """A grid op in the region (ONNX's AffineGrid, the contract's): its element exactly."""
    theta = ins[0]
    if len(ins) > 1 and ins[1] is not None:
        spatial = tuple(integers(ins[1])[2:])
    elif node.attr("output_size"):
        spatial = tuple(sympy.Integer(int(s)) for s in node.attr("output_size"))[2:]
    else:
        raise NotExact(f"{node.label}: a grid op without a size")
    ac, k = int(node.attr("align_corners", 0) or 0), len(spatial)

    def at(index):
        return grid_element(lambda j: theta.at((index[0], index[-1], sympy.Integer(j))), spatial, index[1:1 + k], ac)

    return [Sym((theta.shape[0], *spatial, sympy.Integer(k)), at)]


RULES = {("", "AffineGrid"): _affine_grid, (CUSTOM_DOMAIN, "AffineGrid"): _affine_grid}
