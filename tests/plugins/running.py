"""Running what the plugin tests fuse: the docs' runnable examples imported as a reader saves them,
the plugin sample's manifest and feeds, an original model in onnxruntime, a fused one on a
pattern's reference kernels, and a look at its custom nodes (models are in tests.builders)."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from surgeon.graph.attrs import read_attribute

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_MODELS = ROOT / "samples" / "models"
PLUGIN_MODELS = ROOT / "samples" / "plugin-example" / "models"


def import_doc_example(doc: str, module: str, folder: Path):
    """The ```python block of docs/``doc`` that opens with ``# module.py``, written into ``folder``
    (which the caller puts on sys.path) and imported: the example as a reader would save it."""
    text = (ROOT / "docs" / doc).read_text()
    [code] = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if b.startswith(f"# {module}.py")]
    (folder / f"{module}.py").write_text(code)
    return importlib.import_module(module)


def plugin_manifest() -> dict:
    return json.loads((PLUGIN_MODELS / "manifest.json").read_text())


def feeds_for(shapes: dict, seed: int = 1) -> dict:
    """Images in [0, 1), flows of a few pixels (big enough to leave the image at the borders)."""
    rng = np.random.default_rng(seed)
    return {name: (rng.standard_normal(shape) * 2 if name == "flow" else rng.random(shape)).astype(np.float32)
            for name, shape in shapes.items()}


def run_original(path, feeds) -> list[np.ndarray]:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def run_with_kernels(model: onnx.ModelProto, feeds: dict, pattern) -> list[np.ndarray]:
    """Run a rewritten model: standard ops in onnx's reference evaluator, custom ops on the
    kernels of ``pattern``'s ``ops``, called as surgeon's runtime calls them: (inputs, plain attrs)."""
    ops = []
    for custom in pattern.custom_ops():
        domain, op_type, fn = custom.domain, custom.op_type, custom.kernel
        def _run(self, *inputs, _fn=fn, **_ignored):
            attrs = {a.name: read_attribute(a) for a in self.onnx_node.attribute}
            return tuple(_fn(list(inputs), attrs, device="cpu"))

        ops.append(type(op_type, (OpRun,), {"op_domain": domain, "_run": _run}))
    return ReferenceEvaluator(model, new_ops=ops).run(None, feeds)


def custom_nodes(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    return [n for n in model.graph.node if n.domain]


def attributes(node: onnx.NodeProto) -> dict:
    out = {}
    for a in node.attribute:
        value = helper.get_attribute_value(a)
        out[a.name] = value.decode() if isinstance(value, bytes) else value
    return out
