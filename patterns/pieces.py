"""The pieces a size tensor is written from: a static value, a dim of a value's shape, or an
element of an int tensor (a size given as data)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fixed:
    """A size piece known statically."""

    value: int


@dataclass(frozen=True)
class DimOf:
    """A size piece read from a value's shape at run time."""

    value: str
    axis: int


@dataclass(frozen=True)
class ElemOf:
    """A size piece read from an element of an int tensor (a size given as data)."""

    value: str
    index: int


Piece = Fixed | DimOf | ElemOf
