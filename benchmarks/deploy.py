"""A fused model deployed in plain onnxruntime and in OpenVINO, one thread, against what it replaces.

    python benchmarks/deploy.py [--reps 15] [--shapes 1x3x512x512 8x3x256x256] [--smoke]

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

Then OpenVINO (CPU plugin, INFERENCE_NUM_THREADS=1, INFERENCE_PRECISION_HINT=f32), four ways:
  original       the decomposition above
  unfused        the fused model after surgeon.unfuse (standard ONNX at the original's opset)
  fused          the fused model, with surgeon_ops.openvino's extension
  native pair    the opset-20 AffineGrid + GridSample model: OpenVINO's own GridSample
with each output's max |difference| from the original's output in onnxruntime (must be within
1e-4), and the same at OpenVINO's default precision (bf16 on CPUs that have it) for reference.

--smoke (the tests run it, seconds): one 1x3x16x16 shape, one rep, everything else as above
(the export, the fuse, the checks, the OpenVINO rows); its ratios mean nothing.
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
SMOKE_SHAPES = [(1, 3, 16, 16)]


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


def case(shape):
    """The inputs, the dynamo decomposition exported at this size, and that model fused."""
    import surgeon

    n = shape[0]
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    theta = np.ascontiguousarray(np.broadcast_to(THETA, (n, 2, 3)))
    decomposition = dynamo_export(x, theta)
    fused = surgeon.fuse(decomposition).model
    assert any(node.domain == "custom.ops" for node in fused.graph.node), "surgeon.fuse rewrote nothing"
    return {"x": x, "theta": theta}, decomposition, fused


def row(shape, reps, feeds, decomposition, fused):
    import onnxruntime as ort
    import torch
    import torch.nn.functional as F

    import surgeon_ops.kernels as K
    import surgeon_ops.ort

    n, c, h, w = shape
    x, theta = feeds["x"], feeds["theta"]
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


def openvino_row(shape, reps, feeds, decomposition, fused):
    """OpenVINO times (median ms) and each output's max |difference| from the original's output in
    onnxruntime, at float32 and at the CPU's default precision."""
    import onnxruntime as ort

    import surgeon
    import surgeon_ops.openvino

    models = {"original": decomposition, "unfused": surgeon.unfuse(fused).model, "fused": fused,
              "native pair": native_pair(shape)}
    want = ort.InferenceSession(decomposition.SerializeToString(), one_thread_options(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    core = surgeon_ops.openvino.core()
    requests, diff, diff_default = {}, {}, {}
    for name, model in models.items():
        read = core.read_model(model.SerializeToString(), b"")
        for hint, into in (("f32", diff), (None, diff_default)):
            config = {"INFERENCE_NUM_THREADS": 1, **({"INFERENCE_PRECISION_HINT": hint} if hint else {})}
            request = core.compile_model(read, "CPU", config).create_infer_request()
            request.start_async(feeds)  # (a synchronous infer() on one thread may lose a run-time error)
            request.wait()
            into[name] = float(np.abs(request.get_output_tensor(0).data - want).max())
            if hint:
                requests[name] = request  # the float32 ones are timed
    for name in models:
        assert diff[name] <= 1e-4, f"OpenVINO {name}: max |y - original| {diff[name]:.3g} > 1e-4"
    fns = {name: (lambda r=r: r.infer(feeds, share_inputs=True, share_outputs=True)) for name, r in requests.items()}
    return median_ms(fns, reps), diff, diff_default


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--shapes", nargs="+", metavar="NxCxHxW", help="default: 1x3x512x512 8x3x256x256")
    parser.add_argument("--smoke", action="store_true", help="check the script in seconds: one tiny shape, one rep")
    args = parser.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes] if args.shapes else SHAPES
    if args.smoke:
        args.reps, shapes = 1, SMOKE_SHAPES
        print("SMOKE: one tiny shape, one rep; the ratios mean nothing")
    import onnxruntime
    import torch

    torch.set_num_threads(1)
    print(f"onnxruntime {onnxruntime.__version__}, one thread, float32, bilinear, zeros, align_corners=0; median ms")
    print(f"{'shape':>14} {'decomp':>8} {'fused':>7} {'native':>7} {'torch':>7} {'kernel':>7} "
          f"{'decomp/fused':>12} {'native/fused':>12} {'fused/kernel':>12}")
    cases = {shape: case(shape) for shape in shapes}
    for shape in shapes:
        t = row(shape, args.reps, *cases[shape])
        print(f"{'x'.join(map(str, shape)):>14} {t['decomposition']:8.2f} {t['fused']:7.3f} {t['native pair']:7.3f} "
              f"{t['torch']:7.3f} {t['kernel']:7.3f} {t['decomposition'] / t['fused']:12.1f} "
              f"{t['native pair'] / t['fused']:12.1f} {t['fused'] / t['kernel']:12.2f}")
    try:
        import openvino

        import surgeon_ops.openvino

        surgeon_ops.openvino.library_path()
    except Exception as exc:  # not installed, or the extension not built for it: say so, no rows
        print(f"OpenVINO: skipped ({str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__})")
        return
    print(f"OpenVINO {openvino.__version__.split('-')[0]} CPU, one thread, f32 precision; median ms; max |y - original| "
          f"at f32 and (in brackets) at the default precision {openvino.Core().get_property('CPU', 'INFERENCE_PRECISION_HINT').get_type_name()}")
    print(f"{'shape':>14} {'original':>8} {'unfused':>8} {'fused':>7} {'native':>7} {'orig/fused':>10} "
          f"{'unf/fused':>9} {'nat/fused':>9}  {'diff original':>19} {'diff unfused':>19} {'diff fused':>19} "
          f"{'diff native':>19}")
    for shape in shapes:
        t, d, dd = openvino_row(shape, args.reps, *cases[shape])
        diffs = " ".join(f"{d[k]:8.1e} [{dd[k]:8.1e}]" for k in ("original", "unfused", "fused", "native pair"))
        print(f"{'x'.join(map(str, shape)):>14} {t['original']:8.2f} {t['unfused']:8.2f} {t['fused']:7.3f} "
              f"{t['native pair']:7.3f} {t['original'] / t['fused']:10.1f} {t['unfused'] / t['fused']:9.1f} "
              f"{t['native pair'] / t['fused']:9.1f}  {diffs}")


if __name__ == "__main__":
    main()
