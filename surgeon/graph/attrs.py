"""Typed node attributes from Python values: the one spelling plugins write, in a replacement's
``op.X(alpha=0.5)`` and in ``RewriteContext.add_node(..., alpha=0.5)`` alike
(``attributes_from_keywords``): bool -> INT 0/1 (ONNX has no bool), int -> INT, float -> FLOAT,
str -> STRING, lists of those, a numpy array -> TENSOR, an ``onnx.AttributeProto`` as it is
(for what a value cannot say: an empty list, a FLOAT holding a whole number).

``make_attribute`` reads the older suffixed names of torch's ``g.op`` (``align_corners_i=0``,
``mode_s="bilinear"``, ``value_t=array``); ``add_node`` still takes them, with a
DeprecationWarning, until 0.2.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
from onnx import AttributeProto, helper, numpy_helper

_SUFFIXES = ("_i", "_f", "_s", "_t", "_b")


def split_suffix(key: str) -> tuple[str, str]:
    """``"mode_s"`` -> ``("mode", "s")``; a key without a known suffix is an error."""
    for suffix in _SUFFIXES:
        if key.endswith(suffix) and len(key) > len(suffix):
            return key[: -len(suffix)], suffix[1:]
    raise ValueError(
        f"attribute {key!r} has no type suffix: name it {key}_i, {key}_f, {key}_s, {key}_t or {key}_b"
    )


def _is_int(v: Any) -> bool:
    return isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_float(v: Any) -> bool:
    return isinstance(v, (numbers.Real, np.floating)) and not isinstance(v, (bool, np.bool_))


def _is_bool(v: Any) -> bool:
    return isinstance(v, (bool, np.bool_)) or (_is_int(v) and int(v) in (0, 1))


def make_attribute(key: str, value: Any) -> AttributeProto:
    """One typed attribute from a suffixed key; a value that does not fit its suffix raises."""
    name, kind = split_suffix(key)
    is_list = isinstance(value, (list, tuple))
    items = list(value) if is_list else [value]

    def bad(expected: str) -> ValueError:
        return ValueError(f"attribute {key!r}: expected {expected}, got {value!r}")

    if kind == "i":
        if not all(_is_int(v) or isinstance(v, (bool, np.bool_)) for v in items):
            raise bad("an int or a list of ints")
        ints = [int(v) for v in items]
        return helper.make_attribute(name, ints if is_list else ints[0], attr_type=(
            AttributeProto.INTS if is_list else AttributeProto.INT))
    if kind == "b":
        if not all(_is_bool(v) for v in items):
            raise bad("a bool (or 0/1) or a list of them")
        ints = [int(bool(v)) for v in items]
        return helper.make_attribute(name, ints if is_list else ints[0], attr_type=(
            AttributeProto.INTS if is_list else AttributeProto.INT))
    if kind == "f":
        if not all(_is_float(v) for v in items):
            raise bad("a float or a list of floats")
        floats = [float(v) for v in items]
        return helper.make_attribute(name, floats if is_list else floats[0], attr_type=(
            AttributeProto.FLOATS if is_list else AttributeProto.FLOAT))
    if kind == "s":
        if not all(isinstance(v, (str, bytes)) for v in items):
            raise bad("a str or a list of str")
        return helper.make_attribute(name, items if is_list else items[0], attr_type=(
            AttributeProto.STRINGS if is_list else AttributeProto.STRING))
    # kind == "t"
    if is_list or not isinstance(value, (np.ndarray, np.generic)):
        raise bad("a numpy array")
    return helper.make_attribute(name, numpy_helper.from_array(np.asarray(value), name))


def attribute_from_value(name: str, value: Any) -> AttributeProto:
    """A typed attribute from a plain Python value, as replacements write them: bool -> INT 0/1
    (ONNX has no bool), int -> INT, float -> FLOAT, str -> STRING, lists of those -> INTS,
    FLOATS (ints mixed with floats too) or STRINGS, a numpy array -> TENSOR."""
    items = list(value) if isinstance(value, (list, tuple)) else None
    if items is None:
        if isinstance(value, np.ndarray):
            return make_attribute(f"{name}_t", value)
        kind = _kind(value)
    elif not items:
        raise ValueError(f"attribute {name!r}: an empty list has no type; pass an onnx.AttributeProto "
                         f"(helper.make_attribute({name!r}, [], attr_type=AttributeProto.INTS))")
    else:
        kinds = {_kind(v) for v in items}
        numeric = kinds <= {"i", "b", "f"}
        kind = ("f" if "f" in kinds else "i") if numeric and len(kinds) > 1 else kinds.pop() if len(kinds) == 1 else None
        if kind is None:
            raise ValueError(f"attribute {name!r}: a list mixing {sorted(kinds)} values has no ONNX type")
    if kind is None:
        raise ValueError(f"attribute {name!r}: {type(value).__name__} has no ONNX attribute type "
                         "(use bool, int, float, str, a list of them, or a numpy array)")
    return make_attribute(f"{name}_{kind}", value)


def _kind(v: Any) -> str | None:
    if isinstance(v, (bool, np.bool_)):
        return "b"
    if _is_int(v):
        return "i"
    if _is_float(v):
        return "f"
    if isinstance(v, (str, bytes)):
        return "s"
    return None


def attributes_from_keywords(attrs: dict[str, Any], suffixed_alias: bool = False) -> list[AttributeProto]:
    """Attributes for keyword arguments, typed by value (``attribute_from_value``); an
    ``AttributeProto`` value is copied under the keyword's name. ``suffixed_alias``: a key with a
    type suffix (``mode_s``) is read the old way, with a DeprecationWarning."""
    out = []
    for key, value in attrs.items():
        if isinstance(value, AttributeProto):
            attr = AttributeProto()
            attr.CopyFrom(value)
            attr.name = key
        elif suffixed_alias and _has_suffix(key):
            name, kind = split_suffix(key)
            warnings.warn(f"attribute {key}=...: type suffixes are deprecated (read until surgeon 0.2); write "
                          f"{name}=... (typed by its value) or pass an onnx.AttributeProto", DeprecationWarning,
                          stacklevel=3)
            attr = make_attribute(key, value)
        else:
            attr = attribute_from_value(key, value)
        out.append(attr)
    return out


def _has_suffix(key: str) -> bool:
    return any(key.endswith(s) and len(key) > len(s) for s in _SUFFIXES)


def make_attributes(**typed: Any) -> list[AttributeProto]:
    """Typed attributes for every ``name_<suffix>=value`` keyword, in keyword order."""
    return [make_attribute(k, v) for k, v in typed.items()]


def read_attribute(attr: AttributeProto) -> Any:
    """An attribute as a plain Python value (STRING as str, TENSOR as a numpy array)."""
    value = helper.get_attribute_value(attr)
    if attr.type == AttributeProto.STRING:
        return value.decode("utf-8", "replace")
    if attr.type == AttributeProto.STRINGS:
        return [v.decode("utf-8", "replace") for v in value]
    if attr.type == AttributeProto.TENSOR:
        return numpy_helper.to_array(value)
    if attr.type in (AttributeProto.INTS, AttributeProto.FLOATS):
        return list(value)
    return value
