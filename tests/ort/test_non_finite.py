"""Non-finite coordinates (decided, ops/kernels/csrc/surgeon_kernels.h): a NaN or infinite
normalised coordinate is sampled as if it were -1.  onnxruntime's own GridSample does that in
every mode and padding, so a fused model must give what its unfused onnxruntime original gives
for theta with NaN / +Inf / -Inf entries: onnxruntime's AffineGrid turns those into non-finite
grid coordinates, which its GridSample then reads as -1.  Checked for the CPU kernel, the numpy
oracle and the op library, against the opset-20 AffineGrid + GridSample pipeline, and against
GridSample on an explicit grid holding non-finite entries."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import surgeon_ops.kernels as K

from ..builders import fused_grid_sample_model
from ..error_bounds import assert_within, grid_sample_bound, sampled_grid_bound
from ..kernels.cases import COMBOS
from .conftest import new_session

ORT_MODES = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}
BAD = (np.nan, np.inf, -np.inf)


def standard_session(nodes, inputs):
    graph = helper.make_graph(nodes, "standard", [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
                                                  for n in inputs],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def grid_sample_node(mode, padding, ac):
    return helper.make_node("GridSample", ["x", "grid"], ["y"], mode=ORT_MODES[mode], padding_mode=padding,
                            align_corners=ac)


def affine_grid_then_sample(x, theta, size, mode, padding, ac):
    """onnxruntime's opset-20 AffineGrid + GridSample, the unfused original."""
    full = helper.make_node("Constant", [], ["size"], value=helper.make_tensor(
        "size", TensorProto.INT64, [len(size) + 2], list(x.shape[:2]) + list(size)))
    nodes = [full, helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=ac),
             grid_sample_node(mode, padding, ac)]
    return standard_session(nodes, ["x", "theta"]).run(None, dict(x=x, theta=theta))[0]


def problem(nsp, seed):
    """One image per theta entry and value: theta item k has BAD[k // entries] at entry k."""
    rng = np.random.default_rng(seed)
    entries = nsp * (nsp + 1)
    n = entries * len(BAD)
    theta = (np.eye(nsp, nsp + 1) + rng.normal(0, 0.3, (n, nsp, nsp + 1))).astype(np.float32)
    for k in range(n):
        theta[k].reshape(-1)[k % entries] = BAD[k // entries]
    ins, size = ((5, 6), (4, 7)) if nsp == 2 else ((3, 5, 6), (3, 4, 7))
    x = rng.random((n, 2) + ins).astype(np.float32)
    return x, theta, size


@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS)
def test_non_finite_theta_gives_what_onnxruntime_gives(nsp, mode, padding, ac):
    x, theta, size = problem(nsp, nsp * 10 + ac)
    want = affine_grid_then_sample(x, theta, size, mode, padding, ac)
    assert np.isfinite(want).all()
    model = fused_grid_sample_model(rank=nsp + 2, mode=mode, padding_mode=padding, align_corners=ac, output_size=list(size))
    got = {"cpp": K.fused_grid_sample(x, theta, size, mode, padding, ac, backend="cpp"),
           "numpy": K.fused_grid_sample(x, theta, size, mode, padding, ac, backend="numpy"),
           "op library": new_session(model).run(None, dict(x=x, theta=theta))[0]}
    bound = grid_sample_bound(x, theta, size, mode, padding, ac)  # a non-finite coordinate reads -1
    for name, y in got.items():
        assert_within(y, want, bound, name)


@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS)
def test_non_finite_grid_gives_what_onnxruntime_gives(nsp, mode, padding, ac):
    rng = np.random.default_rng(nsp * 10 + ac)
    x = rng.random((2, 3) + ((5, 6) if nsp == 2 else (3, 5, 6))).astype(np.float32)
    grid = rng.uniform(-1.3, 1.3, (2,) + ((4, 7) if nsp == 2 else (3, 4, 7)) + (nsp,)).astype(np.float32)
    flat = grid.reshape(-1)
    flat[rng.choice(flat.size, flat.size // 3, replace=False)] = rng.choice(BAD, flat.size // 3)
    want = standard_session([grid_sample_node(mode, padding, ac)], ["x", "grid"]).run(None, dict(x=x, grid=grid))[0]
    for backend in ("cpp", "numpy"):
        got = K.grid_sample(x, grid, mode, padding, ac, backend=backend)
        assert_within(got, want, sampled_grid_bound(x, grid, mode, padding, ac), backend)
