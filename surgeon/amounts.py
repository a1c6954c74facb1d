"""Byte counts in words, one way for every message and page: ``512 B``, ``1.5 MB``."""

from __future__ import annotations

_DECIMAL_NAMES = ("B", "KB", "MB", "GB")  # reports, pages and progress (powers of 1024 all the same)
_IEC_NAMES = ("B", "KiB", "MiB", "GiB")  # memory limits, as --max-memory GiB takes them


def bytes_text(n: float, iec: bool = False) -> str:
    """``n`` bytes with the largest unit that keeps it at least 1 (GB at most); whole bytes, else
    one decimal. Negative counts (a rewrite that adds constants) keep their sign."""
    names = _IEC_NAMES if iec else _DECIMAL_NAMES
    for unit in names:
        if abs(n) < 1024 or unit == names[-1]:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable: the last unit always returns")
