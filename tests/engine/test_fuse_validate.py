"""fuse --validate: a rewrite that changes the numbers is not written (unless --force)."""

import onnx
from click.testing import CliRunner
from onnx import helper

from surgeon.cli import cli

from ..builders import onnx_model, value_info


def _relu_model(path):
    onnx.save(onnx_model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [value_info("x", (2, 3))],
                    [value_info("y", (2, 3))], opset=17), path)


def fuse(*args):
    result = CliRunner().invoke(cli, ["fuse", *map(str, args)])
    return result.exit_code, result.output


def test_a_correct_rewrite_validates_and_is_written(tmp_path):
    _relu_model(tmp_path / "in.onnx")
    code, out = fuse(tmp_path / "in.onnx", tmp_path / "out.onnx", "--plugin", "tests.relu_patterns:GoodRelu",
                     "--validate")
    assert code == 0, out
    assert "validation PASSED" in out and (tmp_path / "out.onnx").exists()


def test_a_wrong_rewrite_is_refused_and_names_the_rewrite(tmp_path):
    _relu_model(tmp_path / "in.onnx")
    code, out = fuse(tmp_path / "in.onnx", tmp_path / "out.onnx", "--plugin", "tests.relu_patterns:BadRelu",
                     "--validate")
    assert code == 1
    assert "error: validation failed" in out and "bad-relu" in out and "--force" in out
    assert not (tmp_path / "out.onnx").exists()
    code, out = fuse(tmp_path / "in.onnx", tmp_path / "out.onnx", "--plugin", "tests.relu_patterns:BadRelu",
                     "--validate", "--force")
    assert code == 0 and "validation failed; written anyway" in out
    assert (tmp_path / "out.onnx").exists()
