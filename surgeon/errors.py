"""The one exception type users see: its message is a complete one-line explanation; and the
one line kept of an onnxruntime error (for an op it has no kernel for: what to do instead)."""

import os
import re


class SurgeonError(Exception):
    """A problem with the user's input or environment, reported as one line (never a traceback)."""


def cannot_write(path, exc: OSError) -> SurgeonError:
    """The one line for an output that could not be written (nothing of it is left behind)."""
    return SurgeonError(f"{path}: cannot write ({exc.strerror or exc})")


# onnxruntime's messages carry a status code, the source file and the C++ function: noise to a user.
_ORT_NOISE = re.compile(r"\[ONNXRuntimeError\] : \d+ : \w+ : |\S+\.(?:cc|h|cpp):\d+ (?:\w+ )?|"
                        r"\S*onnxruntime::\S+(?:\(.*?\))?(?: const)?(?: \[with [^\]]*\])? ")


# onnxruntime's words for a node no kernel, library or model-local function implements
_UNREGISTERED = re.compile(r"([\w.]*):(\w+)\(-?\d+\) is not a registered function/op")


def unregistered_op(exc) -> tuple[str, str] | None:
    """(domain, op_type) when onnxruntime refused a model for an op it has no kernel for."""
    found = _UNREGISTERED.search(str(exc))
    return (found.group(1), found.group(2)) if found else None


def missing_op_advice(domain: str, op_type: str, model: str | None = None) -> str:
    """One line: onnxruntime cannot run ``domain::op_type``, and the three ways out (``model``:
    the path the commands name; MODEL when there is none)."""
    m = model or "MODEL"
    stem = os.path.splitext(m)[0] if model else "MODEL"
    return (f"onnxruntime has no kernel for {domain}::{op_type}: register the op library that implements it "
            "(SessionOptions.register_custom_ops_library(path); `surgeon ort-lib` prints the installed plugins' "
            f"libraries), or add function bodies onnxruntime inlines (`surgeon fuse {m} {stem}.functions.onnx "
            f"--functions --raise-opset`), or write it back as standard ONNX (`surgeon unfuse {m} {stem}.std.onnx`)")


def ort_message(exc: Exception, model: str | None = None) -> str:
    """The first line of an onnxruntime error, without its source locations; for an op it has no
    kernel for, what to do instead (``model``: the file's path, for the commands)."""
    missing = unregistered_op(exc)
    if missing:
        return missing_op_advice(*missing, model=model)
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return _ORT_NOISE.sub("", first).strip() or first
