"""Every shipped sample (and the plugin example's) through each way out of a fused file, in
plain onnxruntime against the original: `unfuse` at opsets 16 and 20, `fuse --functions
--raise-opset`, and the same bodies on a float16 conversion of the fused file (against the op
library on that file). Prints one line per model and the counts; figures for issue notes.

    python samples/deploy_matrix.py [--samples-only]
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import surgeon  # noqa: E402
import surgeon_ops.ort  # noqa: E402
from samples import check  # noqa: E402
from samples.catalog import BY_FILE, make_inputs  # noqa: E402


def plain(model, feeds):
    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    return session.run(None, {k: v for k, v in feeds.items() if k in names})


def worst(got, want) -> float:
    return max((float(np.abs(g.astype(np.float64) - w.astype(np.float64)).max()) if g.size else 0.0)
               for g, w in zip(got, want))


def half(model):
    """A float16 conversion of a model (weights, inputs, outputs, Constants and Casts), as
    float16 converters write them."""
    model = onnx.load_from_string(model.SerializeToString())
    g = model.graph

    def tensors(graph):
        yield from graph.initializer
        for n in graph.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.TENSOR:
                    yield a.t
    for t in list(tensors(g)):
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.FLOAT16
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    return model


def models(samples_only: bool):
    manifest_dirs = [os.path.join(ROOT, "samples", "models")]
    if not samples_only:
        manifest_dirs.append(os.path.join(ROOT, "samples", "plugin-example", "models"))
    for folder in manifest_dirs:
        for path in sorted(glob.glob(os.path.join(folder, "*.onnx"))):
            yield path


def feeds_of(path):
    import json

    manifest = json.load(open(os.path.join(os.path.dirname(path), "manifest.json")))
    name = os.path.basename(path)
    entry = manifest.get(name)
    if entry is None or name not in BY_FILE:
        return None, None
    return make_inputs(BY_FILE[name], entry["inputs"], seed=0), entry


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples-only", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    counts = {k: [0, 0] for k in ("unfuse 16", "unfuse 20", "functions", "functions float16")}
    for path in models(args.samples_only):
        name = os.path.basename(path)
        feeds, entry = feeds_of(path)
        if feeds is None:
            continue
        original = check.runnable(BY_FILE[name], onnx.load(path))
        want = plain(original, feeds) if original is not None else check.torch_outputs(BY_FILE[name], feeds)
        tol = max(entry.get("tolerance") or 0.0, 1e-4)
        fused = surgeon.fuse(path).model
        row = []
        for key, make in (("unfuse 16", lambda: surgeon.unfuse(fused, opset=16).model),
                          ("unfuse 20", lambda: surgeon.unfuse(fused, opset=20).model),
                          ("functions", lambda: surgeon.fuse(path, functions=True, raise_opset=True).model)):
            counts[key][1] += 1
            try:
                err = worst(plain(make(), feeds), want)
                ok = err <= tol
                row.append(f"{key}: {'ok' if ok else 'DIFF'} {err:.1e}")
                counts[key][0] += ok
            except Exception as exc:
                row.append(f"{key}: FAIL {str(exc).splitlines()[0][:90]}")
        try:  # float16: the op library on the converted fused file is the reference
            h = half(fused)
            hfeeds = {k: v.astype(np.float16) if v.dtype == np.float32 else v for k, v in feeds.items()}
            session = surgeon_ops.ort.session(h)
            names = {i.name for i in session.get_inputs()}
            ref = session.run(None, {k: v for k, v in hfeeds.items() if k in names})
        except Exception:
            ref = None  # the conversion itself does not run (an op without float16): not counted
        if ref is not None:
            counts["functions float16"][1] += 1
            try:
                bodies = surgeon.fuse(h, functions=True, raise_opset=True).model
                err = worst(plain(bodies, hfeeds), ref)
                ok = err <= 1e-2
                row.append(f"float16: {'ok' if ok else 'DIFF'} {err:.1e}")
                counts["functions float16"][0] += ok
            except Exception as exc:
                row.append(f"float16: FAIL {str(exc).splitlines()[0][:90]}")
        print(f"{name}: " + "; ".join(row), flush=True)
    print(" ".join(f"{k} {ok}/{n}" for k, (ok, n) in counts.items()))


if __name__ == "__main__":
    main()
