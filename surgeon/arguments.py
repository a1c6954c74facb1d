"""Checks on the library's arguments: a wrong type is one line (``ArgumentTypeError``, also a
``TypeError``), said before any work, rather than an AttributeError deep inside."""

from __future__ import annotations

import os
from collections.abc import Mapping

from .errors import ArgumentTypeError, InvalidArgumentError

MODEL_TYPES = "a path, an onnx.ModelProto or an onnx-graphsurgeon Graph"


def kind_of(value) -> str:
    return "None" if value is None else type(value).__name__


def check_path(path, what: str, optional: bool = False) -> None:
    """A file path (str or os.PathLike of str): not empty, no NUL byte."""
    if path is None and optional:
        return
    if not isinstance(path, (str, os.PathLike)) or not isinstance(os.fspath(path), str):
        raise ArgumentTypeError(f"{what}: expected a path (str or os.PathLike), got {kind_of(path)}")
    text = os.fspath(path)
    if not text:
        raise InvalidArgumentError(f"{what}: the path is empty")
    if "\0" in text:
        raise InvalidArgumentError(f"{what}: {text!r} is not a path (it holds a NUL character)")


def check_mapping(value, what: str, optional: bool = True) -> None:
    """A dict-like argument (feeds, input_shapes, options)."""
    if value is None and optional:
        return
    if not isinstance(value, Mapping):
        raise ArgumentTypeError(f"{what}: expected a mapping (dict), got {kind_of(value)}")


def check_names(value, what: str) -> None:
    """A list of names (``outputs``): one bare str would be read letter by letter."""
    if value is None:
        return
    if isinstance(value, (str, bytes)) or not all(isinstance(v, str) for v in _iterable(value, what)):
        raise ArgumentTypeError(f"{what}: expected a list of names (str), got {kind_of(value)}"
                                + (f" {value!r}: wrap it in a list" if isinstance(value, str) else ""))


def _iterable(value, what: str):
    try:
        return list(value)
    except TypeError:
        raise ArgumentTypeError(f"{what}: expected a list, got {kind_of(value)}") from None


def check_type(value, types, what: str, expected: str, optional: bool = False) -> None:
    """``value`` is one of ``types`` (``expected`` says it in words); a bool is no number unless
    ``types`` names bool (numpy numbers count: ``numbers.Real``, ``numbers.Integral``)."""
    if value is None and optional:
        return
    types = types if isinstance(types, tuple) else (types,)
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise ArgumentTypeError(f"{what}: expected {expected}, got {kind_of(value)}")
