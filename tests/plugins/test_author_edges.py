"""The plugin author's edges (issue 29): a check() that raises or returns the wrong thing, two
patterns of one name, a pattern writing an op nothing can run, and `surgeon run`'s outputs."""

from __future__ import annotations

import onnx
import pytest
from click.testing import CliRunner

import surgeon
from surgeon.cli import cli

from ..distributions import fake_dist
from . import planted
from .misbehaving import CheckRaises, CheckTrue, MatchList


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def swish_file(tmp_path):
    path = tmp_path / "swish.onnx"
    onnx.save(planted.swish_model(), path)
    return path


def test_an_exception_in_check_is_reported_as_check_s():
    report = surgeon.inspect(planted.swish_model(), plugins=[CheckRaises])
    [miss] = report.refusals
    assert miss.reason == "check() raised KeyError: 'alpha' (plugin tests.plugins.misbehaving:CheckRaises)"
    assert miss.pattern == "check-raises"


def test_check_returning_neither_none_nor_a_reason_is_one_line_naming_the_plugin(swish_file, tmp_path):
    with pytest.raises(surgeon.SurgeonError) as info:
        surgeon.fuse(planted.swish_model(), plugins=[CheckTrue])
    assert str(info.value) == ("plugin tests.plugins.misbehaving:CheckTrue: pattern 'check-true': check() "
                               "returned True (bool); it must return None to go ahead or a str saying why not")
    done = invoke("fuse", swish_file, tmp_path / "out.onnx", "--plugin", "tests.plugins.misbehaving:CheckTrue")
    assert done.exit_code == 1 and not (tmp_path / "out.onnx").exists()
    assert done.stderr == ("error: plugin tests.plugins.misbehaving:CheckTrue: pattern 'check-true': "
                           "check() returned True (bool); it must return None to go ahead or a str saying why not\n")


def test_match_returning_something_else_is_an_error_too():
    with pytest.raises(surgeon.SurgeonError, match=r"pattern 'match-list': match\(\) returned \[Node\(mul \(Mul\)\)\] "
                                                   r"\(list\); it must return a surgeon.Match, a surgeon.refuse"):
        surgeon.fuse(planted.swish_model(), plugins=[MatchList])


@pytest.fixture
def installed_swish(tmp_path, monkeypatch):
    fake_dist(tmp_path, "surgeon_swish", "surgeon_swish_mod", """
        from tests.plugins.planted import Swish
        PATTERNS = [Swish]
    """)
    monkeypatch.syspath_prepend(str(tmp_path))


def _rows(output):
    return {line.split()[1]: line for line in output.splitlines() if line.startswith("swish ")}


def test_patterns_says_which_of_two_same_named_patterns_wins_and_why(installed_swish):
    spec = "tests.plugins.misbehaving:OtherSwish"
    listed = invoke("patterns", "--plugin", spec)
    assert listed.exit_code == 0, listed.output
    rows = _rows(listed.output)
    assert f"no, --plugin {spec} wins: named with --plugin, which wins over an installed one" in rows["surgeon_swish"]
    assert "yes, wins: named with --plugin, which wins over an installed one" in rows["tests.plugins.misbehaving"]
    alone = _rows(invoke("patterns").output)
    assert list(alone) == ["surgeon_swish"] and alone["surgeon_swish"].split()[3] == "yes"


def test_patterns_names_an_unsettled_conflict_and_prefer_settles_it(installed_swish, tmp_path, monkeypatch):
    fake_dist(tmp_path, "other_swish", "other_swish_mod", """
        from tests.plugins.misbehaving import OtherSwish
        PATTERNS = [OtherSwish]
    """)
    rows = _rows(invoke("patterns").output)
    assert all("conflict: choose with --prefer" in row for row in rows.values()) and len(rows) == 2
    rows = _rows(invoke("patterns", "--prefer", "other_swish").output)
    assert "yes, wins: --prefer other_swish" in rows["other_swish"]
    assert "no, other_swish 1.2.3 wins: --prefer other_swish" in rows["surgeon_swish"]


def test_fuse_warns_at_once_about_an_op_no_plugin_can_run(swish_file, tmp_path):
    spec = "tests.plugins.misbehaving:NoKernel"
    done = invoke("fuse", swish_file, tmp_path / "out.onnx", "--plugin", spec)
    assert done.exit_code == 0
    assert (f"warning: pattern 'no-kernel' writes my.ops::Swish (plugin {spec}), which no loaded plugin can "
            "run (no kernel, onnxruntime library or function body)") in done.stderr
    ran = invoke("run", tmp_path / "out.onnx", "--plugin", spec)
    assert ran.exit_code == 1 and (f"pattern 'no-kernel' (plugin {spec}) wrote it but brings no kernel for "
                                   "it") in ran.stderr
    checked = invoke("fuse", swish_file, tmp_path / "other.onnx", "--plugin", spec, "--validate")
    assert checked.exit_code == 1 and checked.stderr.startswith("error: cannot validate: pattern 'no-kernel' writes")
    assert not (tmp_path / "other.onnx").exists()
    result = surgeon.fuse(planted.swish_model(), plugins=[planted.Swish])
    assert result.warnings == []  # a pattern with its kernel: nothing to say


def test_run_says_where_outputs_go(swish_file, tmp_path):
    printed = invoke("run", swish_file)
    assert printed.exit_code == 0 and printed.stdout.startswith("y: float32[4, 64] min")
    assert "note: outputs not written (--output-dir DIR writes each as DIR/<name>.npy)" in printed.stderr
    written = invoke("run", swish_file, "--output-dir", tmp_path / "out")
    assert written.exit_code == 0 and (tmp_path / "out" / "y.npy").exists()
    assert "outputs not written" not in written.stderr
