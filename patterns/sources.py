"""What a probe feeds as theta, and which matrices the grid must then be an affine grid of:
theta itself (the rows it holds), an affine map of it, or a fixed theta fitted to a grid that
reads no theta at all."""

from __future__ import annotations

import numpy as np

from .reparam import ThetaMap
from .thetas import probe_thetas
from .cut import ThetaLayout


class PlainSource:
    fed = True

    def __init__(self, layout: ThetaLayout):
        self.layout = layout

    def thetas(self, count: int, start: int, salt: int) -> tuple[np.ndarray, list[str]]:
        return probe_thetas(count, self.layout.rows, self.layout.cols, self.layout.k, start, salt)

    def expected(self, theta: np.ndarray) -> np.ndarray:
        return theta.reshape(theta.shape[0], self.layout.rows, self.layout.cols)[:, :self.layout.k, :]


class MapSource(PlainSource):
    def __init__(self, layout: ThetaLayout, theta_map: ThetaMap):
        super().__init__(layout)
        self.theta_map = theta_map

    def expected(self, theta: np.ndarray) -> np.ndarray:
        return self.theta_map.apply(theta, self.layout.k)


class FixedSource:
    """A grid that reads no theta: the region runs on its constants and shapes alone."""

    fed = False

    def __init__(self, theta: np.ndarray):
        self.theta = theta  # [1 or N, k, k+1], float64

    def thetas(self, count: int, start: int, salt: int):
        return None, None

    def expected(self, theta) -> np.ndarray:
        return self.theta
