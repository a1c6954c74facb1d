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

from dataclasses import replace

import numpy as np
import sympy

from surgeon import Refusal
from surgeon.recognise import (NotExact, Poly, Ratio, Sym, differs, dim_of, evaluate_exactly, integers, region_leaves,
                               to_ratio)

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
        """Where the verdict's grid leaves the region's, as ``differs`` says, with the coordinate."""
        theta = _theta(evaluation, element, cut, verdict, layout, dims)
        target = _grid(theta, element, verdict)
        for tail, value in element.values.items():
            names = value.symbols() | target[tail].symbols()
            found = differs(value, target[tail], rtol, evaluation.domain(names), atol)
            if found:
                return found, tail[-1]
        return None

    def compare(evaluation, element):
        found = off(evaluation, element)
        if found and verdict.theta_scaling is not None:
            found = _pruned(verdict, lambda: off(evaluation, element), rtol) and found
        if found:
            return Refusal(_described(*found, symbols))
        verdict.exact = "proved"
        return None

    try:
        return evaluate_exactly(ctx, cut.nodes, values, lambda ev: region_leaves(cut, symbols, dims, values, ev),
                                cut.output, RULES, compare)
    except NotExact as exc:
        verdict.exact = f"fitted at the probes' sizes ({exc})"
        return None


def _pruned(verdict, off, rtol: float) -> bool:
    """Drop fitted weights that are noise: a weight fitted to float32 samples may hold a term
    like 4e-9 * W / H, unseen at the probes' sizes and 1e-4 at 65,536 columns. Every weight
    under ``rtol`` of its coefficient's largest goes; the verdict keeps the pruned scaling when
    that makes the grid equal (False), else its own (True: still off)."""
    scaling = verdict.theta_scaling
    top = np.abs(scaling.weights).max(axis=0, keepdims=True)
    weights = np.where(np.abs(scaling.weights) <= rtol * top, 0.0, scaling.weights)
    verdict.theta_scaling = replace(scaling, weights=weights)
    if off() is None:
        return False
    verdict.theta_scaling = scaling
    return True


def _theta(evaluation, element, cut, verdict, layout, dims) -> list[list[Ratio]]:
    """theta' [k][k+1] the rewrite computes, for the item the element's first position names."""
    k = verdict.k
    item = element.positions[0] if element.positions else sympy.Integer(0)
    coefficients = _coefficients(verdict, dims)
    if verdict.theta_value is not None:
        if verdict.theta_value.shape[0] != 1:
            raise NotExact("a fitted theta per item")
        flat = coefficients if coefficients is not None else \
            [Ratio.const(float(x)) for x in verdict.theta_value[0].reshape(-1)]
        return [flat[r * (k + 1):(r + 1) * (k + 1)] for r in range(k)]
    variable = evaluation.sym(cut.variable)

    def fed(m: int) -> Ratio:
        r, c = divmod(m, layout.cols)
        index = (item, sympy.Integer(m)) if layout.flat else (item, sympy.Integer(r), sympy.Integer(c))
        return variable.at(index)

    if verdict.theta_map is None:
        return [[fed(r * layout.cols + c) for c in range(k + 1)] for r in range(k)]
    weight = verdict.theta_map.weight
    p, q = weight.shape
    if coefficients is None:
        coefficients = [Ratio.const(float(x)) for x in [*weight.reshape(-1), *verdict.theta_map.bias.reshape(-1)]]
    sources = [fed(m) for m in range(p)]
    flat = []
    for i in range(q):
        total = coefficients[p * q + i]
        for m in range(p):
            w = coefficients[m * q + i]
            if w.number() != 0.0:
                total = total + sources[m] * w
        flat.append(total)
    return [flat[r * (k + 1):(r + 1) * (k + 1)] for r in range(k)]


def _coefficients(verdict, dims) -> list[Ratio] | None:
    """Each coefficient the dims scale (``DimScaling``), as the rational function it was fitted as."""
    scaling = verdict.theta_scaling
    if scaling is None:
        return None
    monomials = []
    for row in scaling.rows:
        term = Ratio.const(1.0)
        for rep, (e, f) in zip(scaling.reps, row):
            d = to_ratio(dim_of(dims, rep)).num
            for factor, power in ((d, e), (d - Poly.const(1.0), f)):
                for _ in range(abs(power)):
                    term = term * Ratio.of(factor) if power > 0 else term / Ratio.of(factor)
        monomials.append(term)
    out = []
    for i in range(scaling.weights.shape[1]):
        total = Ratio.const(0.0)
        for r, monomial in enumerate(monomials):
            w = float(scaling.weights[r, i])
            if w != 0.0:
                total = total + monomial * Ratio.const(w)
        out.append(total)
    return out


def coordinate(extent, position, align_corners: int) -> Ratio:
    """The normalised coordinate of ``position`` along an axis of ``extent`` (sympy integers)."""
    if extent == 1:
        if align_corners:
            raise NotExact("a size-1 dim with align_corners=1 (its coordinate is a convention)")
        return Ratio.const(0.0)
    if align_corners:
        return Ratio(to_ratio(2 * position - extent + 1).num, to_ratio(extent - 1).num).tidy()
    return Ratio(to_ratio(2 * position + 1 - extent).num, to_ratio(extent).num).tidy()


def _grid(theta, element, verdict) -> dict:
    """affine_grid(theta') at the element's position: channel c = sum_j theta'[c][j] coord_j +
    theta'[c][k], coord_0 along the last spatial axis (x)."""
    k = verdict.k
    spatial, positions = element.shape[1:1 + k], element.positions[1:1 + k]
    if len(spatial) != k or len(positions) != k:
        raise NotExact("a grid whose spatial axes are not the leading ones")
    coords = [coordinate(spatial[k - 1 - j], positions[k - 1 - j], verdict.align_corners) for j in range(k)]
    out = {}
    for c in range(k):
        total = theta[c][k]
        for j in range(k):
            total = total + theta[c][j] * coords[j]
        out[(c,)] = total
    return out


def _described(found, coordinate_index: int, symbols) -> str:
    """The refusal: where the exact grid leaves affine_grid, and by how much."""
    free, error, size, point = found
    theta = _named(free, symbols).lstrip(" *") or "the constant part"
    at = ", ".join(f"{_named(((s, 1),), symbols).lstrip(' *')}={int(v)}" for s, v in sorted(point.items()))
    return (f"the grid is not affine_grid at every size: by its exact expression, coordinate {coordinate_index}'s "
            f"term in {theta} is off by {abs(error):.3g} (of {size:.3g}) at {at}, where the probes' sizes hid it")


def _named(monomial, symbols) -> str:
    parts = []
    for name, power in monomial:
        if name.startswith("d"):
            label = symbols.name(int(name[1:]))
        elif name.startswith("p"):
            label = f"position[{name[1:]}]"
        else:
            label = f"theta[{name[1:]}]"
        parts.append(f" * {label}" + (f"^{power}" if power != 1 else ""))
    return "".join(parts)


def _affine_grid(ev, node, ins):
    """A grid op in the region (ONNX's AffineGrid, the contract's, ATen's): its element exactly."""
    theta = ins[0]
    if len(ins) > 1 and ins[1] is not None:
        spatial = tuple(integers(ins[1])[2:])
    elif node.attr("output_size"):
        spatial = tuple(sympy.Integer(int(s)) for s in node.attr("output_size"))[2:]
    else:
        raise NotExact(f"{node.label}: a grid op without a size")
    ac = int(node.attr("align_corners", 0) or 0)
    k = len(spatial)
    def at(index):
        item, positions, c = index[0], index[1:1 + k], index[-1]
        coords = [coordinate(spatial[k - 1 - j], positions[k - 1 - j], ac) for j in range(k)]
        total = theta.at((item, c, sympy.Integer(k)))
        for j in range(k):
            total = total + theta.at((item, c, sympy.Integer(j))) * coords[j]
        return total

    return [Sym((theta.shape[0], *spatial, sympy.Integer(k)), at)]


RULES = {("", "AffineGrid"): _affine_grid, (CUSTOM_DOMAIN, "AffineGrid"): _affine_grid}
