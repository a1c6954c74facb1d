"""What the rules share besides the model: how to spell the fix commands for this model, the
plugin set (what surgeon can provide for a custom op), the op libraries to check with, and notes
on what could not be checked.

Every command a fix names runs as printed, from the folder the lint ran in: the model's path as
given, output paths beside it, concrete dims (an example value where the model leaves a dim
open, said so in the text)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .view import ModelView

EXAMPLE_DIM = 256  # printed for a dim the model leaves open (other than the batch, printed as 1)


@dataclass
class LintContext:
    model: str = "MODEL"  # the path as the user gave it, for the fix commands
    plugins: object = None  # a PluginSet, resolved on first use
    ort_libraries: tuple = ()  # op libraries the user registers in onnxruntime (paths)
    ov_extensions: tuple = ()  # extensions the user adds to OpenVINO's Core (paths)
    notes: list = field(default_factory=list)
    after_fuse: bool = False  # linting what `fuse --target` wrote from ``model``: fuse is no fix
    target: str = ""  # the engine linted for
    source: str = ""  # the file as the engine will read it ("": a model not written yet)
    loaded: object = None  # the LoadedModel linted (its external weights, to write it as fuse would)

    def path(self, suffix: str) -> str:
        """A file beside the model for a command's output ("x.onnx" -> "x.SUFFIX.onnx")."""
        stem, _ = os.path.splitext(self.model)
        return f"{stem}.{suffix}.onnx" if self.model != "MODEL" else suffix.upper()

    @property
    def out(self) -> str:
        return self.path("trt")

    def plugin_set(self):
        if self.plugins is None or isinstance(self.plugins, (list, tuple)):
            from ..rewrite.plugins import resolve

            self.plugins = resolve(self.plugins)
        return self.plugins

    def custom_op(self, domain: str, op_type: str):
        """What the plugin set brings for the op (None: nothing, or two plugins disagree)."""
        from ..errors import SurgeonError

        try:
            return self.plugin_set().op(domain, op_type)
        except SurgeonError:
            return None

    def unfusable(self, view: ModelView) -> bool:
        """The model holds custom nodes a plugin writes back as standard ONNX (a fused file)."""
        return any(s.domain and (op := self.custom_op(s.node.domain, s.node.op_type)) is not None
                   and op.to_standard is not None for s in view.sites)

    def tensorrt_command(self, view: ModelView, shapes: str = "") -> str | None:
        """The command writing the model in surgeon's TensorRT profile: from a fused file, by way
        of its standard form (fuse reads it back). None after fuse itself (it is what ran)."""
        if self.after_fuse:
            return None
        fuse = f"--target tensorrt{' ' + shapes if shapes else ''}"
        if self.unfusable(view):
            std = self.path("std")
            return f"surgeon unfuse {self.model} {std} && surgeon fuse {std} {self.out} {fuse}"
        return f"surgeon fuse {self.model} {self.out} {fuse}"

    def converts_to(self, view: ModelView, opset: int) -> bool:
        """The model converts to ``opset`` (tried on a copy, once per opset)."""
        cache = self.__dict__.setdefault("_converts", {})
        if opset not in cache:
            from onnx import ModelProto

            from ..errors import SurgeonError
            from ..io.load import skeleton_model
            from ..deploy.opsets import convert

            copy = ModelProto()
            copy.CopyFrom(skeleton_model(view.proto, keep_small=64))
            try:
                convert(copy, opset)
                cache[opset] = True
            except SurgeonError:
                cache[opset] = False
        return cache[opset]

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def shape_hint(view: ModelView) -> tuple[str, list[str]]:
    """--input-shape options fixing every dynamic dim of the model's inputs, and the dims given
    an example value (the batch as 1, others EXAMPLE_DIM), which the user replaces by theirs."""
    hints, examples = [], []
    for vi in view.proto.graph.input:
        if vi.name not in view.graph_inputs:
            continue
        dims = view.dims(vi.name)
        if dims is None or all(isinstance(d, int) for d in dims):
            continue
        values = []
        for i, d in enumerate(dims):
            if isinstance(d, int):
                values.append(str(d))
                continue
            value = 1 if i == 0 else EXAMPLE_DIM
            examples.append(f"{vi.name}[{i}]{f' ({d})' if d else ''}={value}")
            values.append(str(value))
        hints.append(f"--input-shape {vi.name}:" + ",".join(values))
    return " ".join(hints), examples
