"""Second looks at the elements outside tolerance: does rounding in the original explain them?

Runs the rounding probe (rounding.py) where a comparison found elements outside tolerance: on
the original's own part of each such rewrite, and for the outputs end to end on the whole
original with every rewrite's part moved. The values the probe moves are fetched from the
original only then, so a validation that needs no second look keeps no more than before.
"""

from __future__ import annotations

from .. import progress
from ..errors import SurgeonError
from .compare import compare
from .originals import part_values, pinned, probe_model, probe_parts


def explain_rewrites(report, regions: list, parts: list, orig, feeds: dict, reference: dict, runner_for,
                     seed: int) -> None:
    """Re-judge each rewrite check with elements outside tolerance, with their spreads."""
    chosen = [k for k, check in enumerate(report.rewrites)
              if any(c.mismatched and not c.message for c in check.outputs)]
    if not chosen:
        return
    try:
        with progress.working(f"probing rounding in {len(chosen)} rewrite(s)"):
            values = with_parts(orig, feeds, reference, [parts[k] for k in chosen])
            outputs = {(j, c.name): c for j, k in enumerate(chosen) for c in report.rewrites[k].outputs}
            rewritten = {(j, name): report.rewrites[chosen[j]].rewritten[name] for j, name in outputs}
            seen = probe_parts(orig.loaded, [regions[k] for k in chosen], [parts[k] for k in chosen], values,
                               rewritten, {key: (c.atol, c.rtol) for key, c in outputs.items()}, runner_for, seed)
    except SurgeonError as exc:
        report.notes.append(f"the rounding probe could not run ({exc}); differences are judged by tolerance alone")
        return
    for j, k in enumerate(chosen):
        check = report.rewrites[k]
        for i, c in enumerate(check.outputs):
            found = seen.get((j, c.name))
            if c.mismatched and found is not None:
                check.outputs[i] = compare(c.name, reference[c.name], check.rewritten[c.name], c.atol, c.rtol,
                                           report.max_mismatch, found)


def explain_outputs(report, parts: list, orig, feeds: dict, reference: dict, result: dict, atol, rtol,
                    runner_for, seed: int) -> None:
    """The same for the outputs end to end. Skipped when a rewrite failed already: the verdict
    stands, and the end-to-end figures are the rewrite's error carried on."""
    chosen = [c.name for c in report.outputs if c.mismatched and not c.message]
    if not chosen or not all(r.passed for r in report.rewrites):
        return
    try:
        with progress.working("probing rounding end to end"):
            moved = list(dict.fromkeys(n for p in parts for n in part_values(p)))
            values = with_parts(orig, feeds, reference, parts, pinned(list(orig.proto.graph.node), moved))
            tolerances = {c.name: (c.atol, c.rtol) for c in report.outputs}
            seen = probe_model(orig.loaded, feeds, chosen, moved, values, result, tolerances, runner_for, seed)
    except SurgeonError as exc:
        report.notes.append(f"the rounding probe could not run end to end ({exc}); differences are judged by "
                            "tolerance alone")
        return
    for i, c in enumerate(report.outputs):
        if c.name in seen:
            report.outputs[i] = compare(c.name, reference[c.name], result[c.name], atol, rtol, report.max_mismatch,
                                        seen[c.name])


def with_parts(orig, feeds: dict, reference: dict, parts: list, more=()) -> dict:
    """``reference`` plus every value the parts read and compute (and ``more``), from the
    original run again."""
    wanted = [n for n in dict.fromkeys([*(n for p in parts for n in part_values(p)), *more]) if n not in reference]
    return {**reference, **(orig.run(feeds, wanted) if wanted else {})}
