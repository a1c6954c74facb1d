"""One op (or a few) proved by the engine's rules, standalone: the region is the given nodes, its
leaves a variable ``v`` (affine, each element its own read bit) and shape-derived ``d`` (sizes),
constants are initializers; values come from onnxruntime at the opset asked. And the numbers a
verdict is checked against: the region run on values of ``v``."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import helper, numpy_helper

from surgeon.graph.node import Node
from surgeon.recognise import dims, prove, variable

from ..builders import INT64, onnx_model, value_info


class RuleRegion:
    def __init__(self, nodes, opset: int = 18, v=(2, 3), d=None, consts=None, output="y"):
        """``nodes``: NodeProtos; ``v``: the variable's shape (float32); ``d``: the sizes leaf's
        value (int64), or None; ``consts``: name -> array."""
        self.nodes, self.opset, self.output = nodes, opset, output
        self.v_shape, self.d = tuple(v), None if d is None else np.asarray(d, np.int64)
        self.consts = {k: np.asarray(a) for k, a in (consts or {}).items()}

    # -- running it ------------------------------------------------------------------------
    def _model(self, outputs):
        inputs = [value_info("v", self.v_shape)] + ([value_info("d", self.d.shape, INT64)] if self.d is not None else [])
        return onnx_model(self.nodes, inputs, [helper.make_empty_tensor_value_info(o) for o in outputs],
                          [numpy_helper.from_array(a, k) for k, a in self.consts.items()], opset=self.opset,
                          domains={"com.microsoft": 1}, ir_version=8, name="region")

    def run(self, v, outputs=None):
        outputs = outputs or [self.output]
        options = ort.SessionOptions()
        options.log_severity_level = 3
        session = ort.InferenceSession(self._model(outputs).SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        feeds = {"v": np.asarray(v, np.float32)}
        if self.d is not None:
            feeds["d"] = self.d
        return session.run(outputs, feeds)

    # -- what the context gives the rules ----------------------------------------------------
    def opset_of(self, domain: str = "") -> int:
        return self.opset

    def constant(self, name):
        return self.consts.get(name)

    def evaluate(self, outputs, feeds):
        return self.run(feeds["v"], list(outputs))

    def prove(self):
        """The output's ``Abstract`` (raises ``NotProved``)."""
        sample = np.random.default_rng(0).standard_normal(self.v_shape).astype(np.float32)
        leaves = {"v": variable(self.v_shape, min(int(np.prod(self.v_shape)), 32))}
        feeds = {"v": sample}
        if self.d is not None:
            leaves["d"], feeds["d"] = dims(self.d.shape, 1, np.inf), self.d
        nodes = [Node(n, i) for i, n in enumerate(self.nodes)]
        return prove(_Context(self), nodes, [self.output], leaves, feeds).outputs[self.output]


class _Context:
    def __init__(self, region: RuleRegion):
        self.region = region

    def opset(self, domain: str = "") -> int:
        return self.region.opset

    def constant(self, name):
        return self.region.constant(name)

    def evaluate(self, outputs, feeds):
        return self.region.evaluate(outputs, feeds)


def is_affine_numerically(region: RuleRegion, trials: int = 4) -> bool:
    """f(a) - 2 f(b) + f(2b - a) == 0 for random a, b (an affine f passes; a clamp, a product, a
    branch is caught where it bends): the witness each "neither" verdict is checked against."""
    rng = np.random.default_rng(1)
    for _ in range(trials):
        a, b = (rng.standard_normal(region.v_shape) * 10 for _ in range(2))
        fa, fb, fc = (region.run(t)[0].astype(np.float64) for t in (a, b, 2 * b - a))
        if not np.allclose(fa - 2 * fb + fc, 0, atol=1e-3 * (1 + np.abs(fb).max())):
            return False
    return True
