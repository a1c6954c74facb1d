"""The inlined layout library is the registry's file, unchanged, with its licence."""

from __future__ import annotations

import hashlib
from pathlib import Path

import surgeon.visual

VENDOR = Path(surgeon.visual.__file__).parent / "vendor"


def test_dagre_is_the_published_file():
    digest = hashlib.sha256((VENDOR / "dagre.min.js").read_bytes()).hexdigest()
    assert digest == "54a503e346f93ca0bb10abe7999587e037262935687aca45eb4e4b0f64bbb578"
    assert digest in (VENDOR / "README.md").read_text()
    assert "Chris Pettitt" in (VENDOR / "LICENSE").read_text()


def test_the_page_carries_the_licence_and_no_source_map_fetch():
    from surgeon.rewrite.report import Report

    text = Report(patterns=["p"]).to_html()
    assert "Copyright (c) 2012-2014 Chris Pettitt" in text and "sourceMappingURL" not in text
