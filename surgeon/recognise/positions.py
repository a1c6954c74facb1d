"""How fast a value can grow with an element's position and the dims: its order of growth, the
degree of its numerator less that of its denominator as a rational function of positions and
dims (a Range's element and a dim grow as 1; ``(2 i + 1) / W - 1``, a normalised coordinate, as
0). A sum grows as its fastest term, a product as the sum of its factors', a quotient as the
difference, a power as its exponent times its base's, a ReduceProd or a CumSum faster still.

The proof shows each value built from the dims and positions by smooth arithmetic, and
identification holds it to a form at the sizes it tries, within rounding. A term that grows as a
square or faster can stay under the tolerance at every size tried and be anything past them
(``1e-38 * i^15``; ``ReduceProd((i - Range(0, 1000)) / 1000)``, 0 below 1,000): an affine grid's
values grow as 0, so the proof refuses such a term, naming the op. A value the proof knows
element by element (a homogeneous row proved (0, 0, 1)) is a constant whatever computes it.
"""

from __future__ import annotations

import numpy as np

_PRODUCTS = frozenset({"Mul", "MatMul", "Einsum"})
TOO_FAST = 2  # an order of growth the proof refuses


def growth(node, ins: list[tuple[int, str | None]], vals, sizing=(), counted: bool = True) -> tuple[int, str | None]:
    """(order of growth, the op that made it TOO_FAST or more) of ``node``'s outputs, from its
    inputs' (absent inputs and those in ``sizing``, which only set lengths, count 0);
    ``counted``: a sum's count of terms follows the dims (its axis is as long as one)."""
    orders = [g if i not in sizing else 0 for i, (g, _) in enumerate(ins)]
    made = next((why for i, (g, why) in enumerate(ins) if why and i not in sizing), None)
    first = orders[0] if orders else 0
    op = node.op_type
    if op in ("Shape", "Size"):
        found = 1  # a dim
    elif op == "Range":  # start + k * delta
        found = max(first, 1 + (orders[2] if len(orders) > 2 else 0))
    elif op in ("CumSum", "ReduceSum"):
        found = first + 1 if counted and first >= 0 else first  # a sum of as many terms as a dim
    elif op in _PRODUCTS:
        found = sum(orders)
    elif op == "Gemm":
        found = max(sum(orders[:2]), orders[2] if len(orders) > 2 else 0)
    elif op == "Div":
        found = first - (orders[1] if len(orders) > 1 else 0)
    elif op == "Reciprocal":
        found = -first
    elif op == "Pow":
        found = _power(orders, vals)
    elif op == "ReduceProd":
        found = TOO_FAST * first if first > 0 else first  # a product of as many factors as a dim
    else:
        found = max(orders, default=0)
    if found >= TOO_FAST and made is None:
        made = node.label
    return found, made if found >= TOO_FAST else None


def _power(orders, vals) -> int:
    base = orders[0] if orders else 0
    if len(orders) > 1 and orders[1] > 0:
        return TOO_FAST  # a position or a dim in the exponent: no rational function at all
    exponent = np.asarray(vals[1]) if len(vals) > 1 and vals[1] is not None else None
    if base == 0 or exponent is None or exponent.size == 0 or not np.all(np.isfinite(exponent)):
        return base if base <= 0 else TOO_FAST
    e = exponent.astype(np.float64)
    return int(np.ceil(base * (e.max() if base > 0 else e.min())))
