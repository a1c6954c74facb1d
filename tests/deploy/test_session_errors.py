"""An op onnxruntime has no kernel for ("custom.ops:X(-1) is not a registered function/op"):
every place surgeon opens a session says, in one line, what to do instead (register the op
library, function bodies, unfuse), and the commands it names run as printed and give files plain
onnxruntime runs."""

import os
import re
import subprocess
import sys

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper

import surgeon
import surgeon_ops.ort
from surgeon.cli import cli
from surgeon.errors import ort_message

from ..builders import custom_affine_grid_read_twice_model
from .fused_samples import MODELS, ort_run

def grid_read_twice(tmp_path) -> str:
    """The TensorRT profile's AffineGridPlugin (the grid has two readers), which the op library
    does not register: written by `fuse --target tensorrt`."""
    path = str(tmp_path / "grid.trt.onnx")
    surgeon.fuse(custom_affine_grid_read_twice_model(), path, target="tensorrt")
    assert "AffineGridPlugin" in {n.op_type for n in onnx.load(path).graph.node}
    return path


def commands(text: str) -> list[str]:
    return [c for c in re.findall(r"`([^`]+)`", text) if c.startswith("surgeon ")]


def test_session_names_what_to_do_and_its_commands_run(tmp_path):
    path = grid_read_twice(tmp_path)
    with pytest.raises(surgeon.SurgeonError) as info:
        surgeon_ops.ort.session(path)
    text = str(info.value)
    assert "\n" not in text and "not custom.ops::AffineGridPlugin" in text
    assert "register_custom_ops_library" in text and "--functions" in text and "surgeon unfuse" in text
    feeds = {"x": np.random.default_rng(0).random((1, 2, 7, 8), np.float32),
             "theta": np.array([[[0.8, -0.2, 0.1], [0.3, 0.9, -0.4]]], np.float32)}
    want = surgeon.run(path, feeds)
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    found = commands(text)
    assert len(found) == 3 and found[0] == "surgeon ort-lib"
    for command in found:
        subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, check=True, capture_output=True)
        if command == "surgeon ort-lib":
            continue
        out = tmp_path / command.split()[3]
        got = ort_run(onnx.load(out), feeds)  # plain onnxruntime, no library
        for value, name in zip(got, ["y", "grid"]):
            np.testing.assert_allclose(value, want[name], atol=1e-5)


def test_session_without_a_library_says_how_to_run_without_it(tmp_path, monkeypatch):
    def unbuildable(device="cpu", archs=None):
        raise RuntimeError("no C++ compiler found")

    monkeypatch.setattr(surgeon_ops.ort, "library_path", unbuildable)
    with pytest.raises(surgeon.SurgeonError, match=r"surgeon's op library cannot be had here \(no C\+\+ compiler "
                       r"found\); run the model without it: add function bodies .*`surgeon fuse m.onnx "
                       r"m.functions.onnx --functions --raise-opset`.*`surgeon unfuse m.onnx m.std.onnx`"):
        surgeon_ops.ort.session("m.onnx")


def test_the_message_of_onnxruntime_becomes_the_advice():
    import onnxruntime as ort

    fused = surgeon.fuse(os.path.join(MODELS, "stn_ts_opset20_2d.onnx")).model
    with pytest.raises(Exception) as info:
        ort.InferenceSession(fused.SerializeToString())
    assert "custom.ops:FusedGridSample(-1) is not a registered function/op" in str(info.value)
    text = ort_message(info.value, "model.onnx")
    assert text.startswith("onnxruntime has no kernel for custom.ops::FusedGridSample: register the op library")
    assert "`surgeon unfuse model.onnx model.std.onnx`" in text and "\n" not in text


def unknown_contrib_op(tmp_path) -> str:
    """A node in a domain onnxruntime implements itself, of an op it has no kernel for: surgeon's
    runtime hands it to onnxruntime, which refuses the model."""
    node = helper.make_node("NoSuchKernel", ["x"], ["y"], domain="com.microsoft")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = str(tmp_path / "contrib.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                      helper.make_opsetid("com.microsoft", 1)]), path)
    return path


def test_surgeon_commands_that_open_sessions_say_it(tmp_path):
    path = unknown_contrib_op(tmp_path)
    for args in (["run", path], ["validate", path, path]):
        done = CliRunner().invoke(cli, args)
        assert done.exit_code == 1, done.output
        line = done.output.strip().splitlines()[-1]
        assert line.startswith("error: ") and "has no kernel for com.microsoft::NoSuchKernel" in line, line
        assert "register the op library" in line and f"`surgeon unfuse {path} " in line


def test_lint_with_op_libraries_names_the_op_none_implements(tmp_path):
    fused = surgeon.fuse(os.path.join(MODELS, "stn_ts_opset20_2d.onnx")).model
    other = helper.make_node("Mystery", ["y"], ["z"], name="mystery", domain="my.ops")
    fused.graph.node.append(other)
    out = onnx.ValueInfoProto()
    out.CopyFrom(fused.graph.output[0])
    out.name = "z"
    fused.graph.output.append(out)
    fused.opset_import.append(helper.make_opsetid("my.ops", 1))
    path = str(tmp_path / "mixed.onnx")
    onnx.save(fused, path)
    from surgeon.lint import lint

    report = lint(path, "onnxruntime", ort_libraries=["surgeon"])
    (hazard,) = report.hazards
    assert hazard.node == "mystery" and hazard.what.endswith("none of them implements my.ops::Mystery"), hazard.what


def test_lint_refuses_a_file_that_is_no_op_library(tmp_path):
    not_a_library = tmp_path / "empty.so"
    not_a_library.write_bytes(b"\x7fELF")
    done = CliRunner().invoke(cli, ["lint", os.path.join(MODELS, "stn_ts_opset20_2d.onnx"), "--target", "onnxruntime",
                                    "--ort-library", str(not_a_library)])
    assert done.exit_code == 1 and done.output.count("\n") == 1
    assert "onnxruntime cannot load it as an op library" in done.output
