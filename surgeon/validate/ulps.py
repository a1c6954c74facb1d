"""How far rounding may move each value, element by element: the rounding probe's step.

An operation rounds its result once, so its error is a few ulps of what it adds up, not of the
tensor it belongs to: a row of a mean square at 1e-7 is off by ulps of 1e-7, however large the
other rows. The step of an element is ``|v| + terms``:

- a value no node of the graph computes (an input, a constant, a region's leaf): ``|v|``, a
  rounding of itself;
- a sum (``Add``, ``Sub``, ``MatMul``, ``Gemm``, ``ReduceSum``, ``ReduceMean``, ``Einsum``...):
  ``terms`` is the same sum over the magnitudes of its operands (``|a| + |b|``, ``|A| @ |B|``),
  what cancellation leaves its result off by when it lands near 0;
- an op that rounds relative to its result (products, quotients, the elementwise functions,
  moves and selections): ``terms = 0``;
- a sampler (``GridSample``): its coordinate rounds at ulps of the image's extent, so ``terms``
  is that extent times twice the largest step between neighbouring pixels of the item and
  channel (at least the mean magnitude of its output);
- any other op (its sums are inside it: ``AffineGrid``'s base grid, a convolution):
  ``terms`` is the mean magnitude of its output, the homogeneous values such ops produce.

Whole numbers and non-finite elements get 0: exact arithmetic (sizes, indices, masks) never
rounds, and moving them would make a Floor or a Cast jump where the original never does.
"""

from __future__ import annotations

import numpy as np
from onnx import NodeProto, helper

SUMS = frozenset({"Add", "Sub", "Sum", "Mean", "MatMul", "Gemm", "ReduceSum", "ReduceMean", "Einsum"})
RELATIVE = frozenset("""
    Abs Acos Acosh Asin Asinh Atan Atanh Cast CastLike Ceil Celu Clip Concat Cos Cosh Div Dropout Elu Erf Exp
    Expand Flatten Floor Gather GatherElements GatherND Gelu HardSigmoid HardSwish Identity LeakyRelu Log Max
    Min Mish Mul Neg Pad Pow PRelu Reciprocal ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMin
    ReduceProd ReduceSumSquare Relu Reshape Round Selu Shrink Sigmoid Sign Sin Sinh Slice Softmax Softplus
    Softsign Split Sqrt Squeeze Swish Tan Tanh ThresholdedRelu Tile Transpose Unsqueeze Where
""".split())


def steps(nodes: list[NodeProto], names, values: dict[str, np.ndarray], amplitude: float) -> dict[str, np.ndarray]:
    """``{name: largest move of each element}`` for the float values among ``names`` (the others
    are left out, as are values with nothing to move): ``amplitude`` units of the type's
    precision times ``|v| + terms``. ``nodes`` are the graph's nodes (their producers);
    ``values`` holds ``names`` and, where it can, the operands of the sums computing them."""
    producer = {o: n for n in nodes for o in n.output if o}
    found = {}
    for name in names:
        value = np.asarray(values[name])
        if value.dtype.kind != "f" or value.dtype.itemsize < 2 or not name:
            continue
        with np.errstate(invalid="ignore"):
            movable = np.isfinite(value) & (value != np.round(value))
        if not movable.any():
            continue
        magnitude = np.abs(value.astype(np.float64))
        terms = _terms(producer.get(name), values, magnitude, movable)
        step = amplitude * float(np.finfo(value.dtype).eps)
        with np.errstate(invalid="ignore", over="ignore"):
            found[name] = np.where(movable, step * (magnitude + terms), 0.0).astype(value.dtype)
    return found


def _terms(node: NodeProto | None, values: dict, magnitude: np.ndarray, movable: np.ndarray):
    if node is None:
        return 0.0
    standard = node.domain in ("", "ai.onnx")
    if standard and node.op_type in RELATIVE:
        return 0.0
    if standard and node.op_type in SUMS:
        try:
            found = _sum_of_magnitudes(node, values)
        except (KeyError, ValueError, TypeError, IndexError):  # an operand not at hand: as an unknown op
            found = None
        if found is not None and np.shape(found) == magnitude.shape:
            return found
    if standard and node.op_type == "GridSample":
        found = _sampler_terms(node, values, magnitude.shape)
        if found is not None:
            return np.maximum(found, float(magnitude[movable].mean()))
    return float(magnitude[movable].mean())


def _sampler_terms(node: NodeProto, values: dict, shape) -> np.ndarray | None:
    """A sampler rounds where it turns a coordinate into pixels and folds it (reflection): at
    ulps of the image's extent, not of the coordinate, so an output moves by that extent times
    the largest step between neighbouring pixels of its item and channel (a 1e4 image whose
    output lands near 0 between a +1e4 and a -1e4 pixel moves by far more than ulps of 0;
    the mean output magnitude, what other ops get, misses that)."""
    image = values.get(node.input[0]) if node.input else None
    if image is None:
        return None
    image = np.asarray(image, np.float64)
    if image.ndim < 3 or len(shape) != image.ndim or shape[:2] != image.shape[:2]:
        return None
    spatial = tuple(range(2, image.ndim))
    with np.errstate(invalid="ignore", over="ignore"):
        image = np.where(np.isfinite(image), image, 0.0)
        step = np.zeros(image.shape[:2] + (1,) * len(spatial))
        for axis in spatial:  # the steps a coordinate's move slides along (bicubic's slope: up to 2 of them)
            if image.shape[axis] > 1:
                steps = np.abs(np.diff(image, axis=axis)).max(axis=spatial, keepdims=True)
                step = np.maximum(step, 2.0 * steps)
    return np.broadcast_to(max(image.shape[2:]) * step, shape)


def _sum_of_magnitudes(node: NodeProto, values: dict) -> np.ndarray | None:
    """The sum ``node`` computes, over the magnitudes of its operands."""
    op = node.op_type
    args = [np.abs(np.asarray(values[i], np.float64)) if i else None for i in node.input]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if op in ("Add", "Sub", "Sum", "Mean"):
        total = sum(args[1:], args[0])
        return total / len(args) if op == "Mean" else total
    if op == "MatMul":
        return np.matmul(args[0], args[1])
    if op == "Gemm":
        a = args[0].T if attrs.get("transA", 0) else args[0]
        b = args[1].T if attrs.get("transB", 0) else args[1]
        total = abs(attrs.get("alpha", 1.0)) * (a @ b)
        if len(args) > 2 and args[2] is not None:
            total = total + abs(attrs.get("beta", 1.0)) * args[2]
        return total
    if op == "Einsum":
        return np.einsum(attrs["equation"].decode() if isinstance(attrs["equation"], bytes) else attrs["equation"],
                         *args)
    return _reduce(op, args[0], attrs, node, values)


def _reduce(op: str, x: np.ndarray, attrs: dict, node: NodeProto, values: dict) -> np.ndarray:
    """ReduceSum / ReduceMean over ``|x|``, axes from the attribute or (later opsets) the input."""
    axes = attrs.get("axes")
    if axes is None and len(node.input) > 1 and node.input[1]:
        axes = np.asarray(values[node.input[1]], np.int64).ravel().tolist()
    if not axes:
        if attrs.get("noop_with_empty_axes", 0):
            return x
        axes = list(range(x.ndim))
    reduce = np.sum if op == "ReduceSum" else np.mean
    return reduce(x, axis=tuple(int(a) % x.ndim for a in axes), keepdims=bool(attrs.get("keepdims", 1)))
