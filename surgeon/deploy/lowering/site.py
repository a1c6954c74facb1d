"""What a lowering reads about the node it lowers: attributes, constants, types and shapes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from onnx import NodeProto, helper

from .builder import NodeBuilder


@dataclass
class Site:
    node: NodeProto
    have: int  # the model's default-domain opset
    target: int  # the opset being written
    build: NodeBuilder
    elem_of: Callable[[str], "int | None"]
    dims_of: Callable[[str], "tuple | None"]
    constant_of: Callable[[str], "np.ndarray | None"]

    def attr(self, name: str, default=None):
        for a in self.node.attribute:
            if a.name == name:
                value = helper.get_attribute_value(a)
                return value.decode() if isinstance(value, bytes) else value
        return default

    def input(self, i: int) -> str | None:
        return self.node.input[i] if len(self.node.input) > i and self.node.input[i] else None

    def rank(self, value: str) -> int | None:
        dims = self.dims_of(value)
        return len(dims) if dims is not None else None
