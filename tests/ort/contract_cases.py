"""The cases the op library's contract tests (and the OpenVINO extension's) run custom.ops models
from tests.builders on: attributes that break the contract and their errors, AffineGrid cases."""

from __future__ import annotations

import numpy as np

import surgeon_ops.kernels as K

from ..builders import F16, F32, affine_grid_model
from ..kernels.cases import cases


# A FusedGridSample node's attributes that break the contract, and the words of the error (a
# regular expression): the op library and the OpenVINO extension say the same.
ATTRIBUTE_ERRORS = [
    (dict(mode="bogus", output_size=[4, 4]), "unknown mode 'bogus'; expected bilinear, nearest or bicubic"),
    (dict(padding_mode="mirror", output_size=[4, 4]), "unknown padding_mode 'mirror'"),
    (dict(align_corners=2, output_size=[4, 4]), "align_corners must be 0 or 1, got 2"),
    (dict(mode=1, output_size=[4, 4]), r"attribute mode must be a STRING \(ops/OPS.md\)"),
    (dict(align_corners=1.0, output_size=[4, 4]), "attribute align_corners must be an INT"),
    (dict(output_size=4), "attribute output_size must be INTS"),
    (dict(), "has neither an output_size attribute nor a size input"),
    (dict(output_size=[4]), "output_size must have 2 values"),
    (dict(output_size=[4, -1]), "output_size must not be negative"),
    (dict(mode="bicubic", output_size=[2, 4, 4]), "bicubic mode is 2-D only"),
]


def affine_grid_cases(nsp, dtype, size_input):
    """(model, feeds, the kernels' grid) for both align_corners: the op library's and the OpenVINO
    extension's contract tests."""
    theta = cases(nsp)[0][1].astype(dtype)
    out = (3, 5, 4)[3 - nsp:]
    for ac in (0, 1):
        elem = F16 if dtype == np.float16 else F32
        model = affine_grid_model(elem, size_input, out_rank=nsp + 2, align_corners=ac,
                                  output_size=None if size_input else list(out))
        feeds = dict(theta=theta)
        if size_input:
            feeds["size"] = np.array((theta.shape[0], 7) + out, np.int64)
        yield model, feeds, K.affine_grid(theta, out, ac)
