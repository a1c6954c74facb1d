"""onnx.version_converter's adapters, found by asking it: for every default-domain op and every
version v above 16, a one-node model of the op at opset v is stepped down to v - 1. The node is
the smallest the schema allows (its required inputs, float where the type may be, its required
attributes), so what fails is the adapter lookup itself, not the node."""

from __future__ import annotations

import onnx.defs
from onnx import AttributeProto, TensorProto, checker, helper, version_converter

FLOOR = 16  # unfuse's lowest opset (GridSample starts there)
_PREFERRED = ["float", "int64", "int32", "bool", "string", "uint8"]
_ATTR_VALUES = {AttributeProto.INT: 1, AttributeProto.FLOAT: 1.0, AttributeProto.STRING: "a",
                AttributeProto.INTS: [1], AttributeProto.FLOATS: [1.0], AttributeProto.STRINGS: ["a"]}


def histories() -> dict[str, dict[int, object]]:
    found: dict[str, dict[int, object]] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain == "":
            found.setdefault(s.name, {})[s.since_version] = s
    return found


def _type(schema, type_str: str):
    allowed = next((list(c.allowed_type_strs) for c in schema.type_constraints if c.type_param_str == type_str),
                   [type_str])
    for name in _PREFERRED:
        if f"tensor({name})" in allowed:
            return TensorProto.DataType.Value(name.upper())
    return None


def smallest_model(schema, opset: int, defaults: bool = False):
    """A one-node model of ``schema`` at ``opset``; None when an input takes no tensor type.
    ``defaults``: every optional attribute written at its default, as exporters do."""
    inputs = []
    for i, formal in enumerate(schema.inputs[:schema.min_input]):
        elem = _type(schema, formal.type_str)
        if elem is None:
            return None
        inputs.append(helper.make_tensor_value_info(f"i{i}", elem, None))
    outputs = [helper.make_empty_tensor_value_info(f"o{i}") for i in range(max(schema.min_output, 1))]
    required = [(name, a) for name, a in schema.attributes.items() if a.required]
    if any(a.type not in _ATTR_VALUES for _, a in required):
        return None  # a body (If, Loop, Scan): not made up here
    attrs = {name: _ATTR_VALUES[a.type] for name, a in required}
    if "to" in attrs:
        attrs["to"] = TensorProto.FLOAT
    node = helper.make_node(schema.name, [v.name for v in inputs], [v.name for v in outputs], name="probe", **attrs)
    if defaults:
        node.attribute.extend(a.default_value for name, a in sorted(schema.attributes.items())
                              if not a.required and a.default_value.name)
    graph = helper.make_graph([node], "probe", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def missing_down_adapters() -> list[tuple[str, int]]:
    """(op, v) for every version v > FLOOR whose step down to v - 1 the converter has no adapter for
    (ops that start above FLOOR included)."""
    missing = []
    for name, versions in sorted(histories().items()):
        for v in sorted(versions):
            if v <= FLOOR or min(versions) == v:
                continue  # the op's first version: nothing below it to step to
            model = smallest_model(versions[v], v)
            if model is None:
                continue
            try:
                version_converter.convert_version(model, v - 1)
            except Exception as exc:
                if "No Adapter" in str(exc):
                    missing.append((name, v))
    return missing


def invalid_down_steps() -> list[tuple[str, int, str]]:
    """(op, v, why) for every version v > FLOOR whose step down the converter takes but writes a
    node that version v - 1 does not accept (checked with every attribute at its default)."""
    found = []
    for name, versions in sorted(histories().items()):
        for v in sorted(versions):
            if v <= FLOOR or min(versions) == v:
                continue
            model = smallest_model(versions[v], v, defaults=True)
            if model is None:
                continue
            try:
                converted = version_converter.convert_version(model, v - 1)
            except Exception:
                continue  # no adapter, or one that refuses this node: missing_down_adapters' concern
            ctx = checker.C.CheckerContext()
            ctx.ir_version, ctx.opset_imports = converted.ir_version, {"": v - 1}
            for node in converted.graph.node:
                try:
                    checker.check_node(node, ctx)
                except checker.ValidationError as exc:
                    found.append((name, v, str(exc).strip().splitlines()[0]))
                    break
    return found
