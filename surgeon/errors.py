"""What surgeon raises, and the one line kept of an onnxruntime error (for an op it has no kernel
for: what to do instead).

Every error is a ``SurgeonError`` whose message is a complete one-line explanation (the command
line prints it as is). A pipeline catches the kind it can act on (docs/errors.md):

- ``InvalidModelError``: the model cannot be read, or is not valid ONNX (its external data too);
- ``InvalidArgumentError`` (also a ``ValueError``): an argument has a value surgeon cannot use;
  ``ArgumentTypeError`` (also a ``TypeError``): it is not even of a type surgeon takes;
- ``CannotWriteError``: an output cannot be written (nothing of it is left behind);
- ``ValidationFailed``: ``fuse(validate=True)`` refused a result that differs from the original
  (the ``ValidationReport`` is attached);
- ``PluginError``: a plugin cannot be loaded, is malformed or ambiguous, or broke its contract.

Anything else (onnxruntime failing on a model, an engine hazard refusing the write, an opset the
model cannot be converted to) is a plain ``SurgeonError``.
"""

import os
import re


class SurgeonError(Exception):
    """A problem with the user's input or environment, reported as one line (never a traceback)."""


class InvalidModelError(SurgeonError):
    """The model cannot be read or is not valid ONNX: a missing, empty or truncated file, a
    checker failure, external data that is missing, too short or outside the model's folder."""


class InvalidArgumentError(SurgeonError, ValueError):
    """An argument surgeon cannot use: feeds that do not fit the model, a negative tolerance, an
    unknown device or engine, an input shape the model contradicts."""


class ArgumentTypeError(InvalidArgumentError, TypeError):
    """An argument of a type surgeon does not take (``None`` or an int as the model, a str for
    the plugins...)."""


class CannotWriteError(SurgeonError):
    """An output cannot be written: its folder is missing or read-only, it is the input (or a
    link to it), the disk is full. ``path``: the output concerned."""

    def __init__(self, message: str, path: str | None = None):
        super().__init__(message)
        self.path = path


class ValidationFailed(SurgeonError):
    """The rewritten model does not compute what the original computes. ``report``: the
    ``ValidationReport`` (``report.failures()`` lists each failure); ``fuse_report``: the fuse
    ``Report`` when ``fuse(validate=True)`` raised it (else None)."""

    def __init__(self, message: str, report=None, fuse_report=None):
        super().__init__(message)
        self.report = report
        self.fuse_report = fuse_report


class PluginError(SurgeonError):
    """A plugin cannot be loaded, is malformed, two plugins give the same name or op with no
    choice between them, a hook returned what it may not, or an op has no kernel to run it.
    ``plugin``: the plugin's label where one is known ("" otherwise)."""

    def __init__(self, message: str, plugin: str = ""):
        super().__init__(message)
        self.plugin = plugin


def cannot_write(path, exc: OSError) -> CannotWriteError:
    """The one line for an output that could not be written (nothing of it is left behind)."""
    return CannotWriteError(f"{path}: cannot write ({exc.strerror or exc})", path=os.fspath(path))


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
