"""Regenerate the sample models: python samples/export_samples.py [--out samples/models]

Slow (the dynamo exporter takes seconds per model), so tests never run it; they load the
checked-in files. Deterministic: weights and inputs come from fixed numpy seeds.
"""
import argparse
import contextlib
import json
import logging
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import onnx  # noqa: E402
import torch  # noqa: E402
from torch.export import Dim  # noqa: E402
from torch.onnx import symbolic_helper  # noqa: E402

from samples import check, handmade  # noqa: E402
from samples.catalog import SAMPLES, make_inputs, manifest_entry  # noqa: E402


@contextlib.contextmanager
def quiet(enabled=True):
    """Silence exporter chatter, including C++ warnings written straight to fd 2."""
    if not enabled:
        yield
        return
    sys.stdout.flush(), sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1), os.dup2(null, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        sys.stdout.flush(), sys.stderr.flush()
        os.dup2(saved[0], 1), os.dup2(saved[1], 2)
        for fd in saved + [null]:
            os.close(fd)


def example_args(s):
    return tuple(torch.from_numpy(v) for v in make_inputs(s).values())


def output_axes(s):
    """Outputs follow x's dynamic axes when H/W move, else only the batch (unless said)."""
    if s.output_axes:
        return {o: s.output_axes for o in s.outputs}
    x_axes = (s.dynamic or {}).get("x", {})
    axes = x_axes if len(x_axes) > 1 else {0: "N"} if s.dynamic else None
    return {o: axes for o in s.outputs} if axes else {}


def export_torchscript(s, path, **extra):
    dyn = {k: v for k, v in (s.dynamic or {}).items()}
    dyn.update(output_axes(s))
    torch.onnx.export(s.build().eval(), example_args(s), path, dynamo=False,
                      opset_version=s.opset, input_names=list(s.inputs),
                      output_names=s.outputs, dynamic_axes=dyn or None, **extra)


def export_dynamo(s, path):
    dims = {}

    def dim(name):
        return Dim.AUTO if s.auto else dims.setdefault(name, Dim(name))

    shapes = None
    if s.dynamic:
        shapes = {k: ({a: dim(n) for a, n in s.dynamic[k].items()} if k in s.dynamic else None)
                  for k in s.inputs}
    torch.onnx.export(s.build().eval(), example_args(s), path, dynamo=True,
                      opset_version=s.opset, input_names=list(s.inputs),
                      output_names=s.outputs, dynamic_shapes=shapes, external_data=False,
                      verbose=False)


_MODES, _PADS = ["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"]


@symbolic_helper.parse_args("v", "v", "i", "i", "b")
def _ms_grid_sampler(g, x, grid, mode, pad, align_corners):
    # onnxruntime's contrib GridSample: the pre-opset-16 way to get a sampler into ONNX.
    return g.op("com.microsoft::GridSample", x, grid, mode_s=_MODES[mode],
                padding_mode_s=_PADS[pad], align_corners_i=int(align_corners))


def export_ms(s, path):
    torch.onnx.register_custom_op_symbolic("::grid_sampler", _ms_grid_sampler, s.opset)
    try:
        export_torchscript(s, path, custom_opsets={"com.microsoft": 1})
    finally:
        torch.onnx.unregister_custom_op_symbolic("::grid_sampler", s.opset)


EXPORTERS = {
    "torchscript": export_torchscript,
    "torchscript+autograd_symbolic": export_torchscript,
    "torchscript+aten_fallback": lambda s, p: export_torchscript(
        s, p, operator_export_type=torch.onnx.OperatorExportTypes.ONNX_ATEN_FALLBACK),
    "torchscript+ms_symbolic": export_ms,
    "dynamo": export_dynamo,
    "onnx.helper": lambda s, p: onnx.save(handmade.BUILDERS[s.file](s.opset), p),
}


def verify(s, path):
    model = onnx.load(path)
    onnx.checker.check_model(model)
    errs = [check.max_error(s, model, make_inputs(s, shapes, seed))
            for seed, shapes in ((0, s.inputs), (1, s.alt_inputs)) if shapes]
    return len(model.graph.node), os.path.getsize(path), errs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "models"))
    ap.add_argument("--only", nargs="*", help="file names to regenerate")
    ap.add_argument("--verbose", action="store_true", help="show exporter output")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    logging.getLogger("torch").setLevel(logging.ERROR)
    torch.manual_seed(0)
    manifest, failed = {}, []
    for s in SAMPLES:
        path = os.path.join(args.out, s.file)
        if args.only and s.file not in args.only:
            if os.path.exists(path):
                manifest[s.file] = manifest_entry(s)
            continue
        t0 = time.time()
        try:
            with quiet(not args.verbose):
                EXPORTERS[s.exporter](s, path)
            nodes, size, errs = verify(s, path)
        except Exception as e:  # record and go on: one broken exporter must not stop the rest
            failed.append(s.file)
            print(f"FAIL {s.file}: {type(e).__name__}: {str(e)[:400]}")
            continue
        manifest[s.file] = manifest_entry(s)
        err = ", ".join("n/a" if e is None else f"{e:.1e}" for e in errs)
        print(f"ok   {s.file:42s} {nodes:3d} nodes {size / 1024:6.1f} KB  "
              f"max|ort-torch| {err}  ({time.time() - t0:.1f} s)")
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        # Files sorted; keys inside an entry keep their order (inputs in graph order).
        json.dump({k: manifest[k] for k in sorted(manifest)}, f, indent=1)
        f.write("\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
