"""The two ops as surgeon's runtime calls them for one node,
``fn(inputs, attrs, device="cpu") -> [outputs]``, and ``CUSTOM_OPS``, what the built-in patterns
register. The kernels wrap ``surgeon_ops.kernels`` (imported on first call) and turn the optional
``size`` input or the ``output_size`` attribute into torch's ``size`` argument."""

from __future__ import annotations

import sys

import numpy as np

from surgeon import CustomOp

from . import function_bodies, standard
from .draws import draw_theta


def _size(theta: np.ndarray, size_input, attrs: dict, channels: int) -> tuple[int, ...]:
    if size_input is not None:
        return tuple(int(s) for s in np.asarray(size_input).reshape(-1))
    spatial = attrs.get("output_size")
    if not spatial:
        raise ValueError("custom.ops node has neither a size input nor an output_size attribute")
    return (int(theta.shape[0]), int(channels), *(int(s) for s in spatial))


def _optional(inputs: list, i: int):
    return inputs[i] if len(inputs) > i else None


_unbuildable: list[str] = []  # why the compiled kernels cannot be had in this install, once known


def _call(name: str, *args, **kwargs):
    """The compiled kernel; the numpy reference when the install has no library (said once)."""
    from . import kernels

    if not _unbuildable:
        try:
            return getattr(kernels, name)(*args, **kwargs)
        except kernels.LibraryNotInstalled as exc:
            _unbuildable.append(str(exc))
            print(f"surgeon: using the numpy reference kernels (slower): {exc}", file=sys.stderr)
    result = getattr(kernels, name)(*args, backend="numpy", **kwargs)
    return result.astype(np.asarray(args[0]).dtype, copy=False)


def fused_grid_sample(inputs: list, attrs: dict, device: str = "cpu") -> list:
    x, theta = inputs[0], inputs[1]
    if theta.ndim and x.ndim and theta.shape[0] != x.shape[0]:  # the contract: same N (the kernels would broadcast 1)
        raise ValueError(f"theta has batch {theta.shape[0]}, X has {x.shape[0]}: FusedGridSample needs the same N")
    size = _size(theta, _optional(inputs, 2), attrs, x.shape[1])
    return [_call("fused_grid_sample", x, theta, size, mode=attrs.get("mode", "bilinear"),
                  padding_mode=attrs.get("padding_mode", "zeros"), align_corners=bool(attrs.get("align_corners", 0)))]


def affine_grid(inputs: list, attrs: dict, device: str = "cpu") -> list:
    theta = inputs[0]
    size = _size(theta, _optional(inputs, 1), attrs, 1)
    return [_call("affine_grid", theta, size, align_corners=bool(attrs.get("align_corners", 0)))]


# torch's enums, as the ATen fallback passes them.
_ATEN_MODES, _ATEN_PADDINGS = ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection")


def aten(inputs: list, attrs: dict, device: str = "cpu") -> list:
    """The two ATen fallback operators an affine_grid -> grid_sample export holds (exporters
    below opset 16 with ONNX_ATEN_FALLBACK), so such an original runs and validates too."""
    operator = attrs.get("operator", "")
    if operator == "affine_grid_generator":  # (theta, size, align_corners)
        theta, size, flag = inputs[:3]
        return [_call("affine_grid", theta, size, align_corners=bool(np.asarray(flag).reshape(-1)[0]))]
    if operator == "grid_sampler":  # (input, grid, interpolation_mode, padding_mode, align_corners)
        x, grid, mode, pad, flag = inputs[:5]
        return [_call("grid_sample", x, grid, mode=_ATEN_MODES[int(np.asarray(mode).reshape(-1)[0])],
                      padding_mode=_ATEN_PADDINGS[int(np.asarray(pad).reshape(-1)[0])],
                      align_corners=bool(np.asarray(flag).reshape(-1)[0]))]
    raise ValueError(f"ATen operator {operator!r} has no surgeon kernel (only affine_grid_generator, grid_sampler)")


_libraries: dict[str, object] = {}  # device -> path, or the exception building it raised


def ort_library(device: str = "cpu") -> str:
    """The onnxruntime op library for ``device`` (surgeon_ops.ort), as installed."""
    if device not in _libraries:
        from . import ort

        try:
            _libraries[device] = ort.library_path(device)
        except Exception as exc:  # not installed: the runtime says why and uses the kernels
            _libraries[device] = exc
    found = _libraries[device]
    if isinstance(found, Exception):
        raise found
    return found


def openvino_extension() -> str:
    """The OpenVINO extension (surgeon_ops.openvino), as installed for this OpenVINO release."""
    from . import openvino

    return openvino.library_path()


DOMAIN = function_bodies.DOMAIN


def _plugin(contract_op: str) -> tuple[str, str, str]:
    """Where surgeon_ops.tensorrt registers the op's plugin (profile: plain data, no TensorRT)."""
    from .tensorrt import profile

    return (profile.op_type(contract_op), profile.VERSION, profile.NAMESPACE)


CUSTOM_OPS = [
    CustomOp(DOMAIN, "FusedGridSample", kernel=fused_grid_sample, ort_library=ort_library,
             openvino_extension=openvino_extension,
             to_standard=standard.fused_grid_sample, function=function_bodies.fused_grid_sample,
             draw_inputs={1: draw_theta}, position_inputs=(1,), tensorrt_plugin=_plugin("FusedGridSample")),
    CustomOp(DOMAIN, "AffineGrid", kernel=affine_grid, ort_library=ort_library, openvino_extension=openvino_extension,
             # Opset 20's AffineGrid takes the same inputs and attribute and gives the same grid; only a size-1
             # dim with align_corners=1, which ONNX leaves undefined (its reference -1, onnxruntime +1), is torch's 0.
             to_standard=standard.affine_grid, standard_op="AffineGrid",
             function=function_bodies.affine_grid, draw_inputs={0: draw_theta}, position_inputs=(0,),
             tensorrt_plugin=_plugin("AffineGrid")),
    CustomOp("org.pytorch.aten", "ATen", kernel=aten),
    # The TensorRT profile's name for AffineGrid (surgeon_ops.tensorrt.profile): the same op, no
    # onnxruntime library (it registers the contract's names only); a body for onnxruntime instead.
    CustomOp(DOMAIN, "AffineGridPlugin", kernel=affine_grid, to_standard=standard.affine_grid,
             function=lambda opset, shapes: function_bodies.affine_grid(opset, shapes, name="AffineGridPlugin"),
             draw_inputs={0: draw_theta}, position_inputs=(0,), tensorrt_plugin=_plugin("AffineGrid")),
]
