"""The checked-in sample models: valid, small, in sync with the catalog, and numerically equal
to the torch modules they were exported from. Never runs an exporter (see
samples/export_samples.py to regenerate)."""
import json
import os
import sys

import onnx
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from samples import check  # noqa: E402
from samples.catalog import BY_FILE, SAMPLES, make_inputs, manifest_entry  # noqa: E402

from .shipped_samples import MODELS, all_nodes  # noqa: E402
FILES = [s.file for s in SAMPLES]
SAMPLERS = {("", "GridSample"), ("com.microsoft", "GridSample")}


@pytest.fixture(scope="module")
def manifest():
    with open(os.path.join(MODELS, "manifest.json")) as f:
        return json.load(f)


def test_manifest_matches_catalog(manifest):
    # A stale manifest means the script was edited but not rerun.
    assert sorted(manifest) == sorted(FILES)
    for s in SAMPLES:
        assert manifest[s.file] == json.loads(json.dumps(manifest_entry(s))), s.file
        for key in ("inputs", "expected", "chains", "exporter", "opset", "align_corners",
                    "mode", "padding_mode", "dims"):
            assert key in manifest[s.file]


@pytest.mark.parametrize("name", FILES)
def test_model(name):
    s, path = BY_FILE[name], os.path.join(MODELS, name)
    assert os.path.getsize(path) < 100 * 1024
    model = onnx.load(path)
    onnx.checker.check_model(model)
    assert [i.name for i in model.graph.input] == list(s.inputs)
    assert [o.name for o in model.graph.output] == s.outputs
    nodes = list(all_nodes(model.graph))
    kinds = [(n.domain, n.op_type) for n in nodes]
    aten = {n.attribute[0].s.decode() for n in nodes if n.op_type == "ATen"}
    samplers = sum(k in SAMPLERS for k in kinds) + ("grid_sampler" in aten)
    assert samplers >= max(s.chains, 1)
    if s.exporter == "dynamo":
        assert ("", "AffineGrid") not in kinds   # dynamo always decomposes affine_grid
    if s.exporter == "torchscript+aten_fallback":
        assert aten == {"affine_grid_generator", "grid_sampler"}
    if s.exporter == "torchscript+autograd_symbolic":
        (grid,) = [n.output[0] for n in nodes if n.domain == "custom.ops"]
        (vi,) = [v for v in model.graph.value_info if v.name == grid]
        assert all(d.dim_param for d in vi.type.tensor_type.shape.dim)  # meaningless symbols
    # Both shape sets (the second exercises the dynamic axes; for If models, cond=False).
    errors = [check.max_error(s, model, make_inputs(s, shapes, seed))
              for seed, shapes in ((0, s.inputs), (1, s.alt_inputs)) if shapes]
    if s.reference == "onnxruntime":  # the export computes what torch does not (size-1 dims)
        assert max(errors) > 0.1, (name, errors)
    else:
        assert all(err is None or err < (s.tolerance or 1e-5) for err in errors), (name, errors)
    if check.runnable(s, model) is None:
        assert s.exporter == "torchscript+aten_fallback"
