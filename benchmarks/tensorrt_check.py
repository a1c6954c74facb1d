"""TensorRT with surgeon's plugins, on a machine with a GPU and TensorRT (gpu_check.sh runs it).

    python benchmarks/tensorrt_check.py [--iters 200] [--prepare-only] [--smoke]

For each 2-D sample that fuses for TensorRT (samples/models/manifest.json, at its input shapes):
  1. surgeon.fuse(target="tensorrt"), linted clean, built into an engine with the plugins
     (surgeon_ops.tensorrt.register(), TensorRT's Python plugin API over the CUDA kernels);
  2. the engine's outputs against onnxruntime (CPU) on the *original* model (`surgeon run` where it
     holds ATen or custom nodes plain onnxruntime lacks), same inputs (x
     uniform in [-1, 1), theta drawn as `surgeon validate` draws it: rotations, reflections, shifts);
  3. GPU time per call (CUDA events, median of --iters, the plugin's Python enqueue included)
     against TensorRT's own engine of the unfused original where TensorRT builds one; that
     engine's error is printed too (opset-20 'linear' is sampled as nearest: NVIDIA/TensorRT#4646).
--prepare-only does what needs no GPU (fuse, lint, inputs, onnxruntime), to check the script.
Exit 1 when a fused model fails to build or differs from onnxruntime; without TensorRT it says
SKIPPED and exits 0 (pip install tensorrt-cu12 or -cu13 where NVIDIA's index is reachable).

--smoke (the tests run it, seconds without TensorRT): what --prepare-only does and prints,
then the run above with engines for the first 3 fused samples only, timed over 2 calls.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "samples" / "models"
SMOKE_ENGINES = 3


def prepare(seed: int = 0):
    """(name, original path, fused model, feeds, onnxruntime's outputs, tolerance) per sample;
    a sample that does not fuse for TensorRT is a (name, reason) line."""
    import onnxruntime as ort

    import surgeon
    from surgeon.lint import lint
    from surgeon.validate.draws import input_drawers
    from surgeon.runtime.inputs import random_inputs

    plugins = surgeon.PluginSet.installed()
    for name, entry in json.loads((MODELS / "manifest.json").read_text()).items():
        if entry.get("dims") != 2 or entry.get("expected") != "fuse":
            continue
        path = str(MODELS / name)
        result = surgeon.fuse(path, plugins=plugins, target="tensorrt", input_shapes=entry["inputs"])
        if not result.report.rewrites:  # some samples fuse only with their own dims (a matcher limit)
            result = surgeon.fuse(path, plugins=plugins, target="tensorrt")
        if not result.report.rewrites:
            yield name, f"not fused for TensorRT: {result.report.refusals[0].reason}"
            continue
        hazards = lint(result.model, "tensorrt", plugins=plugins).lines()
        if hazards:
            yield name, f"lint: {hazards[0]}"
            continue
        feeds, _ = random_inputs(path, entry["inputs"], seed, drawers=input_drawers(result.model, plugins))
        try:
            session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            want = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
        except Exception:  # ATen or custom nodes: onnxruntime for the rest, surgeon's kernels for those
            want = surgeon.run(path, feeds, plugins=plugins)
        atol = max([1e-3] + [float(p.value) for n in result.model.graph.node for p in n.metadata_props
                             if p.key == "surgeon.atol"])
        yield name, (path, result.model, feeds, want, atol)


class Engines:
    """Builds and runs TensorRT engines from ONNX bytes, buffers in torch's CUDA memory."""

    def __init__(self, trt, torch):
        self.trt, self.torch = trt, torch
        self.logger = trt.Logger(trt.Logger.WARNING)

    def build(self, onnx_bytes: bytes, shapes: dict):
        trt = self.trt
        builder = trt.Builder(self.logger)
        network = builder.create_network(0)
        parser = trt.OnnxParser(network, self.logger)
        if not parser.parse(onnx_bytes):
            return None, "parse: " + "; ".join(parser.get_error(i).desc() for i in range(parser.num_errors))
        config = builder.create_builder_config()
        dynamic = [network.get_input(i) for i in range(network.num_inputs)
                   if any(d < 0 for d in network.get_input(i).shape)]
        if dynamic:
            profile = builder.create_optimization_profile()
            for t in dynamic:
                profile.set_shape(t.name, shapes[t.name], shapes[t.name], shapes[t.name])
            config.add_optimization_profile(profile)
        blob = builder.build_serialized_network(network, config)
        if blob is None:
            return None, "build failed (TensorRT's log above says why)"
        return trt.Runtime(self.logger).deserialize_cuda_engine(blob), None

    def runner(self, engine, feeds: dict):
        """A call running the engine once on the GPU, and its output tensors (filled by it)."""
        trt, torch = self.trt, self.torch
        context, keep, outputs = engine.create_execution_context(), [], {}
        names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
        for name in names:
            if engine.get_tensor_mode(name) == trt.TensorIOMode.INPUT:
                t = torch.from_numpy(np.ascontiguousarray(feeds[name])).cuda()
                context.set_input_shape(name, tuple(t.shape))
                context.set_tensor_address(name, t.data_ptr())
                keep.append(t)
        for name in names:
            if engine.get_tensor_mode(name) == trt.TensorIOMode.OUTPUT:
                dtype = torch.from_numpy(np.empty(0, trt.nptype(engine.get_tensor_dtype(name)))).dtype
                t = torch.empty(tuple(context.get_tensor_shape(name)), dtype=dtype, device="cuda")
                context.set_tensor_address(name, t.data_ptr())
                outputs[name] = t
        stream = torch.cuda.current_stream()

        def call():
            if not context.execute_async_v3(stream.cuda_stream):
                raise RuntimeError("execute_async_v3 failed")
        call.keep = (keep, context)
        return call, outputs

    def time_ms(self, call, iters: int) -> float:
        torch = self.torch
        for _ in range(10):
            call()
        torch.cuda.synchronize()
        start, end, times = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True), []
        for _ in range(iters):
            start.record()
            call()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)


def max_error(outputs: dict, want: dict) -> float:
    return max(float(np.max(np.abs(outputs[k].float().cpu().numpy() - want[k].astype(np.float32))))
               if want[k].size else 0.0 for k in want if k in outputs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--prepare-only", action="store_true")
    parser.add_argument("--smoke", action="store_true",
                        help=f"check the script: --prepare-only's lines, then {SMOKE_ENGINES} engines, 2 calls each")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    cases = list(prepare())
    if args.prepare_only or args.smoke:
        for name, case in cases:
            print(f"{name:42s} " + (case if isinstance(case, str) else f"fused, {len(case[2])} input(s), "
                                    f"onnxruntime reference ready (atol {case[4]:g})"))
        if args.prepare_only:
            return 0
    if args.smoke:  # an engine build takes seconds: a few of them check the GPU half
        args.iters, cases = 2, [c for c in cases if not isinstance(c[1], str)][:SMOKE_ENGINES]
    try:
        import tensorrt as trt
        import torch
    except ImportError as exc:
        print(f"tensorrt: SKIPPED, TensorRT is not installed here ({exc}); "
              "pip install tensorrt-cu12 or tensorrt-cu13 (10.6 or later) where NVIDIA's index is reachable")
        return 0
    import surgeon_ops.tensorrt as st

    print(f"tensorrt {trt.__version__}, plugins {', '.join(st.register())}, GPU {torch.cuda.get_device_name()}")
    engines, failed = Engines(trt, torch), 0
    print(f"{'sample':42s} {'fused ms':>9s} {'max err':>9s} {'unfused ms':>10s} {'max err':>9s} {'speed-up':>8s}")
    for name, case in cases:
        if isinstance(case, str):
            print(f"{name:42s} skipped: {case}")
            continue
        path, fused, feeds, want, atol = case
        shapes = {k: tuple(v.shape) for k, v in feeds.items()}
        engine, why = engines.build(fused.SerializeToString(), shapes)
        if engine is None:
            failed += 1
            print(f"{name:42s} FAILED: the fused model: {why}")
            continue
        call, outputs = engines.runner(engine, feeds)
        fused_ms, error = engines.time_ms(call, args.iters), max_error(outputs, want)
        ok = error <= atol
        failed += not ok
        base, why = engines.build(Path(path).read_bytes(), shapes)
        if base is None:
            tail = f"{'-':>10s} {'-':>9s} {'-':>8s}  unfused: {why[:120]}"
        else:
            base_call, base_out = engines.runner(base, feeds)
            base_ms = engines.time_ms(base_call, args.iters)
            tail = f"{base_ms:10.4f} {max_error(base_out, want):9.2e} {base_ms / fused_ms:7.2f}x"
        print(f"{name:42s} {fused_ms:9.4f} {error:9.2e} {tail}{'' if ok else f'  MISMATCH (atol {atol:g})'}")
    print(f"tensorrt: {'FAILED ' + str(failed) if failed else 'all fused samples built and matched onnxruntime'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
