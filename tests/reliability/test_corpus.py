"""Every applicable command on every corpus case (corpus.py): one clean line or success, the
input untouched, nothing left behind."""

from __future__ import annotations

import shutil
import tempfile

import pytest

from ..builders import weighted_warp_model, write_model
from .corpus import CASES, COMMANDS
from .harness import check, invoke, listing, snapshot


def command_line(command: str, model, good, out) -> list:
    return {
        "fuse": ["fuse", model, out / "fused.onnx"],
        "inspect": ["inspect", model],
        "run": ["run", model, "--output-dir", out / "npy"],
        "validate-original": ["validate", model, good],
        "validate-rewritten": ["validate", good, model],
        "unfuse": ["unfuse", model, out / "unfused.onnx"],
        "lint": ["lint", model, "--target", "tensorrt"],
    }[command]


@pytest.fixture
def folders(tmp_path, monkeypatch):
    import onnxruntime  # noqa: F401  (its import leaves a .ses file in TMPDIR: not under test here)

    names = ("src", "outside", "out", "good", "tmp")
    made = {n: tmp_path / n for n in names}
    for path in made.values():
        path.mkdir()
    monkeypatch.setenv("TMPDIR", str(made["tmp"]))
    monkeypatch.setattr(tempfile, "tempdir", None)  # so tempfile reads TMPDIR again
    return made


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_case(case, folders, capfd):
    model = case.build(folders["src"], folders["outside"])
    good = write_model(weighted_warp_model(), folders["good"] / "good.onnx")
    before = snapshot(folders["src"], folders["outside"], folders["good"])
    for command in COMMANDS:
        outcome = invoke(command_line(command, model, good, folders["out"]), capfd)
        check(outcome, case.exit_code(command), case.message, findings_ok=command == "lint")
        assert snapshot(folders["src"], folders["outside"], folders["good"]) == before, outcome.describe()
        left = listing(folders["out"])
        if outcome.code:
            assert left == [], outcome.describe()
        assert not [n for n in left if n.endswith(".tmp")], outcome.describe()
        assert listing(folders["tmp"]) == [], outcome.describe()
        for entry in folders["out"].iterdir():
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
