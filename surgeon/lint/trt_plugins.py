"""TensorRT and plugin nodes (custom op types the parser hands to a plugin): what a plugin can
receive. Its attributes become plugin fields (INT -> int32, FLOAT -> float32, STRING -> char,
INTS -> int32; some types refused), and its output shape is computed from its inputs' *dims*:
a size tensor's values never reach the shape function."""

from __future__ import annotations

from onnx import AttributeProto, TensorProto, helper

from .context import shape_hint
from .report import Hazard
from .trt_facts import FIELD_OF, INT32, PLUGIN_KEYS, SHAPE_INPUTS_KEY, TENSOR_FIELDS, parsed_as_plugin

_ATTR_NAMES = {v: k for k, v in AttributeProto.AttributeType.items()}
_ELEM_NAMES = {v: k.lower() for k, v in TensorProto.DataType.items()}
_SIZE_TYPES = {TensorProto.INT64: "int64", TensorProto.INT32: "int32"}


def check(view, ctx):
    for site in view.sites:
        if site.domain and parsed_as_plugin(site.node.op_type):
            yield from _attributes(site, ctx)
            yield from _size_inputs(view, site, ctx)


def _hazard(site, rule, what, fix):
    return Hazard(rule, site.name, site.node.op_type, site.domain, what, fix, site.graph)


def _attributes(site, ctx):
    profile = f"`surgeon fuse {ctx.model} {ctx.out} --target tensorrt` writes surgeon's ops that way"
    for a in site.node.attribute:
        kind = _ATTR_NAMES.get(a.type, str(a.type))
        if a.name in PLUGIN_KEYS:
            if a.type != AttributeProto.STRING:
                yield _hazard(site, "trt-plugin-key", f"the parser reads {a.name} as a STRING; this {kind} "
                              "attribute makes the plugin lookup fail", f"write {a.name} as a STRING; {profile}")
            elif a.name == "plugin_namespace" and "." in a.s.decode(errors="replace"):
                yield _hazard(site, "trt-plugin-namespace", f"namespace '{a.s.decode(errors='replace')}' has a dot, "
                              "which TensorRT's Python plugin API refuses: no Python plugin can be found under it",
                              f"use a namespace without dots; {profile}")
            continue
        if a.name == SHAPE_INPUTS_KEY:
            continue
        if a.type not in FIELD_OF:
            yield _hazard(site, "trt-attr-type", f"attribute {a.name} is a {kind}: the parser cannot hand it to a "
                          "plugin and refuses the node", "pass it as INT(S), FLOAT(S), STRING(S) or a supported tensor")
        elif a.type == AttributeProto.TENSOR and a.t.data_type not in TENSOR_FIELDS:
            elem = _ELEM_NAMES.get(a.t.data_type, str(a.t.data_type))
            yield _hazard(site, "trt-tensor-attr", f"attribute {a.name} is a {elem} tensor: the parser refuses it as "
                          "a plugin field", "pass it as INTS (read as int32)" if "int" in elem
                          else "pass it as FLOATS or a float32 tensor")
        elif a.type in (AttributeProto.INT, AttributeProto.INTS):
            values = [a.i] if a.type == AttributeProto.INT else list(a.ints)
            wide = [v for v in values if not INT32[0] <= v <= INT32[1]]
            if wide:
                yield _hazard(site, "trt-attr-int32", f"attribute {a.name} holds {wide[0]}, past int32: the parser "
                              "passes it truncated to int32, silently", "keep plugin attributes within int32")


def _size_inputs(view, site, ctx):
    node = site.node
    shape_inputs = set()
    for a in node.attribute:
        if a.name == SHAPE_INPUTS_KEY:
            shape_inputs = {i % max(len(node.input), 1) for i in helper.get_attribute_value(a)}
    out_dims = view.dims(node.output[0]) if node.output and node.output[0] else None
    for i, value in enumerate(node.input):
        kind = _SIZE_TYPES.get(view.elem_type(value)) if value else None
        if kind is None or i in shape_inputs:
            continue
        if view.size_from_shapes(value):
            what = f"input {i} ('{value}') is an {kind} size computed from tensor shapes"
        else:
            const = view.constant(value)
            if const is None or const.ndim != 1 or out_dims is None or len(const) != len(out_dims):
                continue
            what = f"input {i} ('{value}') is an {kind} constant {const.tolist()} the size of the output"
        yield _hazard(site, "trt-plugin-size-input",
                      f"{what}: TensorRT gives a plugin its inputs' dims, not their values, so the output's shape "
                      "cannot follow it", "write the size as an INTS attribute; for surgeon's ops fix the dims so it "
                      f"folds: `surgeon fuse {ctx.model} {ctx.out} --target tensorrt {shape_hint(view)}`")
