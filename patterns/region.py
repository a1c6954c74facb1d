"""Run a cut region once (``surgeon.recognise.RegionRunner``), with the grids of the known grid
ops onnxruntime cannot run computed analytically, and each known op's size tensor measured."""

from __future__ import annotations

import numpy as np

from surgeon.recognise import DoesNotRun, RegionRunner

from .analytic import affine_grid


class GridRunner(RegionRunner):
    def emulate(self, feeds: dict) -> dict:
        """Adds to ``feeds`` the analytic grid of every known grid op onnxruntime cannot run;
        returns each known op's size tensor (list of ints) by its index in ``computed``."""
        sizes = {}
        for i, op in enumerate(self.region.computed):
            if op.size is not None:
                sizes[i] = [int(s) for s in np.asarray(self.value(op.size, feeds)).reshape(-1)]
                spatial = sizes[i][2:]
            else:
                spatial = list(op.output_size)
            if not op.emulated:
                continue  # onnxruntime computes it with the rest of the region
            raw = np.asarray(self.value(op.theta, feeds))
            if op.half_only and raw.dtype in (np.float32, np.float64):
                continue  # onnxruntime's kernel computes it with the rest of the region
            op_theta = raw.astype(np.float64)
            if op_theta.ndim != 3 or op_theta.shape[1] != len(spatial) or min(spatial, default=1) < 0:
                raise DoesNotRun(f"{op.node.label}: theta {op_theta.shape} does not fit size {spatial}")
            if op.half_only and sizes.get(i, [op_theta.shape[0]])[0] != op_theta.shape[0]:
                raise DoesNotRun(f"{op.node.label}: size N {sizes[i][0]} is not theta's {op_theta.shape[0]}")
            with np.errstate(invalid="ignore"):
                grid = affine_grid(op_theta, spatial, bool(op.align_corners), op.size_one)
            # every known grid op's output has theta's type: a declared type may be stale (the
            # plan refuses a declaration the computed grid contradicts)
            out = raw.dtype if raw.dtype.kind == "f" else self.dtype
            feeds[op.node.outputs[0]] = grid.astype(out)
        return sizes
