"""numpy arrays and torch tensors behind one small interface, so the public functions are
written once.  torch is only imported when a torch tensor is passed in."""

from __future__ import annotations

import math
import sys

import numpy as np

from . import _args

DTYPE_CODES = {np.dtype(np.float32): 0, np.dtype(np.float16): 1}


def is_torch(value) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


# Outputs of 4 KiB or more start on a 64-byte line.  np.empty puts a large array wherever malloc
# does, 16 bytes into a line on fresh mmap'd pages and anywhere on the heap, so the same call's
# output moved from call to call; at 16 or 48 bytes in, every other 32-byte store of the CPU
# kernels splits a line.  Against 16 bytes in, one thread, AVX-512 Xeon (docs/benchmarks.md):
# nearest 0.80-0.87x the time, bilinear 0.92-0.95x, bicubic 0.96-0.98x.  torch's and
# onnxruntime's allocators align to 64 already.
ALIGN, ALIGN_FROM = 64, 4096


def aligned_empty(shape, dtype) -> np.ndarray:
    """np.empty(shape, dtype), starting on a 64-byte line when it holds ALIGN_FROM bytes or more."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < ALIGN_FROM:
        return np.empty(shape, dtype)
    buf = np.empty(nbytes + ALIGN, np.uint8)
    skip = -buf.ctypes.data % ALIGN
    return buf[skip:skip + nbytes].view(dtype).reshape(shape)


class NumpyFrame:
    """Data on the CPU as numpy arrays."""

    is_cuda = False

    def convert(self, value, dtype=None):
        if is_torch(value):
            value = value.detach().cpu().numpy()
        return np.asarray(value, dtype=dtype)

    def dtype(self, a) -> np.dtype:
        return _args.data_dtype(a.dtype)

    def contiguous(self, a):
        return np.ascontiguousarray(a)

    def empty(self, shape, dtype):
        return aligned_empty(shape, dtype)

    def ptr(self, a) -> int:
        return a.ctypes.data

    def to_numpy(self, a):
        return a

    def from_numpy(self, a):
        return a

    def stream(self):
        raise AssertionError("numpy data has no CUDA stream")


class TorchFrame:
    """Data as torch tensors on the reference tensor's device."""

    def __init__(self, ref):
        import torch

        self.torch = torch
        self.device = ref.device
        self.is_cuda = ref.device.type == "cuda"
        if ref.device.type not in ("cpu", "cuda"):
            raise ValueError(f"tensors on {ref.device.type} are not supported (cpu or cuda)")
        # Looked up on every call; a frame is built once per device (frame_for).
        self.to_torch = {np.dtype(np.float32): torch.float32, np.dtype(np.float16): torch.float16,
                         np.dtype(np.float64): torch.float64}
        self.to_numpy_dtype = {t: n for n, t in self.to_torch.items()}

    def convert(self, value, dtype=None):
        torch = self.torch
        tdtype = None if dtype is None else self.to_torch[np.dtype(dtype)]
        if not isinstance(value, torch.Tensor):
            value = torch.as_tensor(np.asarray(value))
        elif value.device == self.device and (tdtype is None or value.dtype == tdtype):
            return value  # the common case, and it is per call: no copy, no new tensor
        return value.detach().to(device=self.device, dtype=tdtype)

    def dtype(self, a) -> np.dtype:
        found = self.to_numpy_dtype.get(a.dtype)
        if found is None:
            raise ValueError(f"data must be float16 or float32 (float64 with backend='numpy'), got {a.dtype}")
        return found

    def contiguous(self, a):
        return a if a.is_contiguous() else a.detach().contiguous()

    def empty(self, shape, dtype):
        return self.torch.empty(tuple(shape), dtype=self.to_torch[np.dtype(dtype)], device=self.device)

    def ptr(self, a) -> int:
        return a.data_ptr()

    def to_numpy(self, a):
        return a.detach().cpu().numpy()

    def from_numpy(self, a):
        return self.torch.from_numpy(np.ascontiguousarray(a)).to(self.device)

    def stream(self) -> int:
        return self.torch.cuda.current_stream(self.device).cuda_stream


_NUMPY_FRAME = NumpyFrame()
_TORCH_FRAMES: dict = {}  # device -> TorchFrame; frames hold no per-call state


def frame_for(value):
    if not is_torch(value):
        return _NUMPY_FRAME
    frame = _TORCH_FRAMES.get(value.device)
    if frame is None:
        frame = _TORCH_FRAMES.setdefault(value.device, TorchFrame(value))
    return frame
