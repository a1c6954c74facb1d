"""What a probe feeds as theta, and which matrices the grid must then be an affine grid of:
theta itself (the rows it holds), an affine map of it, or a fixed theta fitted to a grid that
reads no theta at all."""

from __future__ import annotations

import numpy as np

from surgeon.recognise import AffineMap, DimScaling

from .thetas import probe_thetas
from .cut import ThetaLayout


class PlainSource:
    fed = True
    scaling: DimScaling | None = None  # theta as fed: no coefficient of its own to follow dims

    def __init__(self, layout: ThetaLayout, fixed: dict | None = None):
        self.layout = layout
        self.fixed = fixed or {}  # elements every run holds (Region.fixed): probes hold them too

    def thetas(self, count: int, start: int, salt: int) -> tuple[np.ndarray, list[str]]:
        return probe_thetas(count, self.layout.rows, self.layout.cols, self.layout.k, start, salt, self.fixed)

    def expected(self, theta: np.ndarray, assign: dict) -> np.ndarray:
        return theta.reshape(theta.shape[0], self.layout.rows, self.layout.cols)[:, :self.layout.k, :]


class MapSource(PlainSource):
    def __init__(self, layout: ThetaLayout, theta_map: AffineMap, scaling: DimScaling | None = None,
                 fixed: dict | None = None):
        super().__init__(layout, fixed)
        self.theta_map, self.scaling = theta_map, scaling

    def expected(self, theta: np.ndarray, assign: dict) -> np.ndarray:
        theta_map = self.theta_map
        if self.scaling is not None:
            flat = self.scaling.values(assign)
            weight = flat[:theta_map.weight.size].reshape(theta_map.weight.shape)
            theta_map = AffineMap(weight, flat[theta_map.weight.size:])
        k = self.layout.k
        return theta_map.apply(theta).reshape(theta.shape[0], k, k + 1)


class FixedSource:
    """A grid that reads no theta: the region runs on its constants and shapes alone."""

    fed = False

    def __init__(self, theta: np.ndarray, scaling: DimScaling | None = None):
        self.theta = theta  # [1 or N, k, k+1], float64
        self.scaling = scaling

    def thetas(self, count: int, start: int, salt: int):
        return None, None

    def expected(self, theta, assign: dict) -> np.ndarray:
        if self.scaling is None:
            return self.theta
        return self.scaling.values(assign).reshape(self.theta.shape)
