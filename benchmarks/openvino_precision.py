"""What OpenVINO's default CPU precision does to the shipped samples, and what lint says of it.

    python benchmarks/openvino_precision.py [--samples NAME.onnx ...] [--smoke]

For every sample surgeon fuses: the original and the fused file (with surgeon_ops.openvino's
extension) compiled for the CPU at OpenVINO's default precision (bf16 where the CPU has it) and
at INFERENCE_PRECISION_HINT=f32, each output's max |difference| from the original run in
onnxruntime (or torch, where onnxruntime cannot run it) on the sample's own inputs, and whether
`surgeon lint --target openvino` flags a precision hazard (ov-grid-precision). A model OpenVINO
cannot read shows the reason instead, and an output of another shape than the original's says so.

--smoke (the tests run it, seconds): four samples, one of each kind of row (one lint passes, one
lint flags, a 3-D one OpenVINO cannot read, one it computes at another shape).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # samples/, tests/
SMOKE_SAMPLES = ["affine_dynamo_opset18_2d.onnx", "stn_ts_opset20_2d.onnx", "affine_ts_opset20_3d.onnx",
                 "size_one_rows_ts_opset20.onnx"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", nargs="+", metavar="NAME.onnx", help="only these samples (default: every one)")
    parser.add_argument("--smoke", action="store_true", help="check the script in seconds: four samples")
    args = parser.parse_args()
    if args.smoke:
        args.samples = SMOKE_SAMPLES
        print(f"SMOKE: {len(SMOKE_SAMPLES)} samples")
    import openvino as ov

    import surgeon
    import surgeon_ops.openvino
    from samples.catalog import BY_FILE, make_inputs
    from surgeon.lint import lint
    from surgeon.runtime.openvino import ov_message
    from tests.ort.test_samples import original_outputs

    models = os.path.join(ROOT, "samples", "models")
    manifest = json.load(open(os.path.join(models, "manifest.json")))
    core = surgeon_ops.openvino.core()
    default = core.get_property("CPU", "INFERENCE_PRECISION_HINT").get_type_name()
    print(f"OpenVINO {ov.__version__.split('-')[0]}, CPU default precision {default}; max |y - original| at "
          f"{default} / f32; lint: ov-grid-precision flagged (yes/no)")
    print(f"{'sample':42} {'original ' + default:>14} {'f32':>9} {'lint':>4}   {'fused ' + default:>12} "
          f"{'f32':>9} {'lint':>4}")
    with tempfile.TemporaryDirectory() as tmp:
        names = sorted(n for n, e in manifest.items() if e["expected"] == "fuse")
        unknown = set(args.samples or []) - set(names)
        if unknown:
            sys.exit(f"not a sample surgeon fuses: {', '.join(sorted(unknown))}")
        for name in [n for n in names if n in args.samples] if args.samples else names:
            sample = BY_FILE[name]
            feeds = make_inputs(sample, manifest[name]["inputs"], seed=0)
            want = original_outputs(name, feeds)
            fused = os.path.join(tmp, name)
            surgeon.fuse(os.path.join(models, name), fused)
            cells = []
            for path in (os.path.join(models, name), fused):
                flagged = any(h.rule == "ov-grid-precision"
                              for h in lint(path, "openvino", ov_extensions=["surgeon"]).hazards)
                try:
                    read = core.read_model(path)
                    names = {n for port in read.inputs for n in port.get_names()}
                    errors = []
                    for config in ({}, {"INFERENCE_PRECISION_HINT": "f32"}):
                        request = core.compile_model(read, "CPU", config).create_infer_request()
                        request.start_async({k: v for k, v in feeds.items() if k in names})
                        request.wait()
                        got = [np.asarray(t.data, np.float64) for t in request.output_tensors]
                        wrong = [f"{list(g.shape)} not {list(w.shape)}" for g, w in zip(got, want) if g.shape != w.shape]
                        if wrong:  # OpenVINO computed another shape: no difference to speak of
                            raise ValueError(f"shape {wrong[0]}")
                        errors.append(max(float(np.abs(g - w).max()) for g, w in zip(got, want)))
                    cells.append(f"{errors[0]:14.3g} {errors[1]:9.2g} {'yes' if flagged else 'no':>4}")
                except ValueError as exc:
                    cells.append(f"{str(exc):>29}")
                except Exception as exc:
                    cells.append(f"{'cannot read: ' + ov_message(exc)[:28]:>29}")
            print(f"{name:42} {cells[0]}   {cells[1]}")


if __name__ == "__main__":
    main()
