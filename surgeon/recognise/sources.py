"""What a probe feeds a region's variable, and what the identified form's parameters must then
be: the variable's own (``Fed``), an affine map of it (``Mapped``), or constants fitted to an
output that reads no variable (``Fitted``). A map's or a constant's coefficients may follow the
dims (``scaling.DimScaling``): they are then computed at each probe's dims. ``map_from_probes``
fits the map from the parameters each probe run's output was fitted to."""

from __future__ import annotations

import numpy as np

from .fit import AffineMap, fit_map


class Fed:
    fed = True
    scaling = None  # the variable as fed: no coefficient of its own to follow dims

    def __init__(self, probe, params):
        """``probe(count, start, salt)``: (values, labels) for ``count`` items; ``params(values)``:
        the form's parameters the output must have for them."""
        self.probe, self.params = probe, params

    def values(self, count: int, start: int, salt: int):
        return self.probe(count, start, salt)

    def expected(self, values: np.ndarray, assign: dict) -> np.ndarray:
        return self.params(values)


class Mapped(Fed):
    def __init__(self, probe, shape: tuple, affine: AffineMap, scaling=None):
        """``shape``: one item's parameters, which the map's outputs fill in order."""
        super().__init__(probe, None)
        self.shape, self.affine, self.scaling = shape, affine, scaling

    def expected(self, values: np.ndarray, assign: dict) -> np.ndarray:
        found = self.affine
        if self.scaling is not None:
            flat = self.scaling.values(assign)
            found = AffineMap(flat[:found.weight.size].reshape(found.weight.shape), flat[found.weight.size:])
        return found.apply(values).reshape((values.shape[0], *self.shape))


class Fitted:
    """An output that reads no variable: the region runs on its constants and shapes alone."""

    fed = False

    def __init__(self, params: np.ndarray, scaling=None):
        self.params = params  # [1 or N, ...], float64
        self.scaling = scaling

    def values(self, count: int, start: int, salt: int):
        return None, None

    def expected(self, values, assign: dict) -> np.ndarray:
        if self.scaling is None:
            return self.params
        return self.scaling.values(assign).reshape(self.params.shape)


def collapsed(values: np.ndarray, tol: tuple[float, float]) -> np.ndarray:
    """One item for all when every item is the same within ``tol`` (atol, rtol)."""
    atol, rtol = tol
    same = np.all(np.abs(values - values[:1]) <= atol + rtol * np.abs(values[:1]))
    return values[:1] if same else values


def map_from_probes(runs, fit_params, tol: tuple[float, float]) -> AffineMap | None:
    """The affine map from fed values to the parameters each run's output fits (``fit_params``:
    [n, ...] per item, or None), over ``runs`` of (output, fed values); an output of several items
    for one fed value (broadcast to them) must fit one parameter set for all."""
    sources, targets = [], []
    for output, values in runs:
        fitted = fit_params(output)
        if fitted is None:
            return None
        if output.shape[0] != values.shape[0]:
            if not np.allclose(fitted, fitted[:1], atol=tol[0] * 10):
                return None
            fitted = fitted[:1]
        sources += list(values.reshape(values.shape[0], -1))
        targets += list(fitted.reshape(fitted.shape[0], -1))
    return fit_map(np.array(sources), np.array(targets), tol)
