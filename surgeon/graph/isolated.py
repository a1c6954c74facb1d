"""ONNX shape inference in a child process. onnx's C++ inference checks its own assumptions with
assertions that abort the whole process on some malformed graphs (a Slice of an axis that an
input too small for a convolution's kernel made negative: ``std::clamp`` with hi < lo), which no
Python exception catches; onnxruntime runs the same inference when it loads such a model, and
aborts too. A child that aborts takes only itself down, and the caller hears of it
(``InferenceAborted``) and can say so before anything loads the model in this process. One
child per inference on the weight-free skeleton (a few ms of fork); where there is no fork
(Windows), inference runs in this process as before."""

from __future__ import annotations

import faulthandler
import os

import onnx
from onnx import ModelProto


class InferenceAborted(Exception):
    """onnx's shape inference killed the process it ran in (the signal's number)."""


def infer_isolated(model: ModelProto, data_prop: bool = False) -> ModelProto | None:
    """``onnx.shape_inference.infer_shapes(model, data_prop=...)``, or None when it raises;
    ``InferenceAborted`` when it aborts."""
    if not hasattr(os, "fork"):
        try:
            return onnx.shape_inference.infer_shapes(model, data_prop=data_prop)
        except Exception:  # inference is best effort
            return None
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: infer, send the result, leave without running any of the parent's exit code
        status = 1
        try:
            os.close(read)
            quiet = os.open(os.devnull, os.O_WRONLY)  # the assertion's own message is the parent's to give
            os.dup2(quiet, 2)
            faulthandler.disable()  # a fault handler the parent set would print this child's abort
            out = onnx.shape_inference.infer_shapes(model, data_prop=data_prop).SerializeToString()
            view = memoryview(out)
            while view:
                view = view[os.write(write, view):]
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    chunks = []
    with os.fdopen(read, "rb") as pipe:
        while chunk := pipe.read(1 << 20):
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        raise InferenceAborted(os.WTERMSIG(status))
    if os.WEXITSTATUS(status) != 0:
        return None
    found = ModelProto()
    found.ParseFromString(b"".join(chunks))
    return found
