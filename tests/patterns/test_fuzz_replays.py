"""The fuzzer's own cases of issues "Matcher II" and "Matcher III", replayed (each is rebuilt from seed and index):
none may be a silent wrong result or a pattern exception, and a near miss counts as a refusal."""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _fuzz():
    spec = importlib.util.spec_from_file_location("fuzz_bench", ROOT / "benchmarks" / "fuzz.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def replay(case: str) -> dict:
    fuzz = _fuzz()
    samples = sorted(p.name for p in fuzz.SAMPLES.glob("*.onnx"))
    manifest = json.loads((fuzz.SAMPLES / "manifest.json").read_text())
    seed, index = map(int, case.split(":"))
    return fuzz.run_case(seed, index, samples, manifest)


# seed:index -> the class it stood for
CASES = {
    "2026:688": "float16 theta into a standard AffineGrid with a size-1 dim",
    "2026:642": "grid declared float32, computed in float16",
    "2026:4111": "output W = W // 2 looked static on nearby probe dims",
    "2026:19623": "output W = N // 2 with W and N one symbol",
    "2026:30608": "float16 grid kept as a grid: no declared tolerance",
    "2026:4832": "float32 grid of a float16 image: theta rounded to half",
    "2026:608": "empty constant grid: ValueError in match",
    "7:3508": "a grid for a sampler of other align_corners, rewritten on every pass",
    "2026:1564": "nearest sampling of a float16 grid",
    "2026:15652": "float16 theta into the seed's AffineGrid declared float32",
    "2026:19299": "float32 constant grid of a float16 image: the fitted theta rounded to half",
    "2026:2080": "reference engine: a scalar fed between stages became 1-d",
    "2027:19669": "validate ran a dead branch that divides by zero",
    "2028:1282": "a float64 image fused into an op the contract types float32/float16",
    "2028:26990": "float16 grid, reflection padding: differs past the flat half-grid tolerance",
    "2028:32530": "float16 grid, bicubic: differs past the flat half-grid tolerance",
    "2026:8245": "float16 grid, one channel: 0.0232 past the flat half-grid tolerance 0.02",
    "2029:18459": "theta / 0 clipped to 0: a zero map of an infinite theta is NaN",
    "2031:981": "a branch on sizes upstream of a size given as data: a dim of a value computed elsewhere was pinned",
    "2031:3211": "int inputs gating a grid through ScatterND: the branch was lost in the scatter",
    "2032:1062": "onnxruntime's optimiser computes Clip(max=Relu(constant)) otherwise: the original is run as written",
    "2034:2509": "a constant grid rounded to 2^-16 passed the fit at the probe tolerance",
    "2035:2251": "a bent base grid under theta / 65536: the map's fit passed at an absolute tolerance",
    "2040:8474": "a map fitted past fmod(theta + 30, 60) - 30: -30 held only to float32's rounding at 30",
    "2040:8954": "a map of theta applied to a batch of 0 items: ValueError in match",
    "2041:4795": "a constant grid truncated to an int32 fixed point at 2^-20: 8 float32 steps passed a 16-step fit",
    "2046:8248": "H and W tied because both sat at the probe's 2 while a table's length followed W",
    "2046:10657": "every dim tied into one group at a shared probe value: the output size followed the batch",
    "2046:10041": "sizes baked into a Reshape to H * W: the region also ran with H and W swapped",
    "2062:475": "1e-8 x the column after ATen's affine_grid_generator, which had no exact rule: 21 px at 65,536",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_replayed_case_is_not_a_silent_wrong(case):
    verdict = replay(case)
    assert verdict["kind"] not in ("wrong", "broken", "crash"), (CASES[case], verdict)
    assert "raised" not in verdict, (CASES[case], verdict)


def test_near_miss_counts_as_refused():
    verdict = replay("2026:688")
    assert verdict["kind"] == "refused" and verdict["detail"], verdict


def test_scalar_between_stages_stays_a_scalar():
    verdict = replay("2026:2080")  # a Gather index computed before a custom node, read after it
    assert verdict["kind"] == "fused", verdict


def test_double_image_is_refused_by_the_contract():
    verdict = replay("2028:1282")
    assert verdict["kind"] == "refused", verdict
    assert "the image is double: custom.ops ops take float32 or float16" in verdict["detail"], verdict


def test_a_hidden_term_after_atens_grid_is_refused_by_the_exact_check():
    verdict = replay("2062:475")
    assert verdict["kind"] == "refused" and "not affine_grid at every size" in verdict["detail"], verdict
