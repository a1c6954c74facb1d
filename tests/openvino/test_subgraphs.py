"""What surgeon fuses inside If branches and Loop bodies runs in OpenVINO: the written file reads
(by path, as a user's Core reads it) and compiles with the extension, and equals onnxruntime with
surgeon's op library; `surgeon run --engine openvino` feeds a 0-d condition as declared;
`validate --engine openvino` passes; lint's "no hazards" means read_model and compile_model
succeed, and a file OpenVINO does not recognise is a hazard."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import pytest
from click.testing import CliRunner

import surgeon
import surgeon_ops.ort
from surgeon.cli import cli
from surgeon.io.wire import varint
from surgeon.lint import lint

from .subgraph_models import MODELS, feeds

F32 = {"INFERENCE_PRECISION_HINT": "f32"}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """{name: (original path, what `fuse --target openvino` wrote)}."""
    folder = tmp_path_factory.mktemp("subgraphs")
    found = {}
    for name, (build, _) in MODELS.items():
        original, fused = folder / f"{name}.onnx", folder / f"{name}.ov.onnx"
        onnx.save(build(), original)
        # (force: a theta moved for align_corners=1 inside a branch is a reduced-precision hazard)
        result = surgeon.fuse(str(original), str(fused), target="openvino", force=True)
        assert result.report.rewrites and all(w.graph != "main" for w in result.report.rewrites), name
        found[name] = (original, fused)
    return found


def custom_nodes(graph) -> list[str]:
    found = []
    for node in graph.node:
        if node.domain == "custom.ops":
            found.append(node.op_type)
        for attr in node.attribute:
            found += custom_nodes(attr.g) if attr.HasField("g") else []
    return found


def infer(compiled, inputs):
    request = compiled.create_infer_request()
    request.start_async(inputs)
    request.wait()
    return [np.array(t.data, copy=True) for t in request.output_tensors]


@pytest.mark.parametrize("name", list(MODELS))
def test_bodies_read_compile_and_equal_onnxruntime(written, core, name):
    original, fused = written[name]
    assert custom_nodes(onnx.load(fused).graph), "fuse wrote no custom node in the bodies"
    compiled = core.compile_model(core.read_model(str(fused)), "CPU", F32)  # the file, as a user reads it
    session = surgeon_ops.ort.session(str(fused))
    for cond in (True, False):
        inputs = feeds(name, cond)
        expected = session.run(None, inputs)
        got = infer(compiled, inputs)
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, atol=1e-4, rtol=1e-5)


def test_the_first_fields_of_a_written_file_let_openvino_recognise_it(written):
    """OpenVINO takes a file for ONNX by its first three distinct top-level fields: the two opset
    imports of a fused model must not come first (the loop model carries weights: surgeon's
    streaming writer wrote it)."""
    data = written["loop"][1].read_bytes()
    assert data == onnx.load(written["loop"][1]).SerializeToString()


def test_run_feeds_a_scalar_condition_as_declared(written, tmp_path):
    original, fused = written["branches"]
    inputs = tmp_path / "inputs.npz"
    np.savez(inputs, **feeds("branches", cond=False))
    outputs = {}
    for engine in ("openvino", "ort"):
        done = CliRunner().invoke(cli, ["run", str(fused), "--inputs", str(inputs), "--engine", engine,
                                        "--output-dir", str(tmp_path / engine), "-q"])
        assert done.exit_code == 0, done.output
        outputs[engine] = np.load(tmp_path / engine / "y.npy")
    np.testing.assert_allclose(outputs["openvino"], outputs["ort"], atol=1e-4, rtol=1e-5)
    random = CliRunner().invoke(cli, ["run", str(fused), "--engine", "openvino", "--input-shape", "x:2,3,16,12"])
    assert random.exit_code == 0, random.output  # cond drawn as declared, 0-d


@pytest.mark.parametrize("name", ["branches", "loop"])
def test_validate_in_openvino(written, name):
    """validate reads values a rewrite reads (a weight outside the Loop) and runs the rounding probe,
    whose moved values bodies read, in OpenVINO too."""
    original, fused = written[name]
    done = CliRunner().invoke(cli, ["validate", str(original), str(fused), "--engine", "openvino",
                                    "--input-shape", "x:2,3,16,12", "-q"])
    assert done.exit_code == 0, done.output
    assert "validation PASSED" in done.output and "rounding probe could not run" not in done.output


@pytest.mark.parametrize("name", list(MODELS))
def test_lint_is_clean_with_the_extension_and_names_body_nodes_without_it(written, core, name):
    fused = str(written[name][1])
    rules = {h.rule for h in lint(fused, "openvino", ov_extensions=["surgeon"]).hazards}
    assert rules <= {"ov-grid-precision"}, rules  # (the static bf16 rule: positions inside a body)
    core.compile_model(core.read_model(fused), "CPU")  # what "no hazards" promises
    without = lint(fused, "openvino").hazards
    assert {h.rule for h in without} >= {"ov-custom-op"}
    assert all(h.graph != "main" for h in without if h.rule == "ov-custom-op")


def test_lint_flags_a_file_openvino_does_not_recognise(written, core, tmp_path):
    """Two opset imports written ahead of the graph (as surgeon's writer once did): each node
    converts alone, the file does not read."""
    model = onnx.load(written["loop"][1])
    graph = model.graph.SerializeToString()
    head = onnx.ModelProto(ir_version=model.ir_version, opset_import=model.opset_import).SerializeToString()
    shuffled = tmp_path / "shuffled.onnx"
    shuffled.write_bytes(head + b"\x3a" + varint(len(graph)) + graph)  # field 7 (graph), length-delimited
    assert onnx.load(shuffled) == model
    with pytest.raises(Exception, match="Unable to read the model"):
        core.read_model(str(shuffled))
    (hazard,) = lint(str(shuffled), "openvino", ov_extensions=["surgeon"]).hazards
    assert hazard.rule == "ov-file-not-recognised" and "read_model fails" in hazard.what
    assert "opset_import, opset_import" in hazard.what
    assert "ov-file-not-recognised" in {h.rule for h in lint(str(shuffled), "openvino").hazards}  # beside node lines
    command = hazard.fix.split("`")[1]  # runs as printed, and writes a file OpenVINO reads
    assert command.startswith("python -c ")
    subprocess.run(command.replace("python", sys.executable, 1), shell=True, check=True, cwd=tmp_path)
    core.compile_model(core.read_model(str(tmp_path / "shuffled.ordered.onnx")), "CPU")

