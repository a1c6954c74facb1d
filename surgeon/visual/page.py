"""The HTML page: text and tables are written here; the region drawings are laid out in the
browser by dagre from the region data embedded as JSON (see assets/report.js)."""

from __future__ import annotations

import html
import json
import time
from collections import Counter
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from ..reportfields import bytes_text
from .sections import misses_section, rewrites_section, validation_section

HERE = Path(__file__).parent


def _asset(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def _script(text: str) -> str:
    """Text safe inside <script>: no closing tag, no source-map fetch."""
    lines = [ln for ln in text.splitlines() if not ln.startswith("//# sourceMappingURL=")]
    return "\n".join(lines).replace("</script", "<\\/script")


def _surgeon_version() -> str:
    try:
        return version("surgeon")
    except PackageNotFoundError:
        return "?"


def schemas(data: dict) -> dict:
    """Input names of the standard ops the drawings show ({"::Reshape": ["data", "shape"]}; a
    trailing * marks a variadic one), so constants read as "shape = [-1, 9]"."""
    import onnx

    found = {}
    for entry in data["rewrites"] + data["misses"]:
        for side in ("before", "after"):
            for node in entry.get(side, {"nodes": []})["nodes"]:
                key = f"{node[1]}::{node[0]}"
                if key in found:
                    continue
                try:
                    schema = onnx.defs.get_schema(node[0], node[1] if node[1] != "ai.onnx" else "")
                except Exception:  # a custom op, or one onnx does not know
                    found[key] = []
                    continue
                variadic = onnx.defs.OpSchema.FormalParameterOption.Variadic
                found[key] = [p.name + ("*" if p.option == variadic else "") for p in schema.inputs]
    return {k: v for k, v in found.items() if v}


def summary(report, validation) -> str:
    e = html.escape
    rows: list[tuple[str, str]] = []
    if report is not None:
        command = "inspect (nothing written)" if report.dry_run else "fuse"
        rows.append(("command", command))
        if report.model:
            rows.append(("model", e(report.model)))
        by_pattern = Counter(r.pattern for r in report.rewrites)
        patterns = ", ".join(f"{e(p)}: {n}" for p, n in sorted(by_pattern.items()))
        rows.append(("rewrites", f"<b data-count='rewrites'>{len(report.rewrites)}</b>"
                                 + (f" ({patterns})" if patterns else "")))
        rows.append(("near misses", f"<b data-count='misses'>{len(report.refusals)}</b>"))
        rows.append(("passes", f"{report.passes} over the main graph (the last finds nothing new)"))
        rows.append(("nodes", f"{report.nodes_before} &rarr; {report.nodes_after}"))
        rows.append(("weights and constants", f"{bytes_text(report.bytes_before)} &rarr; {bytes_text(report.bytes_after)} "
                                              f"({bytes_text(report.constant_bytes_removed)} removed)"))
        rows.append(("time", f"{report.seconds:.2f} s matching and rewriting"))
    if validation is not None:
        if report is None:
            rows.append(("command", "validate"))
        for key in ("original", "rewritten"):
            info = validation.models.get(key)
            if info and report is None:
                rows.append((f"{key} model", f"{e(info['path'] or '(in memory)')}: {info['nodes']} nodes, "
                                             f"{bytes_text(info['bytes'])} of weights and constants"))
        verdict = "PASSED" if validation.passed else "FAILED"
        rows.append(("validation", f"<b class='{'ok' if validation.passed else 'fail'}' data-verdict='{verdict}'>"
                                   f"{verdict}</b> on {e(validation.device)}; {e(validation.engine)}"))
        if validation.timings:
            rows.append(("validation time", ", ".join(f"{e(k)} {v:.2f} s" for k, v in validation.timings.items())))
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<section id='summary'><h2>Summary</h2><table class='summary'>{body}</table></section>"


def notes(report, validation) -> str:
    lines = (list(report.notes) if report is not None else []) + (list(validation.notes) if validation else [])
    if not lines:
        return ""
    items = "".join(f"<li>{html.escape(n)}</li>" for n in lines)
    return f"<section id='notes'><h2>Notes</h2><ul>{items}</ul></section>"


def render(report=None, validation=None, title: str | None = None) -> str:
    """The whole page for a fuse/inspect ``report`` and/or a ``validation``."""
    if report is None and validation is None:
        raise ValueError("nothing to render: give a fuse report, a validation report, or both")
    data: dict = {"rewrites": [], "misses": []}
    parts = [summary(report, validation)]
    if report is not None:
        parts.append(rewrites_section(report, data))
        parts.append(misses_section(report, data))
    if validation is not None:
        parts.append(validation_section(validation))
    parts.append(notes(report, validation))
    data["schemas"] = schemas(data)
    name = title or (report.model if report is not None and report.model else "") or \
        (validation.models.get("rewritten", {}).get("path", "") if validation is not None else "")
    heading = "surgeon report" + (f": {Path(name).name}" if name else "")
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")
    license_text = html.escape(_asset("vendor/LICENSE")).replace("--", "- -")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(heading)}</title>
<script>window.surgeonErrors=[];window.addEventListener("error",function(e){{window.surgeonErrors.push(String(e.message));
document.documentElement.setAttribute("data-errors",window.surgeonErrors.length);}});</script>
<style>{_asset("assets/report.css")}</style>
</head><body>
<header><h1>{html.escape(heading)}</h1>
<p class="meta">surgeon {html.escape(_surgeon_version())} &middot; {stamp} &middot; drawings laid out with dagre
(layered graph layout, MIT); click a drawing to zoom</p></header>
<main>{"".join(parts)}</main>
<script type="application/json" id="surgeon-data">{payload}</script>
<!-- dagre 3.1.3 (@dagrejs/dagre, npm), inlined unchanged:
{license_text}
-->
<script>{_script(_asset("vendor/dagre.min.js"))}</script>
<script>{_script(_asset("assets/report.js"))}</script>
</body></html>
"""
