"""What a pipeline catches: every error is a SurgeonError of one of a few kinds (docs/errors.md),
one line, with what it is about attached; wrong argument types are TypeErrors too."""

import os
import pickle
import re

import numpy as np
import onnx
import pytest

import surgeon
from surgeon import (ArgumentTypeError, CannotWriteError, InvalidArgumentError, InvalidModelError, PluginError,
                     SurgeonError, ValidationFailed)

from ..builders import relu_model
from ..relu_patterns import CheckSaysYes, DoublingRelu, KernellessRelu
from .stn_sample import ROOT, STN, stn_feeds

KINDS = [InvalidModelError, InvalidArgumentError, ArgumentTypeError, CannotWriteError, ValidationFailed, PluginError]


def _one_line(info) -> str:
    text = str(info.value)
    assert text and "\n" not in text and "Traceback" not in text
    return text


def test_every_kind_is_a_surgeon_error_and_argument_errors_are_the_builtin_ones_too():
    assert all(issubclass(kind, SurgeonError) for kind in KINDS)
    assert issubclass(InvalidArgumentError, ValueError) and issubclass(ArgumentTypeError, TypeError)
    assert issubclass(ArgumentTypeError, InvalidArgumentError)


def test_every_kind_is_in_the_one_place_that_documents_them():
    with open(os.path.join(ROOT, "docs", "errors.md"), encoding="utf-8") as f:
        text = f.read()
    for kind in [SurgeonError, *KINDS]:
        assert re.search(rf"^\| `{kind.__name__}` \|", text, re.M), f"{kind.__name__} is not in docs/errors.md"


ENTRY_POINTS = {
    "fuse": lambda m: surgeon.fuse(m),
    "inspect": lambda m: surgeon.inspect(m),
    "run": lambda m: surgeon.run(m),
    "validate (original)": lambda m: surgeon.validate(m, STN),
    "validate (rewritten)": lambda m: surgeon.validate(STN, m),
    "unfuse": lambda m: surgeon.unfuse(m),
    "save": lambda m: surgeon.save(m, os.devnull + ".never"),
}


@pytest.mark.parametrize("call", ENTRY_POINTS.values(), ids=ENTRY_POINTS.keys())
@pytest.mark.parametrize("model, words", [
    (None, "got None"), (3, "got int"), (b"\x08\x07", "got bytes"), (["model.onnx"], "got list"),
])
def test_a_model_of_the_wrong_type_is_one_line_and_a_type_error(call, model, words):
    with pytest.raises(TypeError) as info:
        call(model)
    assert isinstance(info.value, ArgumentTypeError) and words in _one_line(info)


def test_a_fuse_result_given_as_the_model_says_to_pass_its_model():
    result = surgeon.fuse(STN, quiet=True)
    with pytest.raises(ArgumentTypeError, match=r"got a FuseResult; pass its \.model"):
        surgeon.run(result)


@pytest.mark.parametrize("path, words", [("", "the path is empty"), ("a\0b", "NUL character"),
                                         ("/no/such/model.onnx", "no such file")])
def test_a_path_that_is_no_model_is_one_line(path, words):
    with pytest.raises(SurgeonError) as info:
        surgeon.run(path)
    assert words in _one_line(info)


def test_a_truncated_file_is_an_invalid_model(tmp_path):
    data = open(STN, "rb").read()
    (tmp_path / "cut.onnx").write_bytes(data[: len(data) // 2])
    for call in (surgeon.fuse, surgeon.run, surgeon.inspect, surgeon.unfuse):
        with pytest.raises(InvalidModelError) as info:
            call(str(tmp_path / "cut.onnx"))
        assert "not a valid ONNX model" in _one_line(info)


@pytest.mark.parametrize("call, error, words", [
    (lambda: surgeon.run(STN, [np.zeros((1, 1, 28, 28), np.float32)]), ArgumentTypeError, "feeds: expected a mapping"),
    (lambda: surgeon.run(STN, {"x": [[0.0]]}), ArgumentTypeError, "expected a numpy array, got list"),
    (lambda: surgeon.run(STN, stn_feeds(), outputs="y"), ArgumentTypeError, "wrap it in a list"),
    (lambda: surgeon.run(STN, plugins=5), ArgumentTypeError, "plugins: expected a PluginSet"),
    (lambda: surgeon.run(STN, plugins="mod:Name"), ArgumentTypeError, "PluginSet.installed"),
    (lambda: surgeon.run(STN, plugins=[3]), ArgumentTypeError, "not a Pattern"),
    (lambda: surgeon.fuse(STN, validate="yes"), ArgumentTypeError, "validate: expected a bool"),
    (lambda: surgeon.fuse(STN, output=7), ArgumentTypeError, "output: expected a path"),
    (lambda: surgeon.validate(STN, STN, atol="1e-3"), ArgumentTypeError, "atol: expected a number"),
    (lambda: surgeon.validate(STN, STN, atol=-1.0), InvalidArgumentError, "atol must be >= 0"),
    (lambda: surgeon.validate(STN, STN, max_mismatch=2), InvalidArgumentError, "between 0 and 1"),
    (lambda: surgeon.run(STN, device="tpu"), InvalidArgumentError, "unknown device 'tpu'"),
    (lambda: surgeon.run(STN, {"image": np.zeros(1, np.float32)}), InvalidArgumentError, "no input 'image'"),
    (lambda: surgeon.run(STN, {"x": np.zeros((1, 1, 28, 28), np.float64)}), InvalidArgumentError, "expects float32"),
])
def test_arguments_surgeon_cannot_use_are_one_line(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words in _one_line(info)


def test_an_output_that_cannot_be_written_names_its_path(tmp_path):
    missing = tmp_path / "no" / "out.onnx"
    with pytest.raises(CannotWriteError) as info:
        surgeon.fuse(STN, missing, quiet=True)
    assert "does not exist" in _one_line(info) and info.value.path == str(missing)
    assert not (tmp_path / "no").exists()
    copy = tmp_path / "in.onnx"
    copy.write_bytes(open(STN, "rb").read())
    with pytest.raises(CannotWriteError, match="refusing to overwrite the input"):
        surgeon.fuse(str(copy), str(copy), quiet=True)
    assert copy.read_bytes() == open(STN, "rb").read()


def test_a_failed_validation_carries_its_report_and_writes_nothing(tmp_path):
    with pytest.raises(ValidationFailed) as info:
        surgeon.fuse(relu_model(), tmp_path / "out.onnx", plugins=[DoublingRelu()], validate=True, quiet=True)
    text = _one_line(info)
    assert text.startswith("validation failed: rewrite 'doubling-relu/DoublingRelu' (toy.ops::DoublingRelu")
    report = info.value.report
    assert not report.passed and report.failures()[0] in text
    assert info.value.fuse_report.rewrites[0].pattern == "doubling-relu"
    assert not (tmp_path / "out.onnx").exists()
    again = pickle.loads(pickle.dumps(info.value))  # what a pool worker sends to its parent
    assert str(again) == text and again.report.failures() == report.failures()


def test_plugin_errors_name_the_plugin(tmp_path):
    with pytest.raises(PluginError) as info:
        surgeon.fuse(relu_model(), plugins=[CheckSaysYes()], quiet=True)
    assert info.value.plugin == "tests.relu_patterns:CheckSaysYes" and "check() returned True" in _one_line(info)
    with pytest.raises(PluginError, match="no_such_module:X: cannot load") as info:
        surgeon.PluginSet.installed(["no_such_module:X"])
    assert info.value.plugin == "no_such_module:X"
    with pytest.raises(PluginError, match="cannot validate: pattern 'kernelless-relu' writes toy.ops::KernellessRelu"):
        surgeon.fuse(relu_model(), plugins=[KernellessRelu()], validate=True, quiet=True)
    with pytest.raises(PluginError, match="no reference kernel for toy.ops::KernellessRelu"):
        surgeon.run(surgeon.fuse(relu_model(), plugins=[KernellessRelu()], quiet=True).model,
                    plugins=[KernellessRelu()])


def test_the_command_line_still_prints_one_line_and_exits_1(tmp_path):
    from click.testing import CliRunner

    from surgeon.cli import cli

    onnx.save(relu_model(), tmp_path / "relu.onnx")
    done = CliRunner().invoke(cli, ["fuse", str(tmp_path / "relu.onnx"), str(tmp_path / "out.onnx"), "--validate",
                                    "--plugin", "tests.relu_patterns:DoublingRelu"])
    assert done.exit_code == 1 and done.stderr.count("\n") == 1
    assert done.stderr.startswith("error: validation failed: rewrite 'doubling-relu/DoublingRelu'")
    done = CliRunner().invoke(cli, ["run", str(tmp_path / "none.onnx")])
    assert (done.exit_code, done.stderr) == (1, f"error: {tmp_path / 'none.onnx'}: no such file\n")
