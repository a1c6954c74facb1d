"""Reference kernels for the runtime tests (the models they run on are in tests.builders).

The FusedGridSample kernel here follows ops/OPS.md through torch's own functions, so these tests
depend neither on surgeon_ops.kernels nor on the pattern plugins.
"""

from __future__ import annotations

import numpy as np

TORCH_MODE = {"linear": "bilinear", "cubic": "bicubic"}


def torch_fused_grid_sample(inputs, attrs, device="cpu"):
    import torch
    import torch.nn.functional as F

    x, theta = inputs[0], inputs[1]
    size = inputs[2] if len(inputs) > 2 and inputs[2] is not None else None
    if size is None:
        size = list(x.shape[:2]) + list(attrs["output_size"])
    ac = bool(attrs.get("align_corners", 0))
    mode = TORCH_MODE.get(attrs.get("mode", "bilinear"), attrs.get("mode", "bilinear"))
    grid = F.affine_grid(torch.from_numpy(theta), [int(s) for s in size], align_corners=ac)
    y = F.grid_sample(torch.from_numpy(x), grid, mode=mode, padding_mode=attrs.get("padding_mode", "zeros"),
                      align_corners=ac)
    return [y.numpy()]


def torch_affine_grid(inputs, attrs, device="cpu"):
    import torch
    import torch.nn.functional as F

    theta = inputs[0]
    size = inputs[1] if len(inputs) > 1 and inputs[1] is not None else None
    if size is None:
        size = [theta.shape[0], 1] + list(attrs["output_size"])
    grid = F.affine_grid(torch.from_numpy(theta), [int(s) for s in size],
                         align_corners=bool(attrs.get("align_corners", 0)))
    return [grid.numpy()]


def scale_kernel(inputs, attrs, device="cpu"):
    """test.ops::Scale (tests.builders.scale_node): y = x * factor."""
    return [(inputs[0] * np.asarray(attrs.get("factor", 2.0), dtype=inputs[0].dtype))]
