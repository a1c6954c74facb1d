"""The verdict table ``validate`` prints (and the HTML page shows, sections.py): one heading line per rewrite, then one row per compared
value, the figures in aligned columns (the same columns for the rewrites and end to end)."""

from __future__ import annotations

from ..reportfields import figure

HEADER = ("", "VALUE", "TYPE", "MAX ABS", "MAX REL", "MEAN ABS", "NEEDS ATOL", "ATOL", "OUTSIDE TOL")
NUMERIC = {3, 4, 5, 6, 7}  # right-aligned columns


def _type(c) -> str:
    return f"{c.dtype}[{','.join(str(d) for d in c.shape)}]" if c.shape is not None else "-"


def _outside(c) -> str:
    if not c.total:
        return "-"
    if not c.mismatched:
        return "0"
    share = 100 * c.mismatched / c.total
    return f"{c.mismatched} of {c.total} ({share:.2g}%)"


def row(c) -> tuple:
    """The cells for one comparison; one with a message (a shape differs, a value is missing)
    carries it after the type instead of figures."""
    if c.message:
        return (c.status, repr(c.name), _type(c), c.message)
    return (c.status, repr(c.name), _type(c), figure(c.max_abs), figure(c.max_rel), figure(c.mean_abs),
            figure(c.required_atol), figure(c.atol), _outside(c))


def verdict_table(report, limit: int = 12) -> list[str]:
    """Lines: each rewrite (failing ones first, at most ``limit``) and every output end to end."""
    items: list = []  # ("head", text) or ("row", cells)
    for r in sorted(report.rewrites, key=lambda r: r.passed)[:limit]:
        status = "ok  " if r.passed else "FAIL"
        if r.error:
            items.append(("head", f"FAIL {r.label}: {r.error}"))
        elif not r.outputs:
            items.append(("head", f"--   {r.label}: {r.note or 'nothing to compare'}"))
        else:
            items.append(("head", f"{status} {r.label}"))
            items.extend(("row", row(c)) for c in r.outputs)
    if len(report.rewrites) > limit:
        items.append(("head", f"... {len(report.rewrites) - limit} more rewrite(s) (see --report)"))
    items.append(("head", "end to end:" if not report.error else f"end to end: FAIL: {report.error}"))
    outputs = sorted(report.outputs, key=lambda c: c.passed)
    items.extend(("row", row(c)) for c in outputs[:limit])
    if len(outputs) > limit:
        items.append(("head", f"... {len(outputs) - limit} more output(s) (see --report)"))
    rows = [cells for kind, cells in items if kind == "row"]
    if not rows:
        return [_head(text) for _, text in items]
    full = [c for c in rows if len(c) == len(HEADER)]
    widths = [max(len(str(c[i])) for c in [HEADER] + full) for i in range(len(HEADER))]
    for i in range(3):  # status, value and type columns also fit the message rows
        widths[i] = max([widths[i]] + [len(str(c[i])) for c in rows])
    lines = [_format(HEADER, widths)]
    for kind, cells in items:
        lines.append(_head(cells) if kind == "head" else _format(cells, widths))
    return lines


def _head(text: str) -> str:
    return text if text.startswith("end to end") else "  " + text


def _format(cells: tuple, widths: list[int]) -> str:
    out = []
    for i, cell in enumerate(cells):
        if i >= len(widths) or (len(cells) < len(HEADER) and i == len(cells) - 1 and i >= 3):
            out.append(str(cell))  # a message: as long as it is
            continue
        out.append(str(cell).rjust(widths[i]) if i in NUMERIC else str(cell).ljust(widths[i]))
    return ("    " + "  ".join(out)).rstrip()
