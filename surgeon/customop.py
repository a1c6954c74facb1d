"""What a plugin brings for a custom op it writes: the ways to run or replace one node.

Every field but the op's name is optional; the engine uses what is there:

- ``kernel(inputs, attrs, device="cpu") -> [arrays]``: a reference kernel. ``inputs`` are numpy
  arrays (None for an absent optional input), ``attrs`` plain values (INT -> int, STRING -> str,
  INTS -> list). ``run`` and ``validate`` call it for each node when no runtime library is used.
- ``ort_library(device) -> path | None``: an onnxruntime custom-op library implementing the op
  for ``device`` ("cpu" or "cuda"), built on first call if need be; None when it cannot be had
  on this machine. ``run`` and ``validate`` then run the model whole in one onnxruntime session.
- ``to_standard(ctx, node, opset)``: writes standard ONNX computing the node's outputs (with the
  ``RewriteContext`` a pattern's ``rewrite`` gets) for default-domain opset ``opset``, or returns
  a reason (str) why that opset cannot express it. ``unfuse`` uses it.
- ``function(opset, arity) -> FunctionProto``: a model-local function body for the op with
  ``arity`` inputs, for ``fuse(functions=True)``.
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
    ort_library: Callable[[str], "str | None"] | None = None
    to_standard: Callable[..., "str | None"] | None = None
    function: Callable[[int, int], Any] | None = None
    draw_inputs: Mapping[int, Draw] | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.domain, self.op_type)

    @property
    def label(self) -> str:
        return f"{self.domain}::{self.op_type}"
