"""custom.ops::FusedGridSample and custom.ops::AffineGrid (ops/OPS.md) in OpenVINO: an extension
library that OpenVINO's ONNX frontend uses for the nodes of the custom.ops domain (read_model
turns each into an OpenVINO operation) and whose operations the CPU plugin runs on surgeon's
kernels (the same code as ``surgeon_ops.kernels`` and the onnxruntime op library).

    import surgeon_ops.openvino
    core = surgeon_ops.openvino.core()                         # an openvino.Core with it added
    core.add_extension(surgeon_ops.openvino.library_path())    # or into your own Core, any number
    model = core.compile_model(core.read_model("model.fused.onnx"), "CPU")

The library is compiled when surgeon is installed, against the openvino package installed in
that environment (CMakeLists.txt beside this file), and loads into that OpenVINO release only:
install openvino first, and reinstall surgeon after changing openvino's version.
"""

from __future__ import annotations

from pathlib import Path

from surgeon_ops.kernels import installed

HOW_TO_BUILD = ("the OpenVINO extension is built only when the openvino package is installed where surgeon is "
                "installed: `pip install openvino`, then reinstall surgeon (`pip install .`, or `pip install -e .`)")
OPS = ("custom.ops::FusedGridSample", "custom.ops::AffineGrid")  # what the extension implements


class ExtensionUnavailable(installed.LibraryNotInstalled):
    """The extension is not installed, or was built for another OpenVINO release (one line)."""


def built_for() -> str:
    """The OpenVINO release the installed extension was built against ("2026.4.1")."""
    return _installed().with_name("openvino_version.txt").read_text().strip()


def library_path() -> str:
    """Path to the installed extension, for ``openvino.Core.add_extension``; ExtensionUnavailable
    (one line saying what to do) when it is not installed or the installed openvino is another
    release than the one it was built against."""
    path = _installed()
    wanted = path.with_name("openvino_version.txt").read_text().strip()
    try:
        import openvino
    except ImportError:
        raise ExtensionUnavailable(f"the OpenVINO extension needs the openvino package it was built against "
                                   f"(`pip install openvino=={wanted}`)") from None
    have = openvino.__version__.split("-")[0]
    if have != wanted:
        raise ExtensionUnavailable(f"the OpenVINO extension was built against OpenVINO {wanted}, this is {have}: "
                                   f"reinstall surgeon (`pip install .`) to build it for {have}, or "
                                   f"`pip install openvino=={wanted}`")
    return str(path)


def core(*args, **kwargs):
    """A new ``openvino.Core(*args, **kwargs)`` with the extension added."""
    import openvino

    path = library_path()
    result = openvino.Core(*args, **kwargs)
    result.add_extension(path)
    return result


def _installed() -> Path:
    try:
        return installed.find(__package__, "surgeon_openvino", HOW_TO_BUILD)
    except installed.LibraryNotInstalled as exc:
        raise ExtensionUnavailable(str(exc)) from None
