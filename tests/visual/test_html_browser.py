"""The HTML report as a user sees it: rendered by headless Chromium, and the page it built is
checked (drawings made, counts equal to the JSON report's, pictures there, no script error)."""

from __future__ import annotations

import json
import re
import sys

import pytest

import surgeon

from ..builders import relu_neg_abs_mul_sigmoid_model, with_align_corners_flipped
from .browser import dom, screenshot
from .page import Elements
from .toy_patterns import ROOT, SAMPLE, TOY_PATTERNS


def _page(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _rendered(path, hash_="#render-all") -> Elements:
    text, log = dom(path, hash_)
    assert "Uncaught" not in log, [ln for ln in log.splitlines() if "CONSOLE" in ln]
    page = Elements(text)
    assert "data-errors" not in page.root(), page.root()
    assert page.root().get("data-ready") == "1"
    return page


def _self_contained(text: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text)
    assert "<link" not in text and not re.search(r"<script[^>]*\bsrc=", text)
    assert "@import" not in text and "url(http" not in text


@pytest.fixture(scope="module")
def fused():
    """Fused, and validated on the reference kernels (no op library to build here)."""
    result = surgeon.fuse(str(SAMPLE))
    result.validation = surgeon.validate(str(SAMPLE), result.model, engine="reference")
    return result


def test_a_fused_and_validated_model(fused, tmp_path):
    text = fused.to_html()
    _self_contained(text)
    page = _rendered(_page(tmp_path, "fused.html", text))
    report = json.loads(fused.report.to_json())
    drawings = page.all("svg", class_="graph")
    assert len(drawings) == 2 * len(report["rewrites"]) == int(page.root()["data-drawn"])
    before, after = drawings
    assert int(before["data-nodes"]) == len(report["rewrites"][0]["replaced"]) == 130
    assert int(after["data-nodes"]) == len(report["rewrites"][0]["written"]) == 5
    assert int(before["data-edges"]) > 100 and int(after["data-edges"]) >= 5
    assert page.all("g", class_="custom") and page.all("g", class_="anchor")
    assert page.all("b", data_count="rewrites")[0] and page.all("b", data_verdict="PASSED")
    checks = json.loads(fused.validation.to_json())
    assert len(page.all("tr", data_row="rewrite")) == sum(len(r["outputs"]) for r in checks["rewrites"])
    assert len(page.all("tr", data_row="output")) == len(checks["outputs"])
    assert len(page.all("div", class_="pictures")) == 2  # the rewrite's output and the model's, each pictured
    pictures = page.all("img", class_="pic")
    assert len(pictures) == 6 and all(p["src"].startswith("data:image/png;base64,") for p in pictures)
    words = " ".join(page.text)
    assert "affine-grid-sample" in words and "surgeon 0.1.0" in words and "130 → 5" in words


def test_a_wrong_rewrite_shows_in_the_table_and_the_pictures(fused, tmp_path):
    validation = surgeon.validate(str(SAMPLE), with_align_corners_flipped(fused.model), engine="reference")
    assert not validation.passed
    page = _rendered(_page(tmp_path, "bad.html", validation.to_html()))
    assert page.all("b", data_verdict="FAILED")
    assert page.all("tr", data_row="rewrite", class_="row-fail") and page.all("tr", data_row="output", class_="row-fail")
    assert len(page.all("img", class_="pic")) == 6
    text = " ".join(page.text)
    worst = max(c.max_abs for c in validation.outputs)
    assert f"{worst:.3g}" in text  # the difference scale's range is the largest error


def test_near_misses_are_drawn_with_their_reason(tmp_path):
    report = surgeon.fuse(relu_neg_abs_mul_sigmoid_model(), plugins=TOY_PATTERNS).report
    page = _rendered(_page(tmp_path, "toy.html", report.to_html()))
    assert len(page.all("article", class_="miss")) == len(report.refusals) == 2
    assert len(page.all("article", class_="rewrite")) == len(report.rewrites) == 1
    drawn = page.all("svg", class_="graph")
    assert [int(d["data-nodes"]) for d in drawn] == [2, 1, 2, 3]  # rewrite before/after, then each near miss
    text = " ".join(page.text)
    assert "abs of neg is fine as it is" in text and "a sigmoid here is never rewritten" in text
    assert "region looked at: the candidate match" in text and "two steps back" in text


def test_without_render_all_every_drawing_still_appears(tmp_path):
    """The first at once, the rest in the background (or as they scroll into view)."""
    report = surgeon.inspect(relu_neg_abs_mul_sigmoid_model(), plugins=TOY_PATTERNS)
    page = _rendered(_page(tmp_path, "lazy.html", report.to_html()), hash_="")
    assert page.root()["data-drawings"] == page.root()["data-drawn"] == "4"


def test_two_hundred_rewrites_stay_small_and_all_draw(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from large_model import build
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    result = surgeon.fuse(build(blocks=400, chains=200, weight_bytes=1_000_000))
    assert len(result.report.rewrites) == 200
    text = result.to_html()
    assert len(text.encode()) < 1_500_000  # 0.4 MB measured
    page = _rendered(_page(tmp_path, "large.html", text), hash_="")  # drawn in the background, a few at a time
    assert len(page.all("article", class_="rewrite")) == 200
    drawn = page.all("svg", class_="graph")
    assert len(drawn) == 400
    assert [int(d["data-nodes"]) for d in drawn[::2]] == [len(r.replaced) for r in result.report.rewrites]


def test_screenshot_shows_the_page(fused, tmp_path):
    path = _page(tmp_path, "shot.html", fused.to_html())
    png = screenshot(path, tmp_path / "shot.png", 1400, 1600)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 60_000  # a blank page is ~10 KB


def test_every_edge_lies_inside_its_drawing(tmp_path):
    # an edge routed around the boxes (the image straight to the sampler) once curved out of view
    result = surgeon.fuse(str(ROOT / "samples" / "models" / "stn_ts_opset20_2d.onnx"))
    page = _rendered(_page(tmp_path, "stn.html", result.to_html()))
    box, checked, left_of_zero = None, 0, 0
    for tag, attrs in page.found:
        if tag == "svg" and "graph" in attrs.get("class", "").split():
            box = [float(v) for v in attrs["viewbox"].split()]
        elif tag == "path" and attrs.get("class") == "edge":
            numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", attrs["d"])]
            for x, y in zip(numbers[0::2], numbers[1::2]):
                assert box[0] <= x <= box[0] + box[2] and box[1] <= y <= box[1] + box[3], (x, y, box)
                left_of_zero += x < 0
                checked += 1
    assert checked > 50 and left_of_zero > 0  # this layout does route an edge left of x = 0


LONG = "/encoder/layers.11/self_attention/rotary_embedding/Reshape_output_0"  # 66 characters


def test_long_names_are_wrapped_never_cut(tmp_path):
    """A near miss's value, a node and a constant read by name: every character is drawn, over
    as many lines as it takes (the labels were cut at 40, 36 and 18 characters with an ellipsis)."""
    model = relu_neg_abs_mul_sigmoid_model()
    for node in model.graph.node:
        node.input[:] = [LONG if v == "m" else v for v in node.input]
        node.output[:] = [LONG if v == "m" else v for v in node.output]
        if node.name == "sigmoid":
            node.name = "/encoder/layers.11/self_attention/rotary_embedding/Sigmoid"
    report = surgeon.fuse(model, plugins=TOY_PATTERNS).report
    page = _rendered(_page(tmp_path, "long.html", report.to_html()))
    lines = [t for t in page.text if t.strip()]
    assert not [t for t in lines if t.endswith("\u2026") and ("/" in t or "_" in t)], lines
    joined = "".join(lines)
    assert LONG in joined and "/encoder/layers.11/self_attention/rotary_embedding/Sigmoid" in joined
    pieces = [t for t in lines if t in LONG and t != LONG]  # drawn over lines, not one wide box
    assert any(LONG.startswith(t) for t in pieces) and all(len(t) <= 44 for t in pieces), pieces
