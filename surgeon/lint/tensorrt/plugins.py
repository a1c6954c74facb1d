"""TensorRT and plugin nodes (custom op types the parser hands to a plugin): which plugin it
finds and what the plugin can receive. The lookup is (op type, plugin_version, plugin_namespace),
and a plugin set says where its op's plugin registers (``CustomOp.tensorrt_plugin``). Attributes
become plugin fields (INT -> int32, FLOAT -> float32, STRING -> char, INTS -> int32; some types
refused), and the output shape is computed from the inputs' *dims*: a size tensor's values
(computed from shapes, or given at run time) never reach the shape function."""

from __future__ import annotations

from onnx import AttributeProto, TensorProto, helper

from ..context import shape_hint
from ..report import Hazard
from .facts import FIELD_OF, INT32, PLUGIN_KEYS, SHAPE_INPUTS_KEY, TENSOR_FIELDS, parsed_as_plugin

_ATTR_NAMES = {v: k for k, v in AttributeProto.AttributeType.items()}
_ELEM_NAMES = {v: k.lower() for k, v in TensorProto.DataType.items()}
_SIZE_TYPES = {TensorProto.INT64: "int64", TensorProto.INT32: "int32"}


def check(view, ctx):
    sites = [site for site in view.sites if site.domain and parsed_as_plugin(site.node.op_type)]
    sized = {id(site): list(_size_inputs(view, site)) for site in sites}
    hint, examples = shape_hint(view) if any(kind == "shapes" for found in sized.values() for kind, *_ in found) \
        else ("", [])
    for site in sites:
        yield from _attributes(site, ctx, view)
        yield from _lookup(site, ctx, view, hint, examples)
        for kind, i, value, what in sized[id(site)]:
            yield _size_hazard(site, ctx, view, kind, i, value, what, hint, examples)


def _profile(ctx, view, hint: str = "", examples=(), what: str = "writes surgeon's ops that way") -> str:
    command = ctx.tensorrt_command(view, hint)
    if command is None:
        return ""
    example = f" ({', '.join(examples)}: examples, put the sizes you deploy)" if examples else ""
    return f"`{command}` {what}{example}"


def _lookup(site, ctx, view, hint, examples):
    """The plugin a plugin set brings for the op registers under a (name, version, namespace)
    the node's attributes do not look up."""
    op = ctx.custom_op(site.node.domain, site.node.op_type)
    if op is None or op.tensorrt_plugin is None:
        return
    attrs = {a.name: a.s.decode(errors="replace") for a in site.node.attribute
             if a.name in PLUGIN_KEYS and a.type == AttributeProto.STRING}
    if any(a.name in PLUGIN_KEYS and a.type != AttributeProto.STRING for a in site.node.attribute):
        return  # trt-plugin-key says it
    looked = (site.node.op_type, attrs.get("plugin_version", PLUGIN_KEYS["plugin_version"]),
              attrs.get("plugin_namespace", PLUGIN_KEYS["plugin_namespace"]))
    name, version, namespace = op.tensorrt_plugin
    if looked == (name, version, namespace):
        return
    absent = [k for k in PLUGIN_KEYS if k not in attrs]
    why = f" (the node has no {' or '.join(absent)} attribute)" if absent else ""
    fix = _profile(ctx, view, hint, examples, "writes the lookup attributes")
    yield _hazard(site, "trt-plugin-lookup",
                  f"TensorRT looks its plugin up as {looked[0]} version '{looked[1]}' in namespace '{looked[2]}'{why}, "
                  f"but the plugin for {op.label} registers as {namespace}::{name} version '{version}': the parser "
                  "finds no plugin and fails",
                  (fix + "; or " if fix else "") + f"write plugin_namespace='{namespace}' and plugin_version='{version}' "
                  "on the node")


def _hazard(site, rule, what, fix):
    return Hazard(rule, site.name, site.node.op_type, site.domain, what, fix, site.graph)


def _attributes(site, ctx, view):
    profile = _profile(ctx, view) or "`fuse --target tensorrt` writes surgeon's ops that way"
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


def _size_inputs(view, site):
    """(kind, index, value, what) for each int input that sets the output's size: computed from
    shapes ("shapes"), a constant ("constant"), or data known only at run time ("data": a graph
    input, or computed from tensor values)."""
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
            yield "shapes", i, value, f"input {i} ('{value}') is an {kind} size computed from tensor shapes"
            continue
        const = view.constant(value)
        dims = view.dims(value)
        if const is not None:
            if const.ndim == 1 and out_dims is not None and len(const) == len(out_dims):
                yield "constant", i, value, f"input {i} ('{value}') is an {kind} constant {const.tolist()} the size of " \
                                            "the output"
            continue
        if dims is None or len(dims) != 1 or out_dims is None or dims[0] != len(out_dims):
            continue  # not shaped like the output's size: data the plugin reads, not a size
        where = "a graph input" if value in view.graph_inputs else "computed from tensor values"
        yield "data", i, value, f"input {i} ('{value}') is an {kind} size {where}, known only at run time"


def _size_hazard(site, ctx, view, kind, i, value, what, hint, examples):
    if kind == "data":
        fix = ("TensorRT builds an engine for fixed output shapes: give the size as a constant (export with a "
               "fixed size), then " + (_profile(ctx, view, "", (), "writes it as an INTS attribute")
                                       or "`fuse --target tensorrt` writes it as an INTS attribute"))
    else:
        fix = "write the size as an INTS attribute"
        profile = _profile(ctx, view, hint if kind == "shapes" else "", examples if kind == "shapes" else (),
                           "fixes the dims so it folds" if kind == "shapes" else "folds it")
        if profile:
            fix += f"; for surgeon's ops {profile}"
    return _hazard(site, "trt-plugin-size-input",
                   f"{what}: TensorRT gives a plugin its inputs' dims, not their values, so the output's shape "
                   "cannot follow it", fix)
