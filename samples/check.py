"""Checks a sample model against the torch module it came from (used by the export script
and tests/test_samples.py)."""
import copy

import numpy as np
import onnx
import onnxruntime as ort
import torch

# ONNX names of GridSample modes per opset; torch names otherwise.
_OPSET20_MODE = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}


def torch_outputs(sample, feeds):
    module = sample.build().eval()
    with torch.no_grad():
        out = module(*[torch.from_numpy(np.asarray(feeds[n])) for n in sample.inputs])
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


def seed_as_standard(model):
    """The seed recipe's custom.ops::AffineGrid has the standard op's inputs and meaning, so
    renaming it (and moving to opset 20) gives a model ORT can run for a numeric check."""
    m = copy.deepcopy(model)
    for n in m.graph.node:
        if n.domain == "custom.ops" and n.op_type == "AffineGrid":
            n.domain = ""
        elif n.op_type == "GridSample":
            for a in n.attribute:
                if a.name == "mode":
                    a.s = _OPSET20_MODE[a.s.decode()].encode()
    keep = [o for o in m.opset_import if o.domain not in ("", "ai.onnx", "custom.ops")]
    del m.opset_import[:]
    m.opset_import.extend(keep + [onnx.helper.make_opsetid("", 20)])
    return m


def runnable(sample, model):
    """The model in a form onnxruntime can run, or None (ATen nodes need a training build)."""
    if sample.exporter == "torchscript+aten_fallback":
        return None
    if sample.exporter == "torchscript+autograd_symbolic":
        return seed_as_standard(model)
    return model


def ort_outputs(model, feeds):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def max_error(sample, model, feeds):
    """Largest |ORT - torch| over all outputs, or None when ORT cannot run the model."""
    m = runnable(sample, model)
    if m is None:
        return None
    got, want = ort_outputs(m, feeds), torch_outputs(sample, feeds)
    assert len(got) == len(want), (len(got), len(want))
    for g, w in zip(got, want):
        assert g.shape == w.shape, (g.shape, w.shape)
    return max(float(np.abs(g - w).max()) for g, w in zip(got, want))
