"""Every script in benchmarks/ runs in its short mode, so that none rots unnoticed: each one's
``--smoke`` (tiny sizes, one repeat, seconds) goes through the script's own code, checks and
printing, here in a subprocess as a user would run it, and its output is read: the rows and
ratios it prints must be there and be numbers (their values are not judged: a smoke run times
nothing worth judging).  gpu_check.sh needs a GPU: its syntax and the files it names are checked.
A new script fails test_every_script_has_a_smoke_check until it has a check here."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"
# One thread for the libraries' pools (the scripts set their own counts where they time them),
# this interpreter's environment first on PATH, and no __pycache__ left in benchmarks/.
_ENV = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
_TIMEOUT = 300  # each takes ~2-10 s on 2 cores: only a hang reaches this


def _smoke(script: str) -> str:
    done = subprocess.run([sys.executable, str(BENCH / script), "--smoke"], cwd=ROOT, env=_ENV,
                          capture_output=True, text=True, timeout=_TIMEOUT)
    assert done.returncode == 0, (f"benchmarks/{script} --smoke exited {done.returncode}\n"
                                  f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout


def _rows(out: str, pattern: str) -> list[re.Match]:
    return [m for m in (re.fullmatch(pattern, line.strip()) for line in out.splitlines()) if m]


def _numbers(text: str) -> list[float]:
    """Every token of ``text`` as a number (a token that is not one fails)."""
    tokens = text.replace("(", " ").replace(")", " ").replace("[", " ").replace("]", " ").split()
    assert tokens and all(re.fullmatch(NUM + "x?", t) for t in tokens), text
    return [float(t.rstrip("x")) for t in tokens]


def _one(out: str, pattern: str) -> re.Match:
    found = re.search(pattern, out, re.M)
    assert found, f"no line matches {pattern!r} in:\n{out}"
    return found


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def check_build_time(out):
    assert out.startswith("SMOKE")
    for step in ("configure", r"smoke: \w+ ABI units only", "total"):
        _one(out, rf"^  {step} +wall +{NUM} s +CPU +{NUM} s$")
    assert float(_one(out, rf"/ the \d+ s goal: ({NUM})$")[1]) >= 0


def check_opt_levels(out):
    level = _one(out, r"^level (\S+), one thread")[1]
    assert level.startswith(("x86-64", "generic")), level
    rows = _rows(out, r"(\d+(?:x\d+)+ [a-z]+ [a-z]+(?: f16)?)\s+(.*)")
    assert len(rows) == 4, out
    for row in rows:  # a ratio per variant (two by default), then -O3's ms
        assert len(_numbers(row[2])) == 3, row[0]
    _one(out, r"^compile CPU s \(all levels\): -O3 \d+, ")


def check_fuse_large(out):
    chains, fused = _one(out, r"^model: \d+ nodes, \d+ MB, (\d+) chains; fused (\d+)$").groups()
    assert int(chains) > 0 and fused == chains  # every chain rewritten
    _numbers(" ".join(_one(out, r"^ratio +: time (\S+) +memory (\S+) ").groups()))
    _numbers(_one(out, r"^ratio \d+ MB / \d+ MB: (\S+) ")[1])
    for tool in (r"onnx\.load\+save", "surgeon fuse"):
        _one(out, rf"^{tool} +: +{NUM} s +{NUM} GiB peak$")
    assert len(_rows(out, rf"external +\d+ MB: +{NUM} GB data, fuse +{NUM} s, +{NUM} GiB peak")) == 2


def check_large_model(out):
    assert int(out.strip()) > 0  # the node count of what it wrote, read back and checked


def check_huge_weights(out):
    _one(out, rf"^onnx\.load, graph only +: +{NUM} MiB$")
    assert len(_rows(out, rf"surgeon \w+ +without data : +{NUM} MiB")) == 2, out
    ratios = re.findall(r"with the data: .* ratio (\S+) \(target", out)
    assert len(ratios) == 2, out  # inspect and fuse; 'n/a' when a command failed
    _numbers(" ".join(ratios))


def check_match_scaling(out):
    rows = _rows(out, r"(\d+)\s+(.*)")
    assert [int(r[1]) for r in rows] == [20, 40], out
    for row in rows:  # seconds, seconds, ratio, us, ratio, us, ratio
        assert len(_numbers(row[2])) == 7, row[0]


def check_match_cli(out):
    rows = _rows(out, r"(gelu|hardswish-clip|hardswish-max-min)\s+(1 process|cli wall|cli cpu)\s+(.*)")
    assert len(rows) == 9, out
    for row in rows:  # surgeon median [min-max], onnxscript median [min-max], ratio
        assert len(_numbers(re.sub(r"(?<=\d)-(?=\d)", " ", row[3]))) == 7, row[0]


def check_kernels(out):
    cpu = _rows(out, r"(\d+x\d+x\d+x\d+)\s+(\d+)\s+(.*)")
    assert len(cpu) == 2, out
    for row in cpu:  # fused, torch and its ratio, onnxruntime and its ratio, cv2 and its ratio ('-' without cv2)
        assert len(_numbers(row[3] if _installed("cv2") else row[3].replace(" -", ""))) == (
            7 if _installed("cv2") else 5), row[0]
    per_call = _one(out, r"^Per-call cost, 1x1x4x4, one thread \(us\): (.*)$")[1]
    assert len(re.findall(rf"(?<![\w.]){NUM}x?(?![\w.])", per_call)) == 6, per_call
    assert re.search(r"^GPU: no CUDA device, skipped$|^GPU \(", out, re.M)
    table = _rows(out, r"(\d+(?:x\d+)+)\s+(bilinear|nearest|bicubic)\s+(zeros|border|reflection)\s+([01])\s+(.*)")
    assert len(table) == 18 + 12, out  # 2-D: 2 align_corners x 3 modes x 3 paddings; 3-D: no bicubic
    for row in table:
        assert len(_numbers(row[5])) in (7, 9), row[0]  # 9: with cv2's two columns


def check_kernel_pairs(out):
    rows = _rows(out, r"(\d+(?:x\d+)+)\s+(bilinear|nearest|bicubic)\s+(zeros|border|reflection)\s+([01])\s+(.*)")
    assert len(rows) == 18 + 12, out
    for row in rows:  # 2thr and f16/f32: median (min-max) each
        assert len(_numbers(row[5].replace("-", " "))) == 6, row[0]


def check_deploy(out):
    rows = _rows(out, r"(\d+x\d+x\d+x\d+)\s+(.*)")
    assert len(rows) == (2 if _installed("openvino") else 1), out  # onnxruntime's row, OpenVINO's
    assert len(_numbers(rows[0][2])) == 8, rows[0][0]
    if _installed("openvino"):
        ov = _numbers(rows[1][2])
        assert len(ov) == 7 + 8, rows[1][0]  # times, ratios, then each diff at f32 [default precision]
        assert all(d <= 1e-4 for d in ov[7::2]), rows[1][0]


def check_torch_op(out):
    rows = _rows(out, r"(\d+x\d+x\d+x\d+)\s+1 \| (.*)")
    assert len(rows) == 2, out
    for row in rows:  # three "ours vs torch ratio", then the backward's parts
        assert len(_numbers(row[2].replace("|", " ").replace("vs", " ").replace("+", " "))) == 12, row[0]


def check_openvino_precision(out):
    rows = _rows(out, r"(\S+\.onnx)\s+(.*)")
    assert len(rows) == 4, out
    for row in rows:  # every fused file loads in OpenVINO and is within float32 of the original
        bf16, f32, lint = row[2].split()[-3:]
        assert lint in ("yes", "no") and float(f32) <= 1e-4 and float(bf16) >= 0, row[0]


def check_tensorrt_check(out):
    manifest = json.loads((ROOT / "samples" / "models" / "manifest.json").read_text())
    wanted = {n for n, e in manifest.items() if e.get("dims") == 2 and e.get("expected") == "fuse"}
    rows = dict((m[1], m[2]) for m in _rows(out, r"(\S+\.onnx)\s+(.*)"))
    assert wanted <= set(rows), sorted(wanted - set(rows))  # prepared, or the reason it was not
    ready = [r for r in rows.values() if re.fullmatch(rf"fused, \d+ input\(s\), onnxruntime reference ready "
                                                        rf"\(atol {NUM}\)", r)]
    assert len(ready) >= len(wanted) // 2, out
    if _installed("tensorrt"):
        _one(out, r"^tensorrt: all fused samples built and matched onnxruntime$")
    else:
        _one(out, r"^tensorrt: SKIPPED, TensorRT is not installed here")


def check_fuzz(out):
    line = _one(out, r"^fuzz: (\d+) mutants in .*$")
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (fused and equal|unchanged|refused cleanly|fused but not)",
                                               line[0])}
    bad = dict(re.findall(r"(silent wrong results|\+|crashes|hangs|reference-engine failures|pattern exceptions) ?"
                          r"(\d+)", line[0]))
    assert int(line[1]) == 10 == sum(counts.values()), line[0]
    assert len(bad) == 6 and not any(int(v) for v in bad.values()), out  # the findings are printed below it
    fused, affine = map(int, re.search(r"completeness (\d+) of (\d+) affine mutants fused", line[0]).groups())
    assert fused <= affine <= 10, line[0]


def check_corpus(out):
    assert out.startswith("SMOKE")
    for title in ("source", "post-processing", "exporter"):  # each table: a header, its rows, then "all"
        _one(out, rf"^{title} +fused/affine +% +refused +partly +not-affine +untouched +WRONG +val-fail +errors$")
    rows = _rows(out, rf"(\S+) +(\d+)/(\d+) +({NUM}|-) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+)")
    totals = [r for r in rows if r[1] == "all"]
    assert len(totals) == 3 and len({r.groups()[1:] for r in totals}) == 1, out  # three views of one corpus
    fused, affine = int(totals[0][2]), int(totals[0][3])
    assert affine >= 5 and fused == affine, out  # the samples that fuse, and their optimised variants, all fuse
    assert int(totals[0][9]) == int(totals[0][10]) == int(totals[0][11]) == 0, out  # no wrong rewrite, no error
    assert {"none", "ort-basic", "ort-extended"} <= {r[1] for r in rows}, out
    _one(out, r"^WRONG rewrites: 0$")
    _one(out, r"^refusals in files that hold none \(expected\): [1-9]\d* in \d+ reason\(s\)$")
    _one(out, r"^ +\d+ x \(\d+ files\) .+\n +e\.g\. \S+\.onnx: ")  # a reason, then an example
    _one(out, r"^ +1 no export: ts16$")
    _numbers(_one(out, rf"^time: ({NUM}) s for \d+ files")[1])
    _one(out, rf"^fused {fused} / {affine} affine files, 0 wrong rewrite\(s\)$")


def check_corpus_export(out):
    assert out.startswith("SMOKE")
    exported = _rows(out, r"(torch/\w+__ts20\.onnx) +exported \((all|batch|static)\) .*")
    assert len(exported) == 2, out
    assert len(_rows(out, r"torch/\w+__ts20__[\w-]+\.onnx +post-processed")) >= 2, out
    _one(out, r"^done in \d+ s: exported 2, ")
    truth = _one(out, r"^manifest: (\d+) files, affine (\d+), not affine (\d+)$")
    assert int(truth[1]) == int(truth[2]) + int(truth[3]) and int(truth[2]) >= 3 and int(truth[3]) >= 1, out


CHECKS = {
    "build_time.py": check_build_time,
    "corpus.py": check_corpus,
    "corpus_export.py": check_corpus_export,
    "deploy.py": check_deploy,
    "fuse_large.py": check_fuse_large,
    "fuzz.py": check_fuzz,
    "huge_weights.py": check_huge_weights,
    "kernel_pairs.py": check_kernel_pairs,
    "kernels.py": check_kernels,
    "large_model.py": check_large_model,
    "match_cli.py": check_match_cli,
    "match_scaling.py": check_match_scaling,
    "openvino_precision.py": check_openvino_precision,
    "opt_levels.py": check_opt_levels,
    "tensorrt_check.py": check_tensorrt_check,
    "torch_op.py": check_torch_op,
}
SHELL = ["gpu_check.sh"]  # needs a GPU machine: test_gpu_check_parses


def test_every_script_has_a_smoke_check():
    scripts = {p.name for p in BENCH.iterdir() if p.suffix in (".py", ".sh") and p.name != Path(__file__).name}
    assert scripts == set(CHECKS) | set(SHELL)


@pytest.mark.parametrize("script", sorted(CHECKS))
def test_smoke_run(script):
    CHECKS[script](_smoke(script))


def test_gpu_check_parses():
    script = BENCH / "gpu_check.sh"
    done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = script.read_text()
    for path in re.findall(r"\btests/[\w/]+\.py\b", text):  # the GPU tests it runs are still there
        assert (ROOT / path).is_file(), path
    runs = [r for r in re.findall(r"benchmarks/(\w+\.py)( [^|\n]*)?", text) if r[0] != Path(__file__).name]
    assert runs and all(name in CHECKS and '"${smoke[@]}"' in args for name, args in runs), runs
