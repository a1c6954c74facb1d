"""--html on fuse, inspect and validate: written where asked, also when validation fails, never
onto an input or another output, and stdout stays as it was (JSON alone with --report -)."""

from __future__ import annotations

import json

import onnx
from click.testing import CliRunner

from surgeon.cli import cli

from ..builders import with_align_corners_flipped
from .toy_patterns import SAMPLE


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_fuse_writes_the_page_with_the_model(tmp_path):
    out, page = tmp_path / "m.onnx", tmp_path / "m.html"
    r = invoke("fuse", SAMPLE, out, "--validate", "--html", page)
    assert r.exit_code == 0, r.output
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "data-verdict='PASSED'" in text and "130 &rarr; 5" in text
    assert out.exists() and "<!DOCTYPE" not in r.stdout


def test_json_on_stdout_stays_json(tmp_path):
    r = invoke("inspect", SAMPLE, "--report", "-", "--html", tmp_path / "i.html", "--quiet")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["dry_run"] is True
    assert "inspect (nothing written)" in (tmp_path / "i.html").read_text()


def test_a_failed_validation_still_writes_the_page(tmp_path):
    out, page = tmp_path / "m.onnx", tmp_path / "m.html"
    r = invoke("fuse", SAMPLE, out, "--validate", "--atol", "0", "--rtol", "0", "--html", page)
    assert r.exit_code == 1 and "validation failed" in r.stderr
    assert not out.exists() and "data-verdict='FAILED'" in page.read_text()


def test_validate_writes_the_page_pass_or_fail(tmp_path):
    fused = tmp_path / "f.onnx"
    assert invoke("fuse", SAMPLE, fused).exit_code == 0
    onnx.save(with_align_corners_flipped(onnx.load(fused)), tmp_path / "bad.onnx")
    r = invoke("validate", SAMPLE, tmp_path / "bad.onnx", "--engine", "reference", "--html", tmp_path / "v.html")
    assert r.exit_code == 1
    text = (tmp_path / "v.html").read_text()
    assert "data-verdict='FAILED'" in text and text.count("class='pic'") == 6
    assert "rewritten model" in text and "original model" in text


def test_the_page_never_lands_on_an_input_or_the_output(tmp_path):
    out = tmp_path / "m.onnx"
    before = SAMPLE.read_bytes()
    r = invoke("inspect", SAMPLE, "--html", SAMPLE)
    assert r.exit_code == 1 and "refusing to overwrite the input" in r.stderr and SAMPLE.read_bytes() == before
    r = invoke("fuse", SAMPLE, out, "--html", out)
    assert r.exit_code == 1 and "given for two outputs" in r.stderr and not out.exists()


def test_every_command_says_where_the_page_went(tmp_path):
    out, page = tmp_path / "m.onnx", tmp_path / "m.html"
    r = invoke("fuse", SAMPLE, out, "--html", page)
    assert r.exit_code == 0 and r.stdout.splitlines()[-1] == f"wrote {page} (HTML report)", r.output
    r = invoke("fuse", SAMPLE, out, "--dry-run", "--html", tmp_path / "d.html")
    assert r.stdout.splitlines()[-1] == f"wrote {tmp_path / 'd.html'} (HTML report)", r.output
    r = invoke("inspect", SAMPLE, "--html", tmp_path / "i.html")
    assert r.stdout.splitlines()[-1] == f"wrote {tmp_path / 'i.html'} (HTML report)", r.output
    r = invoke("inspect", SAMPLE, "--report", "-", "--html", tmp_path / "j.html", "--quiet")
    json.loads(r.stdout)  # JSON alone on stdout; the line on stderr
    assert r.stderr == f"wrote {tmp_path / 'j.html'} (HTML report)\n"
    r = invoke("validate", SAMPLE, out, "--html", tmp_path / "v.html")
    assert r.exit_code == 0 and r.stdout.splitlines()[-1] == f"wrote {tmp_path / 'v.html'} (HTML report)", r.output
    failed = invoke("fuse", SAMPLE, tmp_path / "n.onnx", "--validate", "--atol", "0", "--rtol", "0", "--html",
                    tmp_path / "f.html")
    assert failed.exit_code == 1 and failed.stderr.strip().endswith(f"the HTML report is in {tmp_path / 'f.html'}")
