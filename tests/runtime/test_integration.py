"""The whole path with the real pieces: the installed patterns fuse, their own kernels
(surgeon_ops) validate, and a tampered rewrite fails. Nothing here may skip: every piece ships
with surgeon."""

import onnx
from click.testing import CliRunner

import surgeon
from surgeon.cli import cli
from surgeon.rewrite.plugins import PluginSet

from ..builders import stn_pair, warp_pair

import pytest


@pytest.mark.parametrize("make", [warp_pair, stn_pair])
def test_fused_models_validate_with_the_real_kernels(make):
    orig, _ = make()
    installed = PluginSet.installed()
    fused = surgeon.fuse(orig, plugins=installed)
    assert [r.pattern for r in fused.report.rewrites] == ["affine-grid-sample"]
    kernel = installed.op("custom.ops", "FusedGridSample").kernel
    assert kernel.__module__ == "surgeon_ops.node_kernels"  # the pattern's own, not a test's
    report = surgeon.validate(orig, fused.model, plugins=installed)
    assert report.passed, report.summary()
    assert report.rewrites and all(r.patterns[0] != "?" for r in report.rewrites)
    node = next(n for n in fused.model.graph.node if n.domain == "custom.ops")
    for a in node.attribute:
        if a.name == "align_corners":
            a.i = 1 - a.i
    assert not surgeon.validate(orig, fused.model, plugins=installed).passed


def test_cli_fuse_then_validate(tmp_path):
    orig, _ = stn_pair()
    onnx.save(orig, tmp_path / "stn.onnx")
    runner = CliRunner()
    r = runner.invoke(cli, ["fuse", str(tmp_path / "stn.onnx"), str(tmp_path / "stn.fused.onnx")])
    assert r.exit_code == 0, r.output
    assert "affine-grid-sample: 1" in r.output
    r = runner.invoke(cli, ["validate", str(tmp_path / "stn.onnx"), str(tmp_path / "stn.fused.onnx")])
    assert r.exit_code == 0, r.output
    assert "validation PASSED" in r.output
