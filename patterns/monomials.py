"""Writing coefficients that follow the dims (``surgeon.recognise.scaling``): each coefficient fitted at the
probe's dims, divided by its monomial there, times the same monomial of the model's own dims at
run time: ``[1, 2/W, H/W, 2/(W - 1) ...]`` made of Shape, Gather, Cast, Sub, Mul and Div."""

from __future__ import annotations

import numpy as np
from onnx import helper

from surgeon.recognise import DimScaling


def scaled_coefficients(writer, coefficients: np.ndarray, scaling: DimScaling, pieces: list, elem: int,
                        select: np.ndarray, hint: str) -> str:
    """A 1-D tensor of ``elem``: ``coefficients[select]`` at the run-time dims. ``pieces``: per
    rep of ``scaling``, where its dim is read (a DimOf or ElemOf)."""
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    at_base = (coefficients.reshape(-1) / scaling.at_base())[select]
    n = len(select)
    dims = [writer._node("Cast", [writer._pieces([piece], f"{hint}_dim")], f"{hint}_dim", elem, [1], to=elem)
            for piece in pieces]
    terms = []
    for row, mask in scaling.monomials().items():
        chosen = mask[select]
        if not chosen.any():
            continue
        picked = writer.ctx.add_constant(np.where(chosen, at_base, 0).astype(dtype), f"{hint}_coefficients")
        value = _monomial(writer, row, dims, elem, hint)
        terms.append(picked if value is None else writer._node("Mul", [picked, value], hint, elem, [n]))
    if len(terms) == 1:
        return terms[0]
    return writer._node("Sum", terms, hint, elem, [n])


def _monomial(writer, row: tuple, dims: list[str], elem: int, hint: str) -> str | None:
    """prod(d ** e * (d - 1) ** f) over the groups' (e, f) as a [1] tensor (None for the empty
    product): multiplied first, then divided, as the exporters' ``2 / W`` and ``H / W`` are."""
    factors = []  # (value, power)
    for dim, (e, f) in zip(dims, row):
        factors.append((dim, e))
        if f:
            one = writer.ctx.add_constant(np.ones(1, helper.tensor_dtype_to_np_dtype(elem)), f"{hint}_one")
            factors.append((writer._node("Sub", [dim, one], f"{hint}_less_one", elem, [1]), f))
    value = None
    for factor, power in factors:
        for _ in range(max(power, 0)):
            value = factor if value is None else writer._node("Mul", [value, factor], f"{hint}_monomial", elem, [1])
    for factor, power in factors:
        for _ in range(max(-power, 0)):
            if value is None:
                value = writer._node("Reciprocal", [factor], f"{hint}_monomial", elem, [1])
            else:
                value = writer._node("Div", [value, factor], f"{hint}_monomial", elem, [1])
    return value
