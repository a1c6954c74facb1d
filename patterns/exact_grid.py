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
from surgeon.recognise import (NotExact, Ratio, coefficients, differs, evaluate_exactly, mapped, region_leaves, where,
                               without_noise)
from surgeon_ops.grid_rules import EXACT_RULES, grid_element

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
        held = ", ".join(f"{k} = {v}" for k, v in evaluation.assumed.items())
        verdict.exact = f"proved where {held} (the original runs only there)" if held else "proved"
        return None

    try:
        return evaluate_exactly(ctx, cut.nodes, values, lambda ev: region_leaves(cut, symbols, dims, values, ev),
                                cut.output, EXACT_RULES, compare)
    except NotExact as exc:
        verdict.exact = f"fitted at the probes' sizes ({exc})"
        return None


def _theta(evaluation, element, cut, verdict, layout, dims) -> list[list[Ratio]]:
    """theta' [k][k+1] the rewrite computes, for the item the element's first position names."""
    k = verdict.k
    scaled = coefficients(verdict.theta_scaling, dims, evaluation.assumed) if verdict.theta_scaling is not None else None
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
