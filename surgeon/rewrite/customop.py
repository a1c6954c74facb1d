"""What a plugin brings for a custom op it writes: the ways to run or replace one node.

Every field but the op's name is optional; the engine uses what is there:

- ``kernel(inputs, attrs, device="cpu") -> [arrays]``: a reference kernel. ``inputs`` are numpy
  arrays (None for an absent optional input), ``attrs`` plain values (INT -> int, STRING -> str,
  INTS -> list). ``run`` and ``validate`` call it for each node when no runtime library is used.
- ``ort_library(device) -> path``: an onnxruntime custom-op library implementing the op for
  ``device`` ("cpu" or "cuda"), built on first call if need be; it raises, with a one-line
  reason, when it cannot be had on this machine. ``run`` and ``validate`` then run the op inside
  onnxruntime (the whole model in one session when every custom op has a library).
- ``openvino_extension() -> path``: an OpenVINO extension library (``Core.add_extension``)
  whose ONNX-frontend conversion and operation implement the op; it raises, with a one-line
  reason, when it cannot be had here. ``run`` / ``validate --engine openvino`` add it to the
  Core that reads the model, and ``lint --target openvino`` checks nodes with it.
- ``to_standard(ctx, node, opset) -> None | str``: writes standard ONNX computing the node's
  outputs, under their names (with the ``RewriteContext`` a pattern's ``rewrite`` gets), for
  default-domain opset ``opset``; or returns a reason (str) why that opset cannot express this
  node, writing nothing. ``unfuse`` uses it; the engine removes the node.
- ``standard_op``: the name of a standard (default-domain) op that this op equals node for node:
  the same inputs, attributes and outputs, meaning the same. ``unfuse`` to an opset before that
  op's first writes such standard nodes with this op's ``to_standard``, as it does this op's.
- ``function(opset, input_shapes) -> FunctionProto | str``: a model-local function body for the
  op at default-domain opset ``opset``, for a node whose inputs have these shapes (one entry per
  input given: the arity is ``len(input_shapes)``; each a tuple of dims, int or str, or None
  where unknown); or a reason (str) the opset cannot express it. Shapes, not just the arity,
  because what a body can express may depend on them (a rank the opset lacks). All nodes of one
  op must get the same body (a function's inputs are fixed). ``fuse(functions=True)`` uses it
  and writes the body's declared attribute defaults on every node that omits them.
- ``tensorrt_plugin``: ``(name, version, namespace)`` under which the op's TensorRT plugin
  registers. TensorRT's parser looks a node's plugin up by its op type and its
  ``plugin_version`` / ``plugin_namespace`` attributes (defaults "1" and ""): ``surgeon lint
  --target tensorrt`` flags a node whose lookup would miss it.
- ``position_inputs``: indices of inputs whose values say where the op reads its data
  (coordinates, transforms), as opposed to the data it reads: rounding them moves the samples.
  ``surgeon lint --target openvino`` flags such inputs computed through ops an engine runs in
  reduced precision.
- ``draw_inputs``: ``{input index: draw(shape, dtype, rng) -> array}`` for inputs whose values
  random data would not exercise (a transform matrix: uniform noise never flips or rotates it).
  ``validate`` draws a model input with it when that input reaches the op's input unchanged
  but for its shape or type; the function's docstring says what it draws, in the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

Kernel = Callable[..., Any]
Draw = Callable[..., Any]  # (shape, dtype, rng) -> numpy array


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: runners are cached by it
class CustomOp:
    domain: str
    op_type: str
    kernel: Kernel | None = None
    ort_library: Callable[[str], str] | None = None
    openvino_extension: Callable[[], str] | None = None
    to_standard: Callable[..., "str | None"] | None = None
    standard_op: str | None = None
    function: Callable[..., Any] | None = None
    draw_inputs: Mapping[int, Draw] | None = None
    position_inputs: tuple[int, ...] = ()
    tensorrt_plugin: tuple[str, str, str] | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.domain, self.op_type)

    @property
    def label(self) -> str:
        return f"{self.domain}::{self.op_type}"
