"""The whole path with the real pieces: installed patterns fuse, their kernels (surgeon_ops.kernels)
run the custom nodes, validate judges. Skipped while those pieces are not there."""

import onnx
import pytest
from click.testing import CliRunner

import surgeon
from surgeon.cli import cli
from surgeon.errors import SurgeonError
from surgeon.runtime import find_kernel, unregister_kernel

from .conftest import KERNELS
from .toys import stn_pair, warp_pair

pytest.importorskip("surgeon_ops.kernels")


@pytest.fixture
def real_kernels():
    """Drop the tests' torch kernels so the installed pattern's own kernels are used."""
    for domain, op in KERNELS:
        unregister_kernel(domain, op)
    if find_kernel("custom.ops", "FusedGridSample") is None:
        pytest.skip("no installed pattern brings a FusedGridSample kernel yet")


def _fused(orig):
    result = surgeon.fuse(orig)
    if not result.report.rewrites:
        pytest.skip("the installed patterns do not rewrite this model yet")
    return result.model


def _validate(orig, rew):
    try:
        return surgeon.validate(orig, rew)
    except SurgeonError as exc:
        if "KernelBuildError" in str(exc):
            pytest.skip(f"kernels cannot be built here: {exc}")
        raise


@pytest.mark.parametrize("make", [warp_pair, stn_pair])
def test_fused_models_validate_with_the_real_kernels(real_kernels, make):
    orig, _ = make()
    fused = _fused(orig)
    report = _validate(orig, fused)
    assert report.passed, report.summary()
    assert report.rewrites and all(r.patterns[0] != "?" for r in report.rewrites)
    node = next(n for n in fused.graph.node if n.domain == "custom.ops")
    for a in node.attribute:
        if a.name == "align_corners":
            a.i = 1 - a.i
    assert not _validate(orig, fused).passed


def test_cli_fuse_then_validate(real_kernels, tmp_path):
    orig, _ = stn_pair()
    onnx.save(orig, tmp_path / "stn.onnx")
    runner = CliRunner()
    r = runner.invoke(cli, ["fuse", str(tmp_path / "stn.onnx"), str(tmp_path / "stn.fused.onnx")])
    assert r.exit_code == 0, r.output
    r = runner.invoke(cli, ["validate", str(tmp_path / "stn.onnx"), str(tmp_path / "stn.fused.onnx")])
    if "KernelBuildError" in r.output:
        pytest.skip("kernels cannot be built here")
    assert r.exit_code == 0, r.output
