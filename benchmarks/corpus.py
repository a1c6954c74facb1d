"""Real exports, measured (issue 39): does every affine chain in a corpus of exported models fuse?

    python benchmarks/corpus.py [CORPUS] [--manifest FILE] [--only TEXT] [--jobs N] [--json FILE]
    python benchmarks/corpus.py --smoke

CORPUS (default /work/corpus) is what benchmarks/corpus_export.py writes: OUT/<source>/*.onnx and
OUT/manifest.json, which says per file whether it holds affine chains (the ground truth from
how the module was built), its source, exporter, opset, post-processing and inputs. For each
file: ``surgeon.fuse``; where something was rewritten, the fused model against the original on
the manifest's inputs (both run by ``surgeon.run``; random-number nodes seeded alike in both),
then ``surgeon.validate`` on its own near and far draws. A file counts as fused when every chain
it holds was rewritten and both checks pass; a rewrite that fails either check is printed loudly as WRONG,
and one that passes them in a file that holds no affine chain is listed for a look.

Prints fused / affine per source, per post-processing and per exporter, every refusal grouped
by its reason (names and numbers folded) with a count and one file, the exports that failed
(from the manifest: "no export" is the exporter's limit, not surgeon's) and the time.

``--smoke`` needs none of the exporting libraries: it builds a tiny corpus in a temporary folder
from the repository's samples/models (their manifest says which fuse) and two onnxruntime-
optimised variants, and runs the same code on it. It leaves out the libraries' exports and the
far draws of validation (near draws only).
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import tempfile
import time
import zlib
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[1]
RANDOM_OPS = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Bernoulli", "Multinomial"}
FILE_TIMEOUT = 600  # seconds for one file's fuse and checks: past it the file is a hang


# ---------------------------------------------------------------- one file
def seeded(model: onnx.ModelProto) -> onnx.ModelProto:
    """Random nodes get a seed from their name, so the original and the fused model (which keeps
    the nodes upstream of theta and their names) draw the same numbers."""
    for node in model.graph.node:
        if node.op_type in RANDOM_OPS:
            for a in list(node.attribute):
                if a.name == "seed":
                    node.attribute.remove(a)
            node.attribute.append(onnx.helper.make_attribute("seed", float(zlib.crc32(node.name.encode()) % 9973 + 1)))
    return model


def has_random(model: onnx.ModelProto) -> bool:
    return any(n.op_type in RANDOM_OPS for n in model.graph.node)


def tolerance(ref: np.ndarray, half: bool) -> float:
    scale = float(np.max(np.abs(ref))) if ref.size and np.isfinite(ref).all() else 1.0
    return (3e-2 + 1e-2 * scale) if half else (1e-3 + 1e-4 * scale)


def compare(original, fused, feeds, half: bool) -> tuple[bool, str]:
    """The two models on the manifest's inputs: (equal, what differed)."""
    import surgeon

    ref = surgeon.run(original, feeds, quiet=True)
    got = surgeon.run(fused, feeds, quiet=True)
    worst = []
    for name, r in ref.items():
        g = got.get(name)
        if g is None or g.shape != r.shape:
            return False, f"output {name}: shape {None if g is None else g.shape} vs {r.shape}"
        r64, g64 = r.astype(np.float64), g.astype(np.float64)
        both_nan = np.isnan(r64) & np.isnan(g64)
        diff = np.where(both_nan, 0.0, np.abs(r64 - g64))
        diff = np.nan_to_num(diff, nan=np.inf)
        err, tol = float(diff.max()) if diff.size else 0.0, tolerance(r64, half)
        worst.append(f"{name} max |diff| {err:.3g} (tol {tol:.3g})")
        if err > tol:
            # nearest sampling at a pixel boundary or bilinear far away: a handful of elements may
            # move under rounding alone; more than 0.1 % is a wrong rewrite
            share = float(np.mean(diff > tol))
            if share > 1e-3:
                return False, f"{worst[-1]}, {share:.2%} of elements"
            worst[-1] += f" on {share:.3%} of elements (rounding at sample boundaries)"
    return True, "; ".join(worst)


def measure(args: tuple) -> dict:
    """Fuse one file and check it; every failure caught and described (a crash of surgeon is a
    finding too)."""
    rel, entry, root, far = args
    import surgeon

    signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(FILE_TIMEOUT)
    path = Path(root) / rel
    out = {"file": rel, **{k: entry.get(k) for k in ("source", "case", "truth", "chains", "exporter", "post")}}
    start = time.perf_counter()
    try:
        feeds = dict(np.load(Path(root) / entry["inputs"]))
        try:
            result = surgeon.fuse(str(path), quiet=True)
        except surgeon.SurgeonError as exc:
            out.update(outcome="surgeon error", detail=" ".join(str(exc).split())[:500])
            return out
        report = result.report
        out["rewrites"] = len(report.rewrites)
        out["refusals"] = [{"node": m.node, "reason": m.reason} for m in report.refusals]
        out["warnings"] = [w for r in report.rewrites for w in r.warnings]
        if report.rewrites:
            original = seeded(onnx.load(str(path)))
            fused = seeded(result.model)
            half = "fp16" in (entry.get("post") or "")
            equal, detail = compare(original, fused, feeds, half)
            out["compare"] = detail
            if equal:
                val = surgeon.validate(original, fused, quiet=True, far=far)
                if not val.passed:  # equal on the manifest's inputs, not on validate's draws
                    equal = False
                    out["validate_failed"] = True
                    notes = [n for n in val.notes + (val.far.notes if val.far is not None else [])
                             if "rounding probe" in n]
                    out["compare"] = f"validate: {(val.failures() or ['failed'])[0][:400]}" + \
                        "".join(f"; note: {n[:300]}" for n in notes)
            out["equal"] = equal
        out["outcome"] = classify(out)
    except Exception as exc:  # a crash, a hang, or an original that does not run
        out.update(outcome="error", detail=f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:400])
    finally:
        signal.alarm(0)
        out["seconds"] = round(time.perf_counter() - start, 2)
    return out


def _timeout(signum, frame):
    raise TimeoutError(f"past {FILE_TIMEOUT} s")


def classify(out: dict) -> str:
    chains, rewrites = out.get("chains") or 0, out.get("rewrites", 0)
    if rewrites and not out.get("equal"):
        return "validate failed" if out.get("validate_failed") else "WRONG"
    if out["truth"] != "affine":  # a rewrite here that stays equal is listed, not counted wrong
        return "rewritten, equal" if rewrites else "untouched"
    if rewrites >= chains:
        return "fused"
    return "partly fused" if rewrites else "refused"


# ---------------------------------------------------------------- the tables
def fold(reason: str) -> str:
    """A reason with the model's own names and numbers folded, so one cause is one line."""
    text = re.sub(r"(?<!\w)'[^']*'(?!\w)", "'…'", reason)  # quoted names, not the 's of "image's"
    text = re.sub(r"\"[^\"]*\"", "'…'", text)
    text = re.sub(r"[\w.:+\-]*/[\w./:+\-]*(\[\d+\])?", "<value>", text)  # /Slice_3_output_0[0]
    text = re.sub(r"\bunk__\d+\b", "<dim>", text)
    text = re.sub(r"\b[A-Za-z]\w*?_\d+\w*(\[\d+\])?", "<value>", text)  # dynamo's node_div_12, select_75_...
    text = re.sub(r"(?<![\w])[-+]?\d+(\.\d+)?(e[-+]?\d+)?", "#", text)
    text = re.sub(r"\(([^()]*)\)", lambda m: "(…)" if re.search(r"<value>|'…'|\[", m[1]) else m[0], text)
    return text


def table(title: str, rows: list[dict], key: str) -> list[str]:
    groups: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        groups[str(r.get(key))][r["outcome"]] += 1
        groups[str(r.get(key))]["files"] += 1
        groups[str(r.get(key))]["affine"] += r["truth"] == "affine"
    width = max([len(title)] + [len(g) for g in groups]) + 2
    lines = [(f"{title:<{width}}{'fused/affine':>14}{'%':>7}{'refused':>9}{'partly':>8}{'not-affine':>12}"
              f"{'untouched':>11}{'WRONG':>7}{'val-fail':>10}{'errors':>8}")]
    total = Counter()
    for name in sorted(groups):
        g = groups[name]
        total.update(g)
        lines.append(_row(name, g, width))
    lines.append(_row("all", total, width))
    return lines


def _row(name: str, g: Counter, width: int) -> str:
    pct = f"{100 * g['fused'] / g['affine']:.1f}" if g["affine"] else "-"
    errors = g["error"] + g["surgeon error"]
    return (f"{name:<{width}}{g['fused']:>7}/{g['affine']:<6}{pct:>7}{g['refused']:>9}{g['partly fused']:>8}"
            f"{g['files'] - g['affine']:>12}{g['untouched']:>11}{g['WRONG']:>7}{g['validate failed']:>10}{errors:>8}")


def print_results(rows: list[dict], manifest: dict, root: Path, seconds: float) -> None:
    rows = sorted(rows, key=lambda r: r["file"])
    print(f"corpus: {root} ({len(rows)} files, versions: "
          + ", ".join(f"{k} {v}" for k, v in sorted((manifest.get("versions") or {}).items())) + ")")
    for title, key in (("source", "source"), ("post-processing", "post"), ("exporter", "exporter")):
        print()
        print("\n".join(table(title, rows, key)))

    wrong = [r for r in rows if r["outcome"] == "WRONG"]
    print()
    print(f"WRONG rewrites: {len(wrong)}")
    for r in wrong:
        why = "rewrote a file with no affine chain" if r["truth"] != "affine" else "fused but not equal"
        print(f"  !!! {root / r['file']}: {why}: {r.get('compare', '')}")

    failed = [r for r in rows if r["outcome"] == "validate failed"]
    print(f"fused and equal on the manifest's inputs, but surgeon.validate fails on its own draws: {len(failed)}")
    for r in failed:
        print(f"  !! {root / r['file']}: {r.get('compare', '')}")
    odd = [r for r in rows if r["outcome"] == "rewritten, equal"]
    if odd:
        print(f"rewrites in files built with no affine chain, equal on every check (look at them): {len(odd)}")
        for r in odd:
            print(f"  ? {root / r['file']}: {r['rewrites']} rewrite(s); {r.get('compare', '')}")
    errors = [r for r in rows if r["outcome"] in ("error", "surgeon error")]
    print(f"errors (surgeon or the check could not finish): {len(errors)}")
    grouped: dict[str, list] = defaultdict(list)
    for r in errors:
        grouped[f"{r['outcome']}: {fold(r.get('detail', ''))}"].append(r)
    for key, hits in sorted(grouped.items(), key=lambda kv: -len(kv[1])):
        affine = sum(r["truth"] == "affine" for r in hits)
        print(f"  {len(hits):4d} x ({affine} affine) {key[:300]}")
        print(f"         e.g. {root / hits[0]['file']}: {hits[0].get('detail', '')[:300]}")

    for title, wanted in (("refusals in files that hold affine chains", "affine"),
                          ("refusals in files that hold none (expected)", "not affine")):
        groups: dict[str, list] = defaultdict(list)
        for r in rows:
            if r["truth"] == wanted:
                for m in r.get("refusals", []):
                    groups[fold(m["reason"])].append((r["file"], m["reason"]))
        print()
        print(f"{title}: {sum(len(v) for v in groups.values())} in {len(groups)} reason(s)")
        for key, hits in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            files = len({f for f, _ in hits})
            print(f"  {len(hits):4d} x ({files} files) {key}")
            print(f"         e.g. {root / hits[0][0]}: {hits[0][1]}")

    failed = manifest.get("failed") or {}
    if failed:
        print()
        print(f"not in the corpus: {len(failed)} export(s) or post-processing(s) that failed")
        by = Counter((v.get("stage", "?"), v.get("exporter", "?"), v.get("post", "none")) for v in failed.values())
        for (stage, exporter, post), n in sorted(by.items()):
            print(f"  {n:4d} {stage}: {exporter}{'' if post == 'none' else ' + ' + post}")
    slow = sorted(rows, key=lambda r: -r.get("seconds", 0))[:3]
    print()
    print(f"time: {seconds:.1f} s for {len(rows)} files ({seconds / max(len(rows), 1):.2f} s a file); slowest: "
          + ", ".join(f"{r['file']} {r.get('seconds', 0):.1f} s" for r in slow))
    affine = [r for r in rows if r["truth"] == "affine"]
    fused = sum(r["outcome"] == "fused" for r in affine)
    print(f"fused {fused} / {len(affine)} affine files, {len(wrong)} wrong rewrite(s)")


# ---------------------------------------------------------------- smoke corpus
def smoke_corpus(folder: Path) -> Path:
    """A few of the repository's samples (three that fuse, one that does not), their inputs drawn
    from the samples' manifest, and onnxruntime-optimised variants of two."""
    import onnxruntime as ort

    samples = json.loads((ROOT / "samples" / "models" / "manifest.json").read_text())
    chosen = ["stn_ts_opset20_2d.onnx", "affine_dynamo_opset18_2d.onnx", "monai_resample_ts_opset17.onnx",
              "neg_random_grid.onnx"]
    rng = np.random.default_rng(0)
    manifest = {"files": {}, "failed": {}, "versions": {"onnxruntime": ort.__version__}}
    (folder / "samples").mkdir(parents=True)
    for name in chosen:
        spec = samples[name]
        feeds = {}
        for k, shape in spec["inputs"].items():
            if k in ("theta", "M"):
                feeds[k] = (np.eye(shape[-2], shape[-1]) + 0.2 * rng.standard_normal(shape)).astype(np.float32)
            elif k == "affine":
                a = np.eye(3) + 0.1 * rng.standard_normal(shape)
                a[..., 2, :] = [0, 0, 1]
                feeds[k] = a.astype(np.float32)
            else:
                feeds[k] = rng.random(shape, dtype=np.float32) * (2.2 if k == "grid" else 1) - (1.1 if k == "grid" else 0)
        stem = name[:-5]
        np.savez(folder / "samples" / f"{stem}.inputs.npz", **feeds)
        truth = "affine" if spec["expected"] == "fuse" else "not affine"
        base = {"source": "samples", "case": stem, "truth": truth, "chains": spec.get("chains", 1) if truth == "affine"
                else 0, "exporter": f"{spec['exporter']}{spec['opset']}", "inputs": f"samples/{stem}.inputs.npz"}
        (folder / "samples" / name).write_bytes((ROOT / "samples" / "models" / name).read_bytes())
        manifest["files"][f"samples/{name}"] = {**base, "post": "none"}
        if name in chosen[:2]:
            for level in ("ORT_ENABLE_BASIC", "ORT_ENABLE_EXTENDED"):
                post = "ort-" + level.split("_")[-1].lower()
                dst = folder / "samples" / f"{stem}__{post}.onnx"
                opts = ort.SessionOptions()
                opts.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
                opts.optimized_model_filepath = str(dst)
                ort.InferenceSession(str(folder / "samples" / name), opts, providers=["CPUExecutionProvider"])
                manifest["files"][f"samples/{dst.name}"] = {**base, "post": post}
    manifest["failed"]["samples/example__ts16.onnx"] = {"stage": "no export", "exporter": "ts16", "post": "none",
                                                       "reason": "(smoke: how a failed export is listed)"}
    path = folder / "manifest.json"
    path.write_text(json.dumps(manifest, indent=1))
    return path


# ---------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default="/work/corpus")
    ap.add_argument("--manifest", help="default: CORPUS/manifest.json")
    ap.add_argument("--only", help="files whose path contains this text")
    ap.add_argument("--jobs", type=int, default=1, help="files measured at once (one process each)")
    ap.add_argument("--json", help="write every file's result here")
    ap.add_argument("--no-far", action="store_true", help="validate on near draws only")
    ap.add_argument("--smoke", action="store_true", help="a tiny corpus from samples/models, near draws only")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="surgeon-corpus-") as tmp:
        if args.smoke:
            print("SMOKE: samples/models and two onnxruntime-optimised variants, not the libraries' exports")
            manifest_path = smoke_corpus(Path(tmp))
            root = Path(tmp)
        else:
            root = Path(args.corpus)
            manifest_path = Path(args.manifest) if args.manifest else root / "manifest.json"
        manifest = json.loads(manifest_path.read_text())
        files = sorted((rel, e) for rel, e in manifest["files"].items() if not args.only or args.only in rel)
        start = time.perf_counter()
        work = [(rel, e, str(root), not (args.no_far or args.smoke)) for rel, e in files]
        rows = []
        if args.jobs > 1:
            with ProcessPoolExecutor(args.jobs) as pool:
                for row in pool.map(measure, work):
                    rows.append(row)
                    progress(row, len(rows), len(work))
        else:
            for item in work:
                rows.append(measure(item))
                progress(rows[-1], len(rows), len(work))
        seconds = time.perf_counter() - start
        print_results(rows, manifest, root, seconds)
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


def progress(row: dict, done: int, total: int) -> None:
    print(f"[{done}/{total}] {row['file']}: {row['outcome']} ({row.get('seconds', 0):.1f} s)", file=sys.stderr,
          flush=True)


if __name__ == "__main__":
    sys.exit(main())
