"""Plugin discovery through the surgeon.patterns entry-point group."""

import textwrap

import pytest
from click.testing import CliRunner

import surgeon
from surgeon.cli import cli
from surgeon.rewrite.plugins import discover, select

from .toys import relu_neg_model


def fake_dist(root, dist, module, body, entry="toy"):
    """An installed distribution without pip: a dist-info folder and a module on sys.path."""
    info = root / f"{dist}-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.2.3\n")
    (info / "entry_points.txt").write_text(f"[surgeon.patterns]\n{entry} = {module}:PATTERNS\n")
    (root / f"{module}.py").write_text(textwrap.dedent(body))


@pytest.fixture
def plugins_dir(tmp_path, monkeypatch):
    fake_dist(tmp_path, "toy_plugin", "toy_plugin_mod", """
        from tests.engine.toys import ReluNeg
        PATTERNS = [ReluNeg]
    """)
    fake_dist(tmp_path, "broken_plugin", "broken_plugin_mod", """
        raise ImportError("needs a library that is not installed")
    """, entry="broken")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_installed_plugins_load_and_a_broken_one_is_named(plugins_dir):
    found = discover()
    names = {p.pattern.name: p for p in found.patterns}
    assert names["relu-neg"].package == "toy_plugin" and names["relu-neg"].version == "1.2.3"
    [error] = found.errors
    assert "'broken'" in error and "'broken_plugin'" in error and "not installed" in error


def test_fuse_uses_installed_plugins_and_warns_about_broken(plugins_dir, tmp_path):
    import onnx

    onnx.save(relu_neg_model(), tmp_path / "in.onnx")
    result = CliRunner().invoke(cli, ["fuse", str(tmp_path / "in.onnx"), str(tmp_path / "out.onnx")])
    assert result.exit_code == 0, result.output
    assert "warning: plugin 'broken' from package 'broken_plugin' failed to load" in result.output
    assert "relu-neg: 1" in result.output


def test_patterns_command_lists_name_package_version_enabled(plugins_dir):
    result = CliRunner().invoke(cli, ["patterns", "--skip", "relu-neg"])
    assert result.exit_code == 0
    row = next(line for line in result.output.splitlines() if line.startswith("relu-neg"))
    assert row.split()[:4] == ["relu-neg", "toy_plugin", "1.2.3", "no"]


def test_only_skip_and_unknown_names(plugins_dir):
    found = discover()
    assert [p.name for p in select(found, only=["relu-neg"])] == ["relu-neg"]
    assert "relu-neg" not in [p.name for p in select(found, skip=["relu-neg"])]
    with pytest.raises(surgeon.SurgeonError, match="no pattern named 'nope'"):
        select(found, only=["nope"])


def test_plugin_option_loads_an_uninstalled_pattern():
    found = discover(["tests.engine.toys:AbsAbs"])
    assert any(p.pattern.name == "abs-abs" and p.source == "--plugin tests.engine.toys:AbsAbs"
               for p in found.patterns)
    with pytest.raises(surgeon.SurgeonError, match="--plugin no_such_module:X: cannot load"):
        discover(["no_such_module:X"])
