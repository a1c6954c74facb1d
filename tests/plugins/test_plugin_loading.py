"""How plugins reach surgeon besides pip: a broken installed plugin is named and skipped,
``--plugin module:Name`` loads one that is not installed, ``--only``/``--skip`` select by name."""

from __future__ import annotations

import textwrap

import onnx
import pytest
from click.testing import CliRunner
from onnx import helper

import surgeon
from surgeon.cli import cli

from ..builders import onnx_model
from .running import SAMPLE_MODELS

FLOW_MODEL = SAMPLE_MODELS / "flow_warp_ts_opset17.onnx"


@pytest.fixture
def broken_plugin(tmp_path, monkeypatch):
    """An installed distribution (dist-info + entry point, no pip) whose module raises on import."""
    info = tmp_path / "surgeon_broken-2.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: surgeon-broken\nVersion: 2.0.0\n")
    (info / "entry_points.txt").write_text("[surgeon.patterns]\nbroken-warp = surgeon_broken_mod:PATTERNS\n")
    (tmp_path / "surgeon_broken_mod.py").write_text('raise RuntimeError("compiled extension missing")\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.fixture
def local_module(tmp_path, monkeypatch):
    """A pattern in a plain module on sys.path: never installed, reachable only by --plugin."""
    (tmp_path / "my_local_patterns.py").write_text(textwrap.dedent('''
        from onnx import TensorProto
        from surgeon import Pattern

        class NegNeg(Pattern):
            """Neg(Neg(x)) is x: written as an Identity."""
            anchor_ops = ("Neg",)

            @staticmethod
            def template(op, x):
                return op.Neg(op.Neg(x))

            def rewrite(self, ctx, match):
                ctx.add_node("Identity", [match.values["x"]], match.outputs)
                ctx.set_shape(match.outputs[0], TensorProto.FLOAT, ctx.shape(match.values["x"]))
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    model = onnx_model([helper.make_node("Neg", ["x"], ["n"]), helper.make_node("Neg", ["n"], ["y"])],
                       [("x", [2])], [("y", [2])], opset=18)
    onnx.save(model, tmp_path / "negneg.onnx")
    return tmp_path


def _row(output, name):
    return next(line.split()[:4] for line in output.splitlines() if line.startswith(name + " "))


def test_a_plugin_that_raises_on_import_is_named_and_the_others_work(broken_plugin, plugin_site, tmp_path):
    runner = CliRunner()
    listed = runner.invoke(cli, ["patterns"])
    assert listed.exit_code == 0, listed.output
    assert "warning: plugin 'broken-warp' from package 'surgeon-broken' not loaded" in listed.output
    assert "compiled extension missing" in listed.output
    assert _row(listed.output, "flow-warp")[3] == "yes"

    out = tmp_path / "fused.onnx"
    fused = runner.invoke(cli, ["fuse", str(FLOW_MODEL), str(out)])
    assert fused.exit_code == 0, fused.output
    assert "broken-warp" in fused.output and "flow-warp: 1" in fused.output

    result = surgeon.fuse(str(FLOW_MODEL), plugins=surgeon.PluginSet.installed(only=["flow-warp"]))
    assert any("broken-warp" in w for w in result.warnings) and len(result.report.rewrites) == 1


def test_plugin_option_loads_an_uninstalled_pattern(local_module, tmp_path):
    runner = CliRunner()
    listed = runner.invoke(cli, ["patterns", "--plugin", "my_local_patterns:NegNeg"])
    assert listed.exit_code == 0, listed.output
    assert _row(listed.output, "neg-neg") == ["neg-neg", "my_local_patterns", "-", "yes"]

    out = tmp_path / "out.onnx"
    fused = runner.invoke(cli, ["fuse", str(local_module / "negneg.onnx"), str(out),
                                "--plugin", "my_local_patterns:NegNeg", "--only", "neg-neg"])
    assert fused.exit_code == 0, fused.output
    assert "neg-neg: 1" in fused.output
    assert [n.op_type for n in onnx.load(out).graph.node] == ["Identity"]


def test_plugin_option_that_cannot_load_is_an_error(tmp_path):
    result = CliRunner().invoke(cli, ["fuse", str(FLOW_MODEL), str(tmp_path / "o.onnx"),
                                      "--plugin", "no_such_module_here:Thing"])
    assert result.exit_code == 1
    assert "no_such_module_here:Thing" in result.output


def test_only_and_skip_select_by_name(plugin_site, tmp_path):
    runner = CliRunner()
    only = runner.invoke(cli, ["patterns", "--only", "flow-warp"])
    assert _row(only.output, "flow-warp")[3] == "yes"
    assert all(row[3] == "no" for row in (line.split() for line in only.output.splitlines()[1:])
               if row and row[0] != "flow-warp" and not row[0].startswith("warning"))

    skip = runner.invoke(cli, ["patterns", "--skip", "flow-warp"])
    assert _row(skip.output, "flow-warp")[3] == "no"

    skipped = runner.invoke(cli, ["fuse", str(FLOW_MODEL), str(tmp_path / "a.onnx"), "--skip", "flow-warp"])
    assert skipped.exit_code == 0 and "rewrote 0 chain(s)" in skipped.output
    chosen = runner.invoke(cli, ["fuse", str(FLOW_MODEL), str(tmp_path / "b.onnx"), "--only", "flow-warp"])
    assert chosen.exit_code == 0 and "flow-warp: 1" in chosen.output


def test_unknown_pattern_name_is_an_error(plugin_site, tmp_path):
    result = CliRunner().invoke(cli, ["fuse", str(FLOW_MODEL), str(tmp_path / "o.onnx"), "--only", "flow-wrap"])
    assert result.exit_code == 1
    assert "no pattern named 'flow-wrap'" in result.output and "flow-warp" in result.output
