"""Model inputs: what the model declares, random inputs when none are given, and checks on feeds.

Random inputs are reproducible: numpy's default_rng(seed) with seed 0 unless told otherwise.
Floats are signed (a rewrite that loses a sign or an absolute value shows) and span the range
where approximations part from the functions they approximate: half the elements uniform in
[-1, 1), half of magnitude 1 to 8 (log-uniform). A tanh GELU differs from the erf one by at
most 1.5e-4 on [-1, 1) but 4.7e-4 near 2.7; QuickGelu's sigmoid(1.702 x) by 0.02 near 2.
Integers are uniform in [0, 4); bools fair coins. Inputs a plugin asks to draw its own way (see
``draws.py``: transform matrices) are drawn by its function. A dynamic dim
without an ``--input-shape`` override is 1 (a named dim shared by several inputs takes the value
an override gave it on any of them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
from onnx import ModelProto, TensorProto, helper

from ..reportfields import bytes_text
from ..errors import ArgumentTypeError, InvalidArgumentError, SurgeonError

DEFAULT_MAX_BYTES = 4 * 2**30
DEFAULT_SEED = 0
DYNAMIC_DIM_DEFAULT = 1
FLOAT_LARGEST = 8.0  # the largest magnitude random floats take
FAR_BATCH, FAR_DIM = 2, 67  # validate's far round: dynamic dims past 64 (the batch at 2)
FAR_INTS = (-1, 1)  # and integers at -1 and 0 (where a gate or an index bites)


def describe_floats(far: bool = False) -> str:
    """How floats are drawn, for reports."""
    text = f"floats signed, half in [-1, 1), half of magnitude 1-{FLOAT_LARGEST:g}"
    return text + (f"; far: dynamic dims {FAR_DIM} (batch {FAR_BATCH}), integers at -1 and 0" if far else "")


def random_floats(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    """Half the elements uniform in [-1, 1), half with magnitudes log-uniform in [1, 8) and a
    random sign: small values where relative precision matters, several units where
    approximations show."""
    small = rng.uniform(-1.0, 1.0, size=shape)
    large = np.exp(rng.uniform(0.0, np.log(FLOAT_LARGEST), size=shape)) * rng.choice([-1.0, 1.0], size=shape)
    return np.where(rng.random(shape) < 0.5, small, large).astype(dtype)


@dataclass
class InputSpec:
    name: str
    elem_type: int
    dims: tuple | None  # int (static), str (named dynamic), None (unknown); None = rank unknown

    @property
    def dtype(self) -> np.dtype | None:
        try:
            return np.dtype(helper.tensor_dtype_to_np_dtype(self.elem_type))
        except Exception:  # strings, undefined, exotic types
            return None

    @property
    def type_name(self) -> str:
        return TensorProto.DataType.Name(self.elem_type).lower() if self.elem_type else "unknown"


def input_specs(proto: ModelProto) -> list[InputSpec]:
    """Inputs a caller must feed: graph inputs that are not also initializers (old IRs list both)."""
    inits = {t.name for t in proto.graph.initializer}
    specs = []
    for vi in proto.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type"):
            raise SurgeonError(f"input {vi.name!r} is not a tensor (sequences and maps are not supported)")
        dims = None
        if tt.HasField("shape"):
            dims = tuple(int(d.dim_value) if d.HasField("dim_value") else (d.dim_param or None)
                         for d in tt.shape.dim)
        specs.append(InputSpec(vi.name, tt.elem_type, dims))
    return specs


def check_memory(total: int, max_bytes: int, what: str = "inputs") -> None:
    if total > max_bytes:
        raise InvalidArgumentError(
            f"{what} would need {bytes_text(total, iec=True)}, more than the {bytes_text(max_bytes, iec=True)} limit; "
            "raise it with --max-memory GiB (max_bytes= in the library)"
        )


def resolve_shapes(specs: Sequence[InputSpec], overrides: Mapping[str, Sequence[int]] | None,
                   names: Sequence[str] | None = None, far: bool = False, avoid: Mapping[str, int] | None = None,
                   pinned: Mapping[str, int] | None = None) -> tuple[dict[str, tuple[int, ...]], list[str]]:
    """Concrete shapes for ``names`` (default: all specs), and notes on the dims defaulted (``far``:
    dynamic dims at FAR_DIM, a leading one at FAR_BATCH; ``avoid``: ``"x[2]"`` -> a size a
    defaulted dim does not take, the next one instead; ``pinned``: ``"x[2]"`` -> the size a
    defaulted dim takes, the only one the model runs at)."""
    overrides = dict(overrides or {})
    by_name = {s.name: s for s in specs}
    for name, dims in overrides.items():
        if name not in by_name:
            known = ", ".join(by_name) or "none"
            raise InvalidArgumentError(f"--input-shape: the model has no input {name!r} (inputs: {known})")
        declared = by_name[name].dims
        if declared is not None and len(declared) != len(dims):
            raise InvalidArgumentError(f"--input-shape: input {name!r} has rank {len(declared)}, got {len(dims)} dims")
        for i, d in enumerate(declared or ()):
            if isinstance(d, int) and d > 0 and d != dims[i]:
                raise InvalidArgumentError(f"--input-shape: input {name!r} dim {i} is fixed at {d}, got {dims[i]}")
    named: dict[str, int] = {}  # dim_param -> value an override gave it
    for name, dims in overrides.items():
        for d, v in zip(by_name[name].dims or (), dims):
            if isinstance(d, str):
                named.setdefault(d, int(v))
    shapes, notes = {}, []
    for name in names if names is not None else [s.name for s in specs]:
        spec = by_name[name]
        if name in overrides:
            shapes[name] = tuple(int(v) for v in overrides[name])
            continue
        if spec.dims is None:
            raise InvalidArgumentError(f"input {name!r} has no declared shape: give one with --input-shape {name}:D1,D2,...")
        shape, defaulted = [], []
        for i, d in enumerate(spec.dims):
            if isinstance(d, int) and d > 0:
                shape.append(d)
            elif isinstance(d, str) and d in named:
                shape.append(named[d])
            elif f"{name}[{i}]" in (pinned or {}):
                shape.append(int(pinned[f"{name}[{i}]"]))
                notes.append(f"input {name!r}: dim {i}{f' ({d})' if d else ''} set to {shape[-1]}: the original "
                             "runs at that size only (a rewrite's warning says why)")
                if isinstance(d, str) and d:
                    named.setdefault(d, shape[-1])
            else:
                shape.append((FAR_BATCH if i == 0 else FAR_DIM) if far else DYNAMIC_DIM_DEFAULT)
                bumped = (avoid or {}).get(f"{name}[{i}]") == shape[-1]
                if bumped:
                    shape[-1] += 1
                    notes.append(f"input {name!r}: dim {i}{f' ({d})' if d else ''} set to {shape[-1]}: at "
                                 f"{shape[-1] - 1} the original is undefined there (a rewrite's warning says why)")
                if isinstance(d, str) and d:
                    named.setdefault(d, shape[-1])  # one symbol, one value
                if not bumped:
                    defaulted.append(f"{i} ({d})" if d else str(i))
        if defaulted and not far:
            notes.append(f"input {name!r}: dynamic dim(s) {', '.join(defaulted)} set to {DYNAMIC_DIM_DEFAULT} "
                         f"(use --input-shape {name}:...)")
        shapes[name] = tuple(shape)
    return shapes, notes


def _random_array(rng: np.random.Generator, spec: InputSpec, shape: tuple[int, ...], far: bool = False) -> np.ndarray:
    dtype = spec.dtype
    if dtype is None or dtype.kind in "OUSV":
        raise SurgeonError(f"cannot make random values for input {spec.name!r} of type {spec.type_name}; give it")
    if dtype.kind == "f":
        return random_floats(rng, shape, dtype)
    if dtype.kind in "iu":
        low, high = FAR_INTS if far and dtype.kind == "i" else (0, 4)
        return rng.integers(low, high, size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind == "c":
        return (rng.random(shape) + 1j * rng.random(shape)).astype(dtype)
    raise SurgeonError(f"cannot make random values for input {spec.name!r} of type {spec.type_name}; give it")


def random_inputs(model, input_shapes: Mapping[str, Sequence[int]] | None = None, seed: int = DEFAULT_SEED,
                  max_bytes: int = DEFAULT_MAX_BYTES, names: Sequence[str] | None = None,
                  given_bytes: int = 0, drawers: Mapping[str, Callable] | None = None, far: bool = False,
                  avoid: Mapping[str, int] | None = None, pinned: Mapping[str, int] | None = None
                  ) -> tuple[dict[str, np.ndarray], list[str]]:
    """Seeded random values for the model's inputs (or only ``names``), and notes on defaults.
    ``drawers`` maps input names to ``draw(shape, dtype, rng)`` for inputs drawn their own way;
    ``far``: validate's far round (dims past 64, integers from -1, each drawer's ``far``).

    The memory they need (plus ``given_bytes`` already held) is checked before anything is
    allocated.
    """
    from ..io.load import load_model_proto

    proto = load_model_proto(model).proto
    specs = input_specs(proto)
    shapes, notes = resolve_shapes(specs, input_shapes, names, far, avoid, pinned)
    by_name = {s.name: s for s in specs}
    total = given_bytes
    for name, shape in shapes.items():
        itemsize = by_name[name].dtype.itemsize if by_name[name].dtype is not None else 1
        total += math.prod(shape) * itemsize
    check_memory(total, max_bytes)
    rng = np.random.default_rng(seed)
    feeds = {}
    for name, shape in shapes.items():
        draw = (drawers or {}).get(name)
        draw = getattr(draw, "far", draw) if far else draw
        if draw is not None and by_name[name].dtype is not None and by_name[name].dtype.kind == "f":
            feeds[name] = np.asarray(draw(shape, by_name[name].dtype, rng)).astype(by_name[name].dtype)
            notes.append(f"input {name!r}: {describe(draw)}")
        else:
            feeds[name] = _random_array(rng, by_name[name], shape, far)
    return feeds, notes


def check_feeds(specs: Sequence[InputSpec], feeds: Mapping[str, np.ndarray], optional: Sequence[str] = ()) -> None:
    """Every required input present, nothing unknown, dtypes and static dims as declared."""
    by_name = {s.name: s for s in specs}
    unknown = [n for n in feeds if n not in by_name and n not in optional]
    if unknown:
        raise InvalidArgumentError(f"the model has no input {unknown[0]!r} (inputs: {', '.join(by_name) or 'none'})")
    missing = [n for n in by_name if n not in feeds]
    if missing:
        raise InvalidArgumentError(f"no value given for input(s) {', '.join(repr(m) for m in missing)}; "
                           "give them, or pass no feeds for random ones")
    for name, value in feeds.items():
        spec = by_name.get(name)
        if spec is None:
            continue
        if not isinstance(value, np.ndarray):
            raise ArgumentTypeError(f"input {name!r}: expected a numpy array, got {type(value).__name__}")
        if spec.dtype is not None and value.dtype != spec.dtype:
            raise InvalidArgumentError(f"input {name!r}: the model expects {spec.dtype.name}, got {value.dtype.name}")
        if spec.dims is None:
            continue
        if value.ndim != len(spec.dims):
            raise InvalidArgumentError(f"input {name!r}: the model expects rank {len(spec.dims)} "
                               f"{_fmt_dims(spec.dims)}, got shape {list(value.shape)}")
        for i, (d, v) in enumerate(zip(spec.dims, value.shape)):
            if isinstance(d, int) and d > 0 and d != v:
                raise InvalidArgumentError(f"input {name!r}: dim {i} must be {d} {_fmt_dims(spec.dims)}, "
                                   f"got shape {list(value.shape)}")


def _fmt_dims(dims) -> str:
    return "[" + ",".join(str(d) if d is not None else "?" for d in dims) + "]"


def describe(draw: Callable) -> str:
    text = (draw.__doc__ or draw.__name__).strip().splitlines()
    return text[0].rstrip(".") if text else draw.__name__
