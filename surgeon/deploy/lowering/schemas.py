"""What ONNX's op schemas say about a node at another default-domain opset: whether the op
exists there, and whether its input and output types are allowed there."""

from __future__ import annotations

import onnx.defs
from onnx import NodeProto, TensorProto
from onnx.defs import OpSchema


def schema(op_type: str, opset: int) -> OpSchema | None:
    """The default-domain schema in force at ``opset`` (None: the op does not exist there)."""
    try:
        return onnx.defs.get_schema(op_type, opset, "")
    except onnx.defs.SchemaError:
        return None


def version_at(op_type: str, opset: int) -> int | None:
    found = schema(op_type, opset)
    return found.since_version if found is not None else None


def first_version(op_type: str) -> int | None:
    versions = [s.since_version for s in onnx.defs.get_all_schemas_with_history()
                if s.name == op_type and s.domain == ""]
    return min(versions) if versions else None


def type_name(elem: int) -> str:
    return TensorProto.DataType.Name(elem).lower() if elem in TensorProto.DataType.values() else str(elem)


def _formal(params, i: int):
    if i < len(params):
        return params[i]
    last = params[-1] if params else None
    return last if last is not None and last.option == OpSchema.FormalParameterOption.Variadic else None


def allowed(found: OpSchema, index: int, output: bool = False) -> set[str] | None:
    """Type strings the schema allows for input (or output) ``index``; None when it says nothing."""
    formal = _formal(found.outputs if output else found.inputs, index)
    if formal is None:
        return None
    for c in found.type_constraints:
        if c.type_param_str == formal.type_str:
            return set(c.allowed_type_strs)
    return {formal.type_str}


def first_allowing(op_type: str, index: int, elem: int, output: bool = False) -> int | None:
    """The first opset whose schema of ``op_type`` allows tensor type ``elem`` there."""
    wanted = f"tensor({type_name(elem)})"
    versions = sorted((s for s in onnx.defs.get_all_schemas_with_history() if s.name == op_type and s.domain == ""),
                      key=lambda s: s.since_version)
    for s in versions:
        types = allowed(s, index, output)
        if types is not None and wanted in types:
            return s.since_version
    return None


def type_misfit(node: NodeProto, opset: int, elem_of) -> str | None:
    """Why ``node``'s types do not fit its schema at ``opset`` (``elem_of(value)`` gives a
    value's tensor type or None); None when they fit or are unknown."""
    found = schema(node.op_type, opset)
    if found is None:
        return None
    for output, values in ((False, node.input), (True, node.output)):
        for i, value in enumerate(values):
            elem = elem_of(value) if value else None
            types = allowed(found, i, output) if elem else None
            if types is None or f"tensor({type_name(elem)})" in types:
                continue
            since = first_allowing(node.op_type, i, elem, output)
            where = f"from opset {since}" if since else "at no opset"
            return (f"its {'output' if output else 'input'} {i} is {type_name(elem)}, which {node.op_type} takes "
                    f"only {where}")
    return None


def first_with_attribute(op_type: str, name: str) -> int | None:
    versions = sorted(s.since_version for s in onnx.defs.get_all_schemas_with_history()
                      if s.name == op_type and s.domain == "" and name in s.attributes)
    return versions[0] if versions else None
