"""The page's sections: rewrites, near misses, validation. Each returns HTML and puts the region
data its drawings need into ``data`` (embedded as JSON, drawn by assets/report.js)."""

from __future__ import annotations

import html

from .table import HEADER, row
from . import png

DRAW_LIMIT = 200  # rewrites drawn; past it they are listed in the index table only
MISS_DRAW_LIMIT = 100  # near misses drawn
LIST_LIMIT = 2000  # rows in an index table
e = html.escape


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _written_attrs(region: dict) -> str:
    calls = []
    for op, domain, name, _, _, attrs in region["nodes"]:
        args = ", ".join(f"{k}={v}" for k, v in attrs.items())
        calls.append(f"<code>{e((domain + '::') if domain else '')}{e(op)}({e(args)})</code>")
    return ", ".join(calls)


def _constants(region: dict) -> str:
    count = sum(1 for n in region["nodes"] if n[0] == "Constant" and not n[1] and not n[3])
    return f"; {_plural(count, 'Constant node')} drawn inside the nodes that read them" if count else ""


def _drawing(key: str, caption: str) -> str:
    return (f"<figure><figcaption>{caption}</figcaption>"
            f"<div class='drawing' data-draw='{e(key)}'><p class='pending'>drawing&hellip;</p></div></figure>")


def rewrites_section(report, data: dict) -> str:
    rewrites = report.rewrites
    verb = "would rewrite" if report.dry_run else "rewrote"
    if not rewrites:
        return "<section id='rewrites'><h2>Rewrites</h2><p>No rewrite: no enabled pattern matched.</p></section>"
    index = []
    for k, r in enumerate(rewrites[:LIST_LIMIT]):
        link = f"<a href='#rw-{k}'>#{k + 1}</a>" if k < DRAW_LIMIT else f"#{k + 1}"
        index.append(f"<tr><td>{link}</td><td>{e(r.pattern)}</td><td>{e(r.plugin)}</td><td><code>{e(r.anchor)}</code>"
                     f"</td><td>{e(r.graph)}</td><td class='n'>{len(r.replaced)} &rarr; {len(r.written)}</td></tr>")
    more = (f"<p>{len(rewrites) - LIST_LIMIT} more rewrite(s) not listed (see the JSON report).</p>"
            if len(rewrites) > LIST_LIMIT else "")
    cards = []
    for k, r in enumerate(rewrites[:DRAW_LIMIT]):
        where = f" in graph <code>{e(r.graph)}</code>" if r.graph != "main" else ""
        warnings = "".join(f"<li>{e(w)}</li>" for w in r.warnings)
        body = (f"<p class='where'>anchor <code>{e(r.anchor)}</code>{where}: {_plural(len(r.replaced), 'node')} "
                f"&rarr; {_plural(len(r.written), 'node')}</p>")
        if warnings:
            body += f"<ul class='warnings'>{warnings}</ul>"
        if r.region is not None:
            data["rewrites"].append({"id": k, "anchor": r.anchor, **r.region})
            body += f"<p class='attrs'>writes {_written_attrs(r.region['after'])}</p>"
            cut = r.region["before"]["omitted"]
            body += ("<div class='pair'>"
                     + _drawing(f"rw:{k}:before", f"before: {_plural(len(r.replaced), 'node')} removed"
                                + (f" ({cut} not drawn)" if cut else "") + _constants(r.region["before"]))
                     + _drawing(f"rw:{k}:after", f"after: {_plural(len(r.written), 'node')} written"
                                + _constants(r.region["after"]))
                     + "</div>")
        else:
            body += "<p class='pending'>(region not recorded: past the report's limit)</p>"
        cards.append(f"<article class='card rewrite' id='rw-{k}'><h3><span class='num'>#{k + 1}</span> "
                     f"{e(r.pattern)} <span class='plugin'>{e(r.plugin)}</span></h3>{body}</article>")
    past = (f"<p class='limit'>{len(rewrites) - DRAW_LIMIT} more rewrite(s) are not drawn (the page draws the "
            f"first {DRAW_LIMIT}); the table above lists them.</p>" if len(rewrites) > DRAW_LIMIT else "")
    return (f"<section id='rewrites'><h2>Rewrites <small>{verb} {len(rewrites)}</small></h2>"
            f"<details class='index'{' open' if len(rewrites) <= 20 else ''}><summary>index of the "
            f"{_plural(len(rewrites), 'rewrite')}</summary><table class='index'><tr><th>#</th><th>pattern</th>"
            f"<th>plugin</th><th>anchor</th><th>graph</th><th>nodes</th></tr>{''.join(index)}</table>{more}</details>"
            f"{''.join(cards)}{past}</section>")


def misses_section(report, data: dict) -> str:
    misses = report.refusals
    if not misses:
        return "<section id='misses'><h2>Near misses</h2><p>None: every candidate was rewritten.</p></section>"
    cards = []
    for k, m in enumerate(misses[:LIST_LIMIT]):
        where = f" in graph <code>{e(m.graph)}</code>" if m.graph != "main" else ""
        body = f"<p class='reason'>{e(m.reason)}</p>"
        if m.region is not None and k < MISS_DRAW_LIMIT:
            data["misses"].append({"id": k, "anchor": m.node, "before": m.region, "outputs": []})
            looked = ("the candidate match" if m.region_kind == "matched"
                      else "the node and what feeds it, two steps back")
            body += _drawing(f"nm:{k}:before", f"region looked at: {looked}{_constants(m.region)}")
        cards.append(f"<article class='card miss' id='nm-{k}'><h3><span class='num'>#{k + 1}</span> {e(m.pattern)} "
                     f"<span class='plugin'>{e(m.plugin)}</span></h3><p class='where'>at <code>{e(m.node)}</code>"
                     f"{where}</p>{body}</article>")
    more = (f"<p>{len(misses) - LIST_LIMIT} more near miss(es) not shown (see the JSON report).</p>"
            if len(misses) > LIST_LIMIT else "")
    return (f"<section id='misses'><h2>Near misses <small>refused {len(misses)}</small></h2>"
            f"{''.join(cards)}{more}</section>")


def _table(validation) -> str:
    head = "<th>status</th><th>check</th>" + "".join(f"<th>{e(h)}</th>" for h in HEADER[1:])
    rows = []

    def cells(kind: str, label: str, c) -> str:
        parts = row(c)
        status = "ok" if c.passed else "fail"
        tds = [f"<td class='{status}'>{e(parts[0].strip())}</td>", f"<td>{e(label)}</td>",
               f"<td>{e(parts[1])}</td>", f"<td>{e(parts[2])}</td>"]
        if len(parts) == len(HEADER):
            tds += [f"<td class='n'>{e(str(p))}</td>" for p in parts[3:]]
        else:
            tds.append(f"<td colspan='{len(HEADER) - 3}'>{e(parts[3])}</td>")
        return f"<tr data-row='{kind}' class='row-{status}'>{''.join(tds)}</tr>"

    for r in validation.rewrites:
        if r.error or not r.outputs:
            text = r.error or r.note or "nothing to compare"
            status = "fail" if r.error else "none"
            rows.append(f"<tr data-row='rewrite' class='row-{status}'><td class='{status}'>"
                        f"{'FAIL' if r.error else '--'}</td><td>{e(r.label)}</td><td></td>"
                        f"<td colspan='{len(HEADER) - 2}'>{e(text)}</td></tr>")
        rows.extend(cells("rewrite", r.label, c) for c in r.outputs)
    if validation.error:
        rows.append(f"<tr data-row='output' class='row-fail'><td class='fail'>FAIL</td><td>end to end</td><td></td>"
                    f"<td colspan='{len(HEADER) - 2}'>{e(validation.error)}</td></tr>")
    rows.extend(cells("output", "end to end", c) for c in validation.outputs)
    return f"<table class='errors'><tr>{head}</tr>{''.join(rows)}</table>"


def _pictures(label: str, p) -> str:
    lo, hi = png.finite_range(p.original, p.rewritten)
    _, top = png.finite_range(p.difference)
    images = [("original", png.data_uri(png.values_image(p.original, lo, hi))),
              ("rewritten", png.data_uri(png.values_image(p.rewritten, lo, hi))),
              ("|difference|", png.data_uri(png.heat_image(p.difference, top)))]
    figs = "".join(f"<figure><img class='pic' alt='{e(name)}' src='{uri}'><figcaption>{e(name)}</figcaption></figure>"
                   for name, uri in images)
    shape = f"[{','.join(str(d) for d in p.shape)}]"
    per = " (each channel)" if p.original.ndim == 3 else ""
    scales = (f"<div class='scales'><span>values{per} <span class='lo'>{lo:.3g}</span><img src='{png.bar('values')}' "
              f"alt='value scale'><span class='hi'>{hi:.3g}</span></span>"
              f"<span>|difference| <span class='lo'>0</span><img src='{png.bar('heat')}' alt='difference scale'>"
              f"<span class='hi'>{top:.3g}</span></span></div>")
    return (f"<div class='pictures' data-picture='{e(label)}'><h4>{e(label)}: {e(repr(p.name))} {e(shape)} "
            f"<small>{e(p.note)}</small></h4><div class='trio'>{figs}</div>{scales}</div>")


def validation_section(validation) -> str:
    verdict = "PASSED" if validation.passed else "FAILED"
    tol = validation.tolerance_text()
    if validation.far is not None:
        tol += f"; far draws: {'PASSED' if validation.far.passed else 'FAILED'}"
    inputs = "".join(f"<li><code>{e(i['name'])}</code> {e(i['dtype'])}{e(str(i['shape']))}: {e(i['source'])}</li>"
                     for i in validation.inputs[:50])
    failures = "".join(f"<li>{e(f)}</li>" for f in validation.failures()[:50])
    pics = [_pictures(f"{r.label}", p) for r in validation.rewrites for p in r.pictures]
    pics += [_pictures("end to end", p) for p in validation.pictures]
    pictures = (f"<h3>Pictures <small>original, rewritten and their difference for image-like values</small></h3>"
                f"{''.join(pics)}" if pics else "<p>No image-like (rank 4 or 5) float value to picture.</p>")
    return (f"<section id='validation'><h2>Validation <small class='{'ok' if validation.passed else 'fail'}'>"
            f"{verdict}</small></h2><p>tolerance: {e(tol)}; max mismatch {validation.max_mismatch:g}</p>"
            f"<ul class='inputs'>{inputs}</ul>"
            + (f"<ul class='failures'>{failures}</ul>" if failures else "")
            + f"{_table(validation)}{pictures}</section>")
