"""Which device to run on, and the onnxruntime providers that go with it."""

from __future__ import annotations

import importlib.util

from ..errors import InvalidArgumentError, SurgeonError

DEVICES = ("cpu", "cuda")


def _gpu_present() -> tuple[bool, str]:
    """Whether a CUDA GPU is usable, and how we know. torch is asked first: onnxruntime-gpu lists
    its CUDA provider even on machines without a GPU."""
    import onnxruntime as ort

    if importlib.util.find_spec("torch") is not None:
        import torch

        if torch.cuda.is_available():
            return True, ""
        return False, "torch.cuda.is_available() is False"
    if "CUDAExecutionProvider" in ort.get_available_providers():
        return True, ""
    return False, "torch is not installed and onnxruntime has no CUDAExecutionProvider"


def providers_for(device: str) -> list[str]:
    """onnxruntime providers for ``device``; a clear error when the device is not there."""
    import onnxruntime as ort

    if device == "cpu":
        return ["CPUExecutionProvider"]
    if device != "cuda":
        raise InvalidArgumentError(f"unknown device {device!r}: use one of {', '.join(DEVICES)}")
    present, why = _gpu_present()
    if not present:
        raise SurgeonError(f"device 'cuda' asked for, but no CUDA GPU is available ({why}); use --device cpu")
    if "CUDAExecutionProvider" in ort.get_available_providers():
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]
    return ["CPUExecutionProvider"]  # standard parts on CPU; kernels still get device="cuda"
