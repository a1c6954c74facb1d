"""validate's verdict table: one header, every figure in its column, rewrites and end to end
alike; a long message keeps the columns before it."""

from __future__ import annotations

import surgeon
from surgeon.validate.compare import Comparison
from surgeon.validate.report import RewriteCheck, ValidationReport

from ..builders import with_align_corners_flipped
from .toy_patterns import SAMPLE


def _columns(line: str, header: str) -> list[int]:
    """Where each header word of the figure columns ends (right-aligned figures end there too)."""
    ends, at = [], 0
    for word in ("MAX ABS", "MAX REL", "MEAN ABS", "NEEDS ATOL", "ATOL", "OUTSIDE TOL"):
        at = header.index(word, at) + len(word)
        ends.append(at)
    return ends


def test_figures_line_up_under_their_headers():
    fused = surgeon.fuse(str(SAMPLE)).model
    text = surgeon.validate(str(SAMPLE), with_align_corners_flipped(fused), engine="reference").summary()
    lines = text.splitlines()
    header = next(ln for ln in lines if "MAX ABS" in ln)
    rows = [ln for ln in lines if ln.startswith("    FAIL") or ln.startswith("    ok")]
    assert len(rows) == 2  # the rewrite's output and the model's
    ends = _columns(header, header)
    for row in rows:
        cells = row.split()
        for figure, end in zip(cells[3:8], ends[:5]):
            assert row[end - len(figure):end] == figure, (row, header)
        assert row.index(cells[8]) == header.index("OUTSIDE TOL")
    assert "FAIL rewrite 'affine-grid-sample/FusedGridSample' (custom.ops::FusedGridSample, pattern " \
           "affine-grid-sample, plugin surgeon " in text


def test_messages_and_errors_keep_the_table_readable():
    report = ValidationReport(
        rewrites=[RewriteCheck(["a"], ["custom.ops::X"], ["p"], error="kernel raised ValueError")],
        outputs=[Comparison("y", False, [1, 2], "float32", message="shape differs: original [1, 2], rewritten [2]"),
                 Comparison("z", True, [3], "float32", 1e-3, 1e-3, 0.0, 0.0, 0.0, 0.0, 0, 3)])
    lines = report.summary().splitlines()
    assert "  FAIL rewrite 'a' (custom.ops::X, pattern p): kernel raised ValueError" in lines
    y = next(ln for ln in lines if "'y'" in ln)
    z = next(ln for ln in lines if "'z'" in ln)
    assert y.index("float32[1,2]") == z.index("float32[3]") and y.endswith("rewritten [2]")
