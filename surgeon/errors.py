"""The one exception type users see: its message is a complete one-line explanation; and the
one line kept of an onnxruntime error."""

import re


class SurgeonError(Exception):
    """A problem with the user's input or environment, reported as one line (never a traceback)."""


# onnxruntime's messages carry a status code, the source file and the C++ function: noise to a user.
_ORT_NOISE = re.compile(r"\[ONNXRuntimeError\] : \d+ : \w+ : |\S+\.(?:cc|h|cpp):\d+ (?:\w+ )?|"
                        r"\S*onnxruntime::\S+(?:\(.*?\))?(?: const)?(?: \[with [^\]]*\])? ")


def ort_message(exc: Exception) -> str:
    """The first line of an onnxruntime error, without its source locations."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return _ORT_NOISE.sub("", first).strip() or first
