"""Shapes that shape inference cannot tell, read off runs of the model (issue 39: "what inference
cannot tell, evaluation tells"). After onnxruntime's optimiser (FusedConv, NCHWc) or QOperator
quantisation, ONNX inference stops at ops it has no schema for; onnxruntime runs them.

The model's ancestors of the values asked for are run twice in onnxruntime, with every dynamic
input dim at a different size in each run. A dim equal in both runs is static; one that equals
the same input dim in both runs is that dim (its name); any other is a size the model computes,
named for the value and axis. Nothing is decided from one run, and a model that runs at neither
size tells nothing (no error: the shapes stay unknown)."""

from __future__ import annotations

import numpy as np
from onnx import ModelProto, TensorProto, helper

from ..forksafe import ForkSafeSession

# Sizes of the dynamic input dims in the two runs: distinct within a run and between runs, and
# large enough for a convolution stack to run (a dim listed twice in the inputs takes one size).
_FIRST, _SECOND, _STEP = 32, 48, 2
MAX_WEIGHTS = 1 << 26  # bytes of weights a measuring run may copy: memory follows the graph, not the weights


def measured_dims(proto: ModelProto, names: list[str]) -> dict[str, tuple]:
    """{value: dims} for the main-graph ``names`` the two runs computed; {} when they cannot run."""
    wanted = [n for n in names if n]
    model = _ancestors(proto, wanted)
    if model is None:
        return {}
    symbols = _symbols(model)
    runs = []
    for base in _bases(model, symbols):
        sizes = {s: base + _STEP * i for i, s in enumerate(symbols)}
        shapes = _run(model, wanted, sizes)
        if shapes is None:
            return {}
        runs.append((sizes, shapes))
    (first_sizes, first), (second_sizes, second) = runs
    by_pair = {(first_sizes[s], second_sizes[s]): s for s in symbols}
    found = {}
    for name in wanted:
        a, b = first.get(name), second.get(name)
        if a is None or b is None or len(a) != len(b):
            continue
        found[name] = tuple(int(x) if x == y else by_pair.get((x, y), f"{name}__d{axis}")
                            for axis, (x, y) in enumerate(zip(a, b)))
    return found


def _bases(model: ModelProto, symbols: list[str]) -> tuple[int, int]:
    """The two runs' first sizes: 32 and 48, halved while an input would hold more than a
    probe ever feeds at the second (a 3-D volume of five dynamic dims at 48 holds 30M)."""
    from .extract import MAX_VALUE

    first, second = _FIRST, _SECOND
    while first > 4:
        sizes = {s: second + _STEP * i for i, s in enumerate(symbols)}
        largest = max((np.prod([d.dim_value if d.HasField("dim_value") else sizes[d.dim_param or f"{vi.name}__d{a}"]
                                for a, d in enumerate(vi.type.tensor_type.shape.dim)], dtype=np.float64)
                       for vi in model.graph.input), default=0.0)
        if largest <= MAX_VALUE:
            break
        first, second = first // 2, second // 2
    return first, second


def _symbols(model: ModelProto) -> list[str]:
    """The dynamic input dims by name (an unnamed one named by its input and axis)."""
    found: dict[str, None] = {}
    for vi in model.graph.input:
        for axis, d in enumerate(vi.type.tensor_type.shape.dim):
            if not d.HasField("dim_value"):
                found[d.dim_param or f"{vi.name}__d{axis}"] = None
    return list(found)


def _ancestors(proto: ModelProto, wanted: list[str]) -> ModelProto | None:
    """A model of the main graph's nodes the wanted values need, those values its outputs; None
    where it holds ops no onnxruntime session here can run (custom.ops, by surgeon's own passes)."""
    graph = proto.graph
    producer = {o: n for n in graph.node for o in n.output if o}
    needed, stack, seen = [], list(wanted), set()
    while stack:
        value = stack.pop()
        node = producer.get(value)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        needed.append(node)
        stack.extend(i for i in node.input if i)
    if not needed or any(n.domain == "custom.ops" for n in needed):
        return None
    keep = {id(n) for n in needed}
    used = {i for n in needed for i in n.input}
    inputs = [vi for vi in graph.input if vi.name in used]
    inits = [t for t in graph.initializer if t.name in used]
    if any(t.data_location == TensorProto.EXTERNAL for t in inits) or sum(t.ByteSize() for t in inits) > MAX_WEIGHTS:
        return None  # weights elsewhere, or many: not read or copied for a shape
    nodes = [n for n in graph.node if id(n) in keep]
    outputs = [helper.make_empty_tensor_value_info(v) for v in dict.fromkeys(wanted)]
    small = helper.make_graph(nodes, "measure", inputs, outputs, inits)
    model = helper.make_model(small, opset_imports=list(proto.opset_import), ir_version=proto.ir_version)
    return model


def _run(model: ModelProto, wanted: list[str], sizes: dict[str, int]) -> dict[str, tuple] | None:
    import onnxruntime as ort

    from .extract import MAX_VALUE

    feeds = {}
    rng = np.random.default_rng(0)
    for vi in model.graph.input:
        tt = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else sizes[d.dim_param or f"{vi.name}__d{axis}"]
                for axis, d in enumerate(tt.shape.dim)]
        if not tt.HasField("shape") or int(np.prod(dims, dtype=np.float64)) > MAX_VALUE:
            return None  # no rank to feed, or more than a probe ever feeds
        dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type)
        feeds[vi.name] = rng.standard_normal(dims).astype(dtype) if dtype.kind == "f" else np.zeros(dims, dtype)
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        session = ForkSafeSession(ort.InferenceSession(model.SerializeToString(), options,
                                                       providers=["CPUExecutionProvider"]))
        values = session.run(wanted, feeds)
    except Exception:  # noqa: BLE001 - a model that does not run at these sizes tells nothing
        return None
    return {name: np.shape(v) for name, v in zip(wanted, values)}
