"""Every shipped sample that surgeon fuses, fused and run in OpenVINO with the extension (CPU,
float32 precision), against the original model in onnxruntime (or, where onnxruntime cannot run
it, the torch module it was exported from). The standard parts run on OpenVINO's own kernels:
held to 1e-4, or the sample's own tolerance where its original rounds (float16 grids)."""

import os

import numpy as np
import pytest

import surgeon
from samples.catalog import BY_FILE, make_inputs

from ..shipped_samples import FUSED, MANIFEST, MODELS, original_outputs


@pytest.mark.parametrize("name", FUSED)
def test_fused_sample_runs_in_openvino(name, core, tmp_path):
    entry = MANIFEST[name]
    path = tmp_path / "fused.onnx"
    surgeon.fuse(os.path.join(MODELS, name), path)
    compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    wanted = {n for port in compiled.inputs for n in port.get_names()}
    for shapes in filter(None, [entry["inputs"], entry.get("alt_inputs")]):
        feeds = make_inputs(BY_FILE[name], shapes, seed=0)
        request = compiled.create_infer_request()
        request.start_async({k: v for k, v in feeds.items() if k in wanted})
        request.wait()
        got = [np.array(t.data) for t in request.output_tensors]
        want = original_outputs(name, feeds)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            tol = max(entry.get("tolerance") or 0, 1e-4)
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=f"{name} {shapes}")
