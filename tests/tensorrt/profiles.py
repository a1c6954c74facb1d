"""Nodes as the TensorRT profile writes them, and thetas to run them on: shared by the plugin,
GPU and profile tests."""

import numpy as np
from onnx import helper

from surgeon_ops.tensorrt import profile


def profile_node(op="FusedGridSample", **attrs):
    """A node as the TensorRT profile writes it (lookup keys included)."""
    inputs = ["x", "theta"] if op == "FusedGridSample" else ["theta"]
    return helper.make_node(profile.op_type(op), inputs, ["y"], domain="custom.ops", plugin_version=profile.VERSION,
                            plugin_namespace=profile.NAMESPACE, **attrs)


def thetas(n, k, rng):
    """Rotations, scales and shifts (past the edge too), one per item."""
    out = np.zeros((n, k, k + 1), np.float32)
    for i in range(n):
        a = rng.uniform(-np.pi, np.pi)
        m = rng.uniform(0.5, 2.0) * np.eye(k)
        m[:2, :2] = m[:2, :2] @ np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        out[i, :, :k], out[i, :, k] = m, rng.uniform(-1.2, 1.2, k)
    return out
