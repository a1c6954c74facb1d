"""A fused model deployed in plain onnxruntime, one thread, against what it replaces.

    python benchmarks/deploy.py [--reps 15] [--shapes 1x3x512x512 8x3x256x256]

Per shape, the same warp (bilinear, zeros, align_corners=0) five ways:
  decomposition  torch.onnx.export(dynamo=True, opset 18) of affine_grid + grid_sample, as the
                 shipped sample affine_dynamo_opset18_2d.onnx but exported at this size (the
                 exporter bakes the size in), run in onnxruntime
  fused          that model after surgeon.fuse, run in onnxruntime with the op library
  native pair    an opset-20 AffineGrid + GridSample model in onnxruntime
  torch          F.affine_grid + F.grid_sample, eager
  kernel         surgeon_ops.kernels.fused_grid_sample called directly (what the op runs)
Each time is the median of --reps runs, taken in blocks that rotate over three rounds so a noisy
machine hurts all alike.  Ratios come from the same run: decomposition / fused and native /
fused (targets: >= 10 and >= 3) and fused / kernel (the op's own overhead; target <= 1.2).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # samples/

THETA = np.array([[0.9, 0.2, 0.05], [-0.15, 0.95, -0.1]], np.float32)  # rotate, shear, shift
SHAPES = [(1, 3, 512, 512), (8, 3, 256, 256)]


def median_ms(fns: dict, reps: int, rounds: int = 3) -> dict:
    times = {name: [] for name in fns}
    per_block = max(1, reps // rounds)
    for _ in range(rounds):
        for name, fn in fns.items():
            fn()  # the block's first run finds the caches holding another's data: not timed
            for _ in range(per_block):
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


@contextlib.contextmanager
def quiet():
    """The dynamo exporter prints to the process's stdout/stderr: silence both."""
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        sys.stdout.flush(), sys.stderr.flush()
        os.dup2(null, 1), os.dup2(null, 2)
        yield
    finally:
        sys.stdout.flush(), sys.stderr.flush()
        os.dup2(saved[0], 1), os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def dynamo_export(x, theta):
    import onnx
    import torch

    from samples.sample_models import AffineSample

    with tempfile.TemporaryDirectory() as tmp, quiet():
        path = os.path.join(tmp, "decomposition.onnx")
        torch.onnx.export(AffineSample().eval(), (torch.from_numpy(x), torch.from_numpy(theta)), path, dynamo=True,
                          opset_version=18, input_names=["x", "theta"], output_names=["y"], external_data=False)
        return onnx.load(path)


def native_pair(shape):
    from onnx import TensorProto, helper

    size = helper.make_tensor("size", TensorProto.INT64, [4], list(shape))
    graph = helper.make_graph(
        [helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=0),
         helper.make_node("GridSample", ["x", "grid"], ["y"], mode="linear", padding_mode="zeros", align_corners=0)],
        "native_pair",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape)),
         helper.make_tensor_value_info("theta", TensorProto.FLOAT, [shape[0], 2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))], initializer=[size])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def one_thread_options():
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return opts


def row(shape, reps):
    import onnxruntime as ort
    import torch
    import torch.nn.functional as F

    import surgeon
    import surgeon_ops.kernels as K
    import surgeon_ops.ort

    n, c, h, w = shape
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    theta = np.ascontiguousarray(np.broadcast_to(THETA, (n, 2, 3)))
    feeds = {"x": x, "theta": theta}
    decomposition = dynamo_export(x, theta)
    fused = surgeon.fuse(decomposition).model
    assert any(node.domain == "custom.ops" for node in fused.graph.node), "surgeon.fuse rewrote nothing"
    cpu = ["CPUExecutionProvider"]
    sessions = {
        "decomposition": ort.InferenceSession(decomposition.SerializeToString(), one_thread_options(), providers=cpu),
        "fused": surgeon_ops.ort.session(fused, sess_options=one_thread_options()),
        "native pair": ort.InferenceSession(native_pair(shape).SerializeToString(), one_thread_options(),
                                            providers=cpu),
    }
    xt, tt = torch.from_numpy(x), torch.from_numpy(theta)

    def torch_fn():
        with torch.no_grad():
            return F.grid_sample(xt, F.affine_grid(tt, (n, c, h, w), align_corners=False), align_corners=False)

    # The fused op is the kernel, bit for bit, and torch's numbers.  The other two compute the
    # grid in another order: at 512 pixels an ulp of a coordinate moves a tap by 3e-5 pixel.
    want = torch_fn().numpy()
    got = {name: sess.run(None, feeds)[0] for name, sess in sessions.items()}
    np.testing.assert_array_equal(got["fused"], K.fused_grid_sample(x, theta, (h, w)))
    for name, tol in (("fused", 1e-5), ("decomposition", 1e-4), ("native pair", 1e-4)):
        np.testing.assert_allclose(got[name], want, rtol=0, atol=tol, err_msg=name)

    fns = {name: (lambda s=sess: s.run(None, feeds)) for name, sess in sessions.items()}
    fns["torch"] = torch_fn
    fns["kernel"] = lambda: K.fused_grid_sample(x, theta, (h, w), num_threads=1)
    return median_ms(fns, reps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--shapes", nargs="+", metavar="NxCxHxW", help="default: 1x3x512x512 8x3x256x256")
    args = parser.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes] if args.shapes else SHAPES
    import onnxruntime
    import torch

    torch.set_num_threads(1)
    print(f"onnxruntime {onnxruntime.__version__}, one thread, float32, bilinear, zeros, align_corners=0; median ms")
    print(f"{'shape':>14} {'decomp':>8} {'fused':>7} {'native':>7} {'torch':>7} {'kernel':>7} "
          f"{'decomp/fused':>12} {'native/fused':>12} {'fused/kernel':>12}")
    for shape in shapes:
        t = row(shape, args.reps)
        print(f"{'x'.join(map(str, shape)):>14} {t['decomposition']:8.2f} {t['fused']:7.3f} {t['native pair']:7.3f} "
              f"{t['torch']:7.3f} {t['kernel']:7.3f} {t['decomposition'] / t['fused']:12.1f} "
              f"{t['native pair'] / t['fused']:12.1f} {t['fused'] / t['kernel']:12.2f}")


if __name__ == "__main__":
    main()
