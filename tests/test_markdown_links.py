"""Every relative link in the repository's Markdown leads to a file or folder of the repository: a
clone has everything its documents point at (the op contract is ops/OPS.md, not a file beside
the checkout)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_SKIP_DIRS = {".git", "build", "dist", "node_modules", "__pycache__"}
_INLINE = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")  # [text](target "title")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.M)  # [name]: target
_FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1", re.M | re.S)
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def markdown_files() -> list[Path]:
    """The tracked *.md files (and untracked ones git does not ignore); every *.md outside build
    folders when the tree is not a git checkout."""
    try:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"],
                                cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
        return [ROOT / name for name in dict.fromkeys(listed) if (ROOT / name).is_file()]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for folder, dirs, files in os.walk(ROOT):
            dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
            found.extend(Path(folder) / f for f in files if f.endswith(".md"))
        return found


def relative_links(text: str) -> list[str]:
    """Link targets outside code (fenced blocks and code spans), less web addresses and anchors
    within the page."""
    prose = _CODE_SPAN.sub("", _FENCE.sub("", text))
    targets = _INLINE.findall(prose) + _REFERENCE.findall(prose)
    return [t for t in targets if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", t) and not t.startswith("#")]


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    broken = []
    for target in relative_links(path.read_text(encoding="utf-8")):
        file_part = target.split("#", 1)[0]
        resolved = Path(os.path.normpath((root / file_part.lstrip("/")) if file_part.startswith("/")
                                         else (path.parent / file_part)))
        if resolved != root and root not in resolved.parents:
            broken.append(f"{target} (leads out of the repository)")
        elif not resolved.exists():
            broken.append(f"{target} (no such file)")
    return broken


def test_the_link_reader_sees_links_and_skips_code():
    text = ("See [the contract](ops/OPS.md \"title\") and [ref].\n\n[ref]: docs/plugins.md\n"
            "`[not](a/link.md)`\n```\n[nor](this.md)\n```\n[web](https://example.org) [here](#top)\n")
    assert relative_links(text) == ["ops/OPS.md", "docs/plugins.md"]


def test_a_link_out_of_the_repository_or_to_no_file_is_broken(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("")
    page = tmp_path / "docs" / "page.md"
    page.write_text("[contract](../../outside/CONTRACT.md) [gone](missing.md) [fine](../README.md#top) [dir](.)\n")
    assert broken_links(page, tmp_path) == ["../../outside/CONTRACT.md (leads out of the repository)",
                                            "missing.md (no such file)"]


def test_every_relative_markdown_link_resolves_inside_the_repository():
    files = markdown_files()
    assert ROOT / "ops" / "OPS.md" in files and ROOT / "README.md" in files
    broken = {str(p.relative_to(ROOT)): b for p in files if (b := broken_links(p))}
    assert not broken, broken
