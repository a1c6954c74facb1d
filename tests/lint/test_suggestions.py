"""Every command a lint message suggests runs as printed: each is taken from the message and run
in a shell, from the folder the lint ran in, on models that trip every rule with a command in
its fix (originals, plain fuse output, the affine-grid target, size inputs of every kind)."""

import os
import re
import shutil
import subprocess
import sys

import onnx
import pytest

import surgeon
from surgeon.lint import lint

from ..builders import grid_sample_model, sized_plugin_model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLES = os.path.join(ROOT, "samples", "models")
# Suggestions that say they depend on what the patterns cover may end in a clean refusal.
CONDITIONAL = ("if an installed pattern covers it", "moves a sampler an installed pattern covers")


def corpus(folder) -> list[str]:
    """Model files (names relative to ``folder``) that trip the rules whose fixes name commands."""
    names = []

    def add(name, model):
        onnx.save(model, os.path.join(folder, name))
        names.append(name)

    for sample in ("affine_ts_opset20_2d_dynamic.onnx", "affine_dynamo_opset20_3d.onnx", "neg_nonaffine_grid.onnx"):
        shutil.copy(os.path.join(SAMPLES, sample), folder)
        names.append(sample)
        add(sample.replace(".onnx", ".fused.onnx"), surgeon.fuse(os.path.join(SAMPLES, sample)).model)
    add("grid.fused.onnx", surgeon.fuse(os.path.join(SAMPLES, "multi_chain.onnx"), target="affine-grid").model)
    add("size_from_shape.onnx", sized_plugin_model("shape"))
    add("size_input.onnx", sized_plugin_model("input"))
    add("linear20.onnx", grid_sample_model("linear", 20))  # standard ops only: converts to opset 19
    return names


def suggested(fix: str) -> list[str]:
    return [c for c in re.findall(r"`([^`]+)`", fix) if c.startswith("surgeon ")]


@pytest.fixture(scope="module")
def hazards(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lint")
    found = []
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        for name in corpus(folder):
            for target in ("tensorrt", "onnxruntime"):
                found += [(name, h) for h in lint(name, target).hazards]
    finally:
        os.chdir(cwd)
    return folder, found


def test_the_corpus_trips_every_rule_with_a_command(hazards):
    _, found = hazards
    rules = {h.rule for _, h in found if suggested(h.fix)}
    assert {"trt-plugin-lookup", "trt-plugin-size-input", "trt-unsupported-op", "trt-shadowed-op-type",
            "trt-mode-name", "trt-grid-sample-5d", "ort-custom-op"} <= rules, rules


def test_every_suggested_command_runs_as_printed(hazards):
    """And the TensorRT profile command a fused file's lookup and size hazards print gives a file
    TensorRT finds its plugins in, the size folded to an attribute."""
    folder, found = hazards
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"],
               SURGEON_QUIET="1")
    seen = set()
    for name, hazard in found:
        for command in suggested(hazard.fix):
            if command in seen:
                continue
            seen.add(command)
            done = subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True,
                                  timeout=300)
            where = f"{name} [{hazard.rule}]: `{command}` -> {done.returncode}: {done.stderr.strip()}"
            assert done.returncode in (0, 1) and "Usage:" not in done.stderr and "internal error" not in done.stderr, where
            if done.returncode:
                assert any(c in hazard.fix for c in CONDITIONAL), where
                assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), where
            elif hazard.rule == "trt-mode-name" and "--opset 19" in command:
                after = lint(os.path.join(folder, command.split(" ")[3]), "tensorrt")
                assert not [h for h in after.hazards if h.rule == "trt-mode-name"], (where, after.summary())
            elif hazard.rule in ("trt-plugin-lookup", "trt-plugin-size-input"):
                out = command.split(" ")[command.split(" ").index("--target") - 1]
                after = lint(os.path.join(folder, out), "tensorrt")
                assert not [h for h in after.hazards if h.rule.startswith("trt-plugin")], (where, after.summary())
    assert len(seen) >= 8 and any("--opset 19" in c for c in seen)


def test_fuse_refusing_on_hazards_names_a_command_that_lists_them(tmp_path):
    from onnx import TensorProto, helper

    nodes = [helper.make_node("GridSample", ["x", "g"], [f"y{i}"], name=f"sampler{i}", mode="linear")
             for i in range(2)]
    graph = helper.make_graph(nodes, "two", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4]),
                                             helper.make_tensor_value_info("g", TensorProto.FLOAT, [1, 3, 3, 2])],
                              [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [1, 1, 3, 3]) for i in range(2)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), tmp_path / "two.onnx")
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    done = subprocess.run(["surgeon", "fuse", "two.onnx", "two.trt.onnx", "--target", "tensorrt",
                           "--input-shape", "x:1,1,4,4"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 1
    (command,) = re.findall(r"\(and 1 more; `([^`]+)` lists them\)", done.stderr)
    assert command == "surgeon fuse two.onnx two.trt.onnx --target tensorrt --input-shape x:1,1,4,4 --dry-run"
    listed = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert listed.returncode == 0 and listed.stderr.count("tensorrt hazard:") == 2, listed.stderr
