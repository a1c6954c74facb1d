"""What the rules share besides the model: how to spell the fix commands for this model, the
plugin set (what surgeon can provide for a custom op), the op libraries to check with, and notes
on what could not be checked."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .view import ModelView


@dataclass
class LintContext:
    model: str = "MODEL"  # the path as the user gave it, for the fix commands
    plugins: object = None  # a PluginSet, resolved on first use
    ort_libraries: tuple = ()  # op libraries the user registers in onnxruntime (paths)
    notes: list = field(default_factory=list)

    @property
    def out(self) -> str:
        stem, _ = os.path.splitext(self.model)
        return f"{stem}.trt.onnx" if self.model != "MODEL" else "OUT"

    def plugin_set(self):
        if self.plugins is None or isinstance(self.plugins, (list, tuple)):
            from ..plugins import resolve

            self.plugins = resolve(self.plugins)
        return self.plugins

    def custom_op(self, domain: str, op_type: str):
        """What the plugin set brings for the op (None: nothing, or two plugins disagree)."""
        from ..errors import SurgeonError

        try:
            return self.plugin_set().op(domain, op_type)
        except SurgeonError:
            return None

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def shape_hint(view: ModelView) -> str:
    """--input-shape options for the model's inputs with dynamic dims (named dims left as names)."""
    hints = []
    for vi in view.proto.graph.input:
        if vi.name not in view.graph_inputs:
            continue
        dims = view.dims(vi.name)
        if dims is None or all(isinstance(d, int) for d in dims):
            continue
        hints.append(f"--input-shape {vi.name}:" + ",".join(str(d) if isinstance(d, int) else (d or "?") for d in dims))
    return " ".join(hints) or "--input-shape NAME:D1,D2,..."
