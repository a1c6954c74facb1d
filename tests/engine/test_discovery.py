"""The plugin set: installed plugins through the surgeon.patterns entry-point group, --plugin,
selection, and two providers of one name or op (an error naming both unless the user chose)."""

import pytest
from click.testing import CliRunner

import surgeon
from surgeon import CustomOp, PluginSet
from surgeon.cli import cli

from ..builders import relu_neg_abs_model
from ..distributions import fake_dist


@pytest.fixture
def plugins_dir(tmp_path, monkeypatch):
    fake_dist(tmp_path, "toy_plugin", "toy_plugin_mod", """
        from tests.engine.toy_patterns import ReluNeg
        PATTERNS = [ReluNeg]
    """)
    fake_dist(tmp_path, "broken_plugin", "broken_plugin_mod", """
        raise ImportError("needs a library that is not installed")
    """, entry="broken")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_installed_plugins_load_and_a_broken_one_is_named(plugins_dir):
    found = PluginSet.installed()
    names = {p.name: p for p in found.plugins}
    assert names["relu-neg"].origin.package == "toy_plugin" and names["relu-neg"].origin.version == "1.2.3"
    [error] = found.warnings
    assert "'broken'" in error and "'broken_plugin'" in error and "not installed" in error


def test_fuse_uses_installed_plugins_and_warns_about_broken(plugins_dir, tmp_path):
    import onnx

    onnx.save(relu_neg_abs_model(), tmp_path / "in.onnx")
    result = CliRunner().invoke(cli, ["fuse", str(tmp_path / "in.onnx"), str(tmp_path / "out.onnx")])
    assert result.exit_code == 0, result.output
    assert "warning: plugin 'broken' from package 'broken_plugin' not loaded" in result.output
    assert "relu-neg: 1" in result.output


def test_patterns_command_lists_name_package_version_enabled(plugins_dir):
    result = CliRunner().invoke(cli, ["patterns", "--skip", "relu-neg"])
    assert result.exit_code == 0
    row = next(line for line in result.output.splitlines() if line.startswith("relu-neg"))
    assert row.split()[:4] == ["relu-neg", "toy_plugin", "1.2.3", "no"]


def test_only_skip_and_unknown_names(plugins_dir):
    assert [p.name for p in PluginSet.installed(only=["relu-neg"]).enabled()] == ["relu-neg"]
    assert "relu-neg" not in [p.name for p in PluginSet.installed(skip=["relu-neg"]).enabled()]
    with pytest.raises(surgeon.SurgeonError, match="no pattern named 'nope'"):
        PluginSet.installed(only=["nope"])


def test_plugin_option_loads_an_uninstalled_pattern():
    found = PluginSet.installed(["tests.engine.toy_patterns:AbsAbs"])
    assert any(p.name == "abs-abs" and p.origin.source == "--plugin tests.engine.toy_patterns:AbsAbs" for p in found.plugins)
    with pytest.raises(surgeon.SurgeonError, match="--plugin no_such_module:X: cannot load"):
        PluginSet.installed(["no_such_module:X"])


@pytest.fixture
def twins(tmp_path, monkeypatch):
    """Two installed packages giving a pattern of the same name, each with its own kernel."""
    for dist, factor in (("twin_a", 2.0), ("twin_b", 3.0)):
        fake_dist(tmp_path, dist, f"{dist}_mod", f"""
            from surgeon import CustomOp, Pattern

            def kernel(inputs, attrs, device="cpu"):
                return [inputs[0] * {factor}]

            class Twin(Pattern):
                name = "twin"

                @staticmethod
                def template(op, x):
                    return op.Neg(op.Relu(x))

                @staticmethod
                def replacement(op, x):
                    return op.Twin(x, _domain="twin.ops")

                ops = [CustomOp("twin.ops", "Twin", kernel=kernel)]

            PATTERNS = [Twin]
        """, entry=dist)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_two_providers_are_an_error_naming_both(twins):
    found = PluginSet.installed()
    with pytest.raises(surgeon.SurgeonError) as info:
        surgeon.fuse(relu_neg_abs_model(), plugins=found)
    message = str(info.value)
    assert "pattern 'twin' is provided by twin_a 1.2.3" in message and "twin_b 1.2.3" in message
    assert "--prefer twin_a" in message and "\n" not in message
    with pytest.raises(surgeon.SurgeonError, match="op twin.ops::Twin is provided by twin_a"):
        found.op("twin.ops", "Twin")
    assert len(found.conflicts()) == 2


def test_the_user_chooses_with_prefer(twins):
    import numpy as np

    found = PluginSet.installed(prefer=["twin_b"])
    fused = surgeon.fuse(relu_neg_abs_model(), plugins=found)
    assert [r.pattern for r in fused.report.rewrites] == ["twin"]
    out = surgeon.run(fused.model, {"x": np.ones((2, 3), np.float32)}, plugins=found)
    np.testing.assert_array_equal(list(out.values())[0], np.full((2, 3), 3.0))  # twin_b's kernel
    result = CliRunner().invoke(cli, ["patterns"])
    assert "pattern 'twin' is provided by" in result.output  # the listing still works, and says so
    result = CliRunner().invoke(cli, ["patterns", "--prefer", "twin_a"])
    assert "provided by" not in result.output


def test_an_explicit_kernel_wins_and_sets_do_not_leak(twins):
    import numpy as np

    def mine(inputs, attrs, device="cpu"):
        return [inputs[0] * 5.0]

    found = PluginSet.installed(prefer=["twin_a"])
    mine_set = found.with_ops(CustomOp("twin.ops", "Twin", kernel=mine))
    fused = surgeon.fuse(relu_neg_abs_model(), plugins=found).model
    x = {"x": np.ones((2, 3), np.float32)}
    assert list(surgeon.run(fused, x, plugins=mine_set).values())[0][0, 0] == 5.0
    assert list(surgeon.run(fused, x, plugins=found).values())[0][0, 0] == 2.0  # the other set is untouched


def test_a_domain_written_at_two_versions_is_an_error():
    from .toy_patterns import ReluNeg

    class V2(ReluNeg):
        name = "relu-neg-v2"
        domains = {"custom.test": 2}

    class V1(ReluNeg):
        name = "relu-neg-v1"
        domains = {"custom.test": 1}

    with pytest.raises(surgeon.SurgeonError, match="domain .custom.test.: pattern 'relu-neg-v2' writes version 2 "
                                                   "and pattern 'relu-neg-v1' version 1"):
        surgeon.fuse(relu_neg_abs_model(), plugins=[V2, V1])
