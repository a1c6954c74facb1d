"""The corpus: bad and odd inputs, each built by a function from the base model (no binary
files in the repository). A case writes its input into ``src`` (and, when it needs a file
outside the model's folder, into ``outside``) and returns the input path.

``expect`` is the exit code of every command, or a dict by command (None: 0 and 1 are both
fine, as long as a failure is one clean line). ``message`` must appear in the error line of
the commands that fail."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ..builders import (initializer_named, set_external_data, weighted_warp_file, weighted_warp_model,
                         with_value_renamed, write_model)

COMMANDS = ("fuse", "inspect", "run", "validate-original", "validate-rewritten", "unfuse", "lint")
_LIKE = {"unfuse": "fuse", "lint": "inspect"}  # whose expectation a command shares


def fsname(raw: bytes) -> str:
    """A file name from raw bytes, as Python hands undecodable bytes from argv to a program."""
    return os.fsdecode(raw)


@dataclass
class CorpusCase:
    name: str
    build: Callable[[Path, Path], Path]
    expect: int | dict | None = 1
    message: str | None = None

    def exit_code(self, command: str) -> int | None:
        key = _LIKE.get(command, command)
        code = self.expect.get(key, self.expect.get("*")) if isinstance(self.expect, dict) else self.expect
        return None if command == "lint" and code == 0 else code  # lint exits 1 for hazards it finds


CASES: list[CorpusCase] = []


def case(name: str, expect=1, message: str | None = None):
    def register(build):
        CASES.append(CorpusCase(name, build, expect, message))
        return build
    return register


def _model(src: Path, mutate=None, name: str = "m.onnx") -> Path:
    model = weighted_warp_model()
    if mutate is not None:
        changed = mutate(model)
        model = changed if isinstance(changed, onnx.ModelProto) else model
    return write_model(model, src / name)


# Not a model at all ----------------------------------------------------------------------------

case("missing file", message="no such file")(lambda src, out: src / "nope.onnx")
case("empty file", message="file is empty")(lambda src, out: write_model(b"", src / "m.onnx"))
case("text file", message="not a valid ONNX model")(lambda src, out: write_model(b"hello, world\n" * 20, src / "m.onnx"))
case("random bytes")(lambda src, out: write_model(np.random.default_rng(7).bytes(4096), src / "m.onnx"))
case("truncated", message="not a valid ONNX model")(
    lambda src, out: write_model(weighted_warp_model().SerializeToString()[:300], src / "m.onnx"))
case("a folder", message="is a folder")(lambda src, out: (src / "m.onnx").mkdir() or src / "m.onnx")
case("another message", message="ONNX model")(
    lambda src, out: write_model(numpy_helper.from_array(np.ones(3, np.float32), "t").SerializeToString(), src / "m.onnx"))
case("no graph", message="not an ONNX model")(
    lambda src, out: write_model(onnx.ModelProto(ir_version=10, producer_name="x"), src / "m.onnx"))


@case("a FIFO", message="not a regular file")
def _fifo(src, out):
    os.mkfifo(src / "m.onnx")
    return src / "m.onnx"


# Names that would split or colour the one error line
case("newline in file name", message="\\n")(lambda src, out: write_model(b"junk" * 9, src / "bad\nname.onnx"))
case("escape in file name", message="\\x1b")(lambda src, out: write_model(b"junk" * 9, src / "\x1b[31mred.onnx"))
case("undecodable file name", message="\\udcff")(lambda src, out: write_model(b"junk" * 9, src / fsname(b"m\xff.onnx")))
case("control characters in value names", expect=0)(
    lambda src, out: _model(src, lambda m: with_value_renamed(m, "xw", "x\nw\x1b[0m")))
case("control characters in a dangling name", message="topologically sorted")(
    lambda src, out: _model(src, lambda m: m.graph.node[2].input.__setitem__(0, "gone\nvalue\x07")))


def _bad_utf8(text: str):
    def build(src, out):
        data = _model(src, lambda m: with_value_renamed(m, text, "QQQQQQ")).read_bytes()
        return write_model(data.replace(b"QQQQQQ", b"Q\xff\xfeQQQ"), src / "m.onnx")
    return build


case("non-UTF-8 value name", message="not valid UTF-8")(_bad_utf8("xw"))
case("non-UTF-8 graph input name", message="not valid UTF-8")(_bad_utf8("theta"))


@case("non-UTF-8 op type", message="not valid UTF-8")
def _bad_op(src, out):
    data = _model(src, lambda m: setattr(m.graph.node[0], "op_type", "QQQ")).read_bytes()
    return write_model(data.replace(b"QQQ", b"\xc3\x28Q"), src / "m.onnx")


# Model-level ---------------------------------------------------------------------------------

case("IR version 0", message="not an ONNX model")(lambda src, out: _model(src, lambda m: setattr(m, "ir_version", 0)))
case("IR version 99", message="ONNX checker")(lambda src, out: _model(src, lambda m: setattr(m, "ir_version", 99)))
case("IR version negative")(lambda src, out: _model(src, lambda m: setattr(m, "ir_version", -3)))
case("no opset import", message="not an ONNX model")(
    lambda src, out: _model(src, lambda m: m.ClearField("opset_import")))
case("opset 11 with opset-20 ops", message="ONNX checker")(
    lambda src, out: _model(src, lambda m: setattr(m.opset_import[0], "version", 11)))
case("opset 999", expect=None)(lambda src, out: _model(src, lambda m: setattr(m.opset_import[0], "version", 999)))


@case("opset 13, no chain", expect={"validate-original": 1, "validate-rewritten": 1, "*": 0})
def _old_opset(src, out):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    return write_model(model, src / "m.onnx")


def _cycle(m):
    m.graph.node[0].input[0] = "y"  # add reads the sampler's output, which reads add's


case("cyclic graph", message="ONNX checker")(lambda src, out: _model(src, _cycle))
case("dangling input", message="ONNX checker")(
    lambda src, out: _model(src, lambda m: m.graph.node[2].input.__setitem__(1, "nowhere")))
case("output nobody computes")(lambda src, out: _model(
    src, lambda m: m.graph.output.append(helper.make_tensor_value_info("ghost", TensorProto.FLOAT, [1]))))
case("value computed twice", message="ONNX checker")(
    lambda src, out: _model(src, lambda m: m.graph.node.append(helper.make_node("Relu", ["x"], ["y"]))))
case("unknown standard op", message="ONNX checker")(
    lambda src, out: _model(src, lambda m: setattr(m.graph.node[0], "op_type", "NoSuchOp")))


def _custom_add(m):
    m.graph.node[0].domain = "my.ops"  # an op no plugin implements
    m.opset_import.append(helper.make_opsetid("my.ops", 1))


case("custom op, no kernel", expect={"fuse": None, "inspect": None, "*": 1})(lambda src, out: _model(src, _custom_add))
case("unknown sampling mode", expect={"fuse": 0, "inspect": 0, "*": 1}, message="bogus")(
    lambda src, out: _model(src, lambda m: m.graph.node[2].attribute.append(helper.make_attribute("mode", "bogus"))))
case("align_corners 7", expect=None)(
    lambda src, out: _model(src, lambda m: m.graph.node[1].attribute[0].__setattr__("i", 7)))
case("attribute of the wrong type", expect=None)(
    lambda src, out: _model(src, lambda m: m.graph.node[2].attribute.append(helper.make_attribute("mode", 3))))
case("theta of the wrong shape", expect=None)(lambda src, out: _model(
    src, lambda m: m.graph.input[1].type.tensor_type.shape.dim[1].__setattr__("dim_value", 3)))
case("declared type contradicts", expect=None)(lambda src, out: _model(
    src, lambda m: m.graph.value_info.append(helper.make_tensor_value_info("xw", TensorProto.INT64, [1, 1, 8, 8]))))
case("NaN and Inf weights", expect=None)(lambda src, out: _model(src, lambda m: initializer_named(m, "w").CopyFrom(
    numpy_helper.from_array(np.array([np.nan, np.inf, -np.inf, 1] * 16, np.float32).reshape(1, 1, 8, 8), "w"))))


@case("NaN constant theta", expect=None)
def _nan_theta(src, out):
    def mutate(m):
        m.graph.node.insert(0, helper.make_node("Constant", [], ["theta"], value=numpy_helper.from_array(
            np.full((1, 2, 3), np.nan, np.float32))))
        del m.graph.input[1]
    return _model(src, mutate)


case("huge input dims", expect={"run": 1, "validate-original": 1, "validate-rewritten": 1, "*": None})(
    lambda src, out: _model(src, lambda m: [d.__setattr__("dim_value", 1 << 40) for d in
                                            m.graph.input[0].type.tensor_type.shape.dim[2:]]))
case("huge grid size", expect={"run": 1, "validate-original": 1, "validate-rewritten": 1, "*": None})(
    lambda src, out: _model(src, lambda m: initializer_named(m, "size").CopyFrom(
        numpy_helper.from_array(np.array([1, 1, 1 << 20, 1 << 20], np.int64), "size"))))
case("weight dims without data", expect={"inspect": None, "*": 1})(lambda src, out: _model(
    src, lambda m: initializer_named(m, "w").CopyFrom(TensorProto(name="w", data_type=1, dims=[1, 1, 1 << 20, 1 << 20]))))
case("weight data too short", expect={"inspect": None, "*": 1})(lambda src, out: _model(
    src, lambda m: setattr(initializer_named(m, "w"), "raw_data", b"\0" * 12)))
case("negative dims", message="negative dims")(
    lambda src, out: _model(src, lambda m: initializer_named(m, "w").dims.__setitem__(2, -8)))
case("unknown data type", message="unknown element type")(
    lambda src, out: _model(src, lambda m: setattr(initializer_named(m, "w"), "data_type", 999)))


@case("deeply nested If", expect=None)
def _nested(src, out):
    body = helper.make_graph([helper.make_node("Identity", ["x"], ["r0"])], "b0", [],
                             [helper.make_tensor_value_info("r0", TensorProto.FLOAT, [2])])
    for k in range(1, 30):  # one branch nests, the other stays a leaf: the model grows linearly
        leaf = helper.make_graph([helper.make_node("Identity", ["x"], [f"e{k}"])], f"e{k}", [],
                                 [helper.make_tensor_value_info(f"e{k}", TensorProto.FLOAT, [2])])
        body = helper.make_graph([helper.make_node("If", ["c"], [f"r{k}"], then_branch=body, else_branch=leaf)],
                                 f"b{k}", [], [helper.make_tensor_value_info(f"r{k}", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(body.node, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
                                               helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("r29", TensorProto.FLOAT, [2])])
    return write_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), src / "m.onnx")


@case("function that calls itself", expect=None)
def _recursive(src, out):
    fn = helper.make_function("my.fn", "Loop", ["a"], ["b"], [helper.make_node("Loop", ["a"], ["b"], domain="my.fn")],
                              [helper.make_opsetid("", 17), helper.make_opsetid("my.fn", 1)])
    graph = helper.make_graph([helper.make_node("Loop", ["x"], ["y"], domain="my.fn")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, functions=[fn],
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("my.fn", 1)])
    return write_model(model, src / "m.onnx")


# External data -------------------------------------------------------------------------------

case("external: valid", expect=0)(lambda src, out: weighted_warp_file(src))
case("external: file missing", message="not found")(lambda src, out: weighted_warp_file(src, location="gone.bin"))


@case("external: ../ location", message="leaves the model's folder")
def _up(src, out):
    (src.parent / "x.bin").write_bytes(bytes(256))
    return weighted_warp_file(src, location="../x.bin")


@case("external: absolute location", message="leaves the model's folder")
def _absolute(src, out):
    (out / "abs.bin").write_bytes(bytes(256))
    return weighted_warp_file(src, location=str(out / "abs.bin"))


case("external: empty location", message="names no location")(lambda src, out: weighted_warp_file(src, location=""))
case("external: no entries at all", message="names no location")(lambda src, out: weighted_warp_file(src, location=None))


def _relocated(target: Callable[[Path, Path], Path], location: str, **entries):
    """The model's data at ``location``, made by ``target(src, outside)`` (a link, a folder...)."""
    def build(src, out):
        path = weighted_warp_file(src, data_file="real.data", **entries)
        target(src, out)
        model = onnx.load(path, load_external_data=False)
        set_external_data(initializer_named(model, "w"), location=location)
        return write_model(model, path)
    return build


def _link_out(src, out):
    (out / "secret.data").write_bytes((src / "real.data").read_bytes())
    os.symlink(out / "secret.data", src / "link.data")


def _folder_out(src, out):
    (out / "secret.data").write_bytes((src / "real.data").read_bytes())
    os.symlink(out, src / "sub")


case("external: symlink out of the folder", message="symbolic link")(_relocated(_link_out, "link.data"))
case("external: symlinked sub-folder", message="symbolic link")(_relocated(_folder_out, "sub/secret.data"))
case("external: location is a folder", message="not a regular file")(
    _relocated(lambda src, out: (src / "dir.data").mkdir(), "dir.data"))
case("external: location is a FIFO", message="not a regular file")(
    _relocated(lambda src, out: os.mkfifo(src / "fifo.data"), "fifo.data"))
case("external: non-numeric offset", message="not a whole number")(lambda src, out: weighted_warp_file(src, offset="abc"))
case("external: negative offset", message="not a whole number")(lambda src, out: weighted_warp_file(src, offset="-4"))
case("external: offset with spaces", message="not a whole number")(lambda src, out: weighted_warp_file(src, offset=" 0"))
case("external: huge offset", message="too short")(lambda src, out: weighted_warp_file(src, offset="9" * 19))
case("external: non-numeric length", message="not a whole number")(lambda src, out: weighted_warp_file(src, length="1e3"))
case("external: length shorter than the tensor", message="is not the 256 bytes")(
    lambda src, out: weighted_warp_file(src, length="100"))
case("external: offset past the end", message="too short")(lambda src, out: weighted_warp_file(src, offset="4096"))


def _truncated_data(length: bool):
    def build(src, out):
        path = weighted_warp_file(src, length="256" if length else None)
        (src / "m.onnx.data").write_bytes((src / "m.onnx.data").read_bytes()[:100])
        return path
    return build


case("external: short file, no length", message="too short")(_truncated_data(False))
case("external: short file, with length", message="too short")(_truncated_data(True))
case("external: non-UTF-8 location", message="not valid UTF-8")(
    lambda src, out: write_model(weighted_warp_file(src, location="QQQQQQ").read_bytes().replace(b"QQQQQQ", b"\xff\xfe" * 3),
                           src / "m.onnx"))


@case("external: string tensor", message="fixed-size element type")
def _string_tensor(src, out):
    path = weighted_warp_file(src)
    model = onnx.load(path, load_external_data=False)
    initializer_named(model, "size").CopyFrom(onnx.TensorProto(name="size", data_type=TensorProto.STRING, dims=[4],
                                                        data_location=TensorProto.EXTERNAL))
    set_external_data(initializer_named(model, "size"), location="m.onnx.data", offset="0", length="16")
    return write_model(model, path)


@case("external: in an If body, leaving the folder", message="leaves the model's folder")
def _body_escape(src, out):
    inner = numpy_helper.from_array(np.ones(4, np.float32), "k")
    inner.ClearField("raw_data")
    inner.data_location = TensorProto.EXTERNAL
    set_external_data(inner, location="../../etc/passwd", offset="0", length="16")
    branch = helper.make_graph([helper.make_node("Identity", ["k"], ["r"])], "b", [],
                               [helper.make_tensor_value_info("r", TensorProto.FLOAT, [4])], [inner])
    graph = helper.make_graph([helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch)], "g",
                              [helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    return write_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), src / "m.onnx")


@case("external: a Constant node's tensor", message="holds a constant in external data")
def _constant_external(src, out):
    def mutate(m):
        value = numpy_helper.from_array(np.ones((1, 2, 3), np.float32), "c")
        value.ClearField("raw_data")
        value.data_location = TensorProto.EXTERNAL
        set_external_data(value, location="m.onnx", offset="0", length="24")
        m.graph.node.insert(0, helper.make_node("Constant", [], ["theta"], value=value))
        del m.graph.input[1]
    return _model(src, mutate)


@case("external: two tensors, one name", message="two initializers named")
def _same_name(src, out):
    path = weighted_warp_file(src)
    model = onnx.load(path, load_external_data=False)
    inner = onnx.TensorProto()
    inner.CopyFrom(initializer_named(model, "w"))
    branch = helper.make_graph([helper.make_node("Identity", ["w"], ["r"])], "b", [],
                               [helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, 1, 8, 8])], [inner])
    model.graph.node.append(helper.make_node("If", ["c"], ["extra"], then_branch=branch, else_branch=branch))
    model.graph.input.append(helper.make_tensor_value_info("c", TensorProto.BOOL, []))
    model.graph.output.append(helper.make_tensor_value_info("extra", TensorProto.FLOAT, [1, 1, 8, 8]))
    return write_model(model, path)


def by_name() -> dict[str, CorpusCase]:
    return {c.name: c for c in CASES}


__all__ = ["CASES", "COMMANDS", "CorpusCase", "by_name"]
