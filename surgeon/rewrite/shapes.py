"""Shapes: what the model declares, what ONNX shape inference adds, input-shape overrides, and
the value_info written for values that rewrites create.

A dim is an int (static), a str (a named dynamic dim) or None (unknown).
"""

from __future__ import annotations

from typing import Iterable, Sequence

from onnx import GraphProto, ModelProto, TypeProto, ValueInfoProto, helper

from ..errors import InvalidArgumentError
from ..graph.node import subgraphs_of
from ..io.load import infer_skeleton, iter_tensors

ShapeInfo = tuple  # (elem_type: int, dims: tuple of int | str | None, or None)


def read_type(tp: TypeProto) -> ShapeInfo | None:
    if not tp.HasField("tensor_type"):
        return None
    tt = tp.tensor_type
    if not tt.HasField("shape"):
        return (tt.elem_type, None)
    dims = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param") and d.dim_param:
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return (tt.elem_type, tuple(dims))


def make_value_info(name: str, elem_type: int, dims: Sequence | None) -> ValueInfoProto:
    if dims is None:
        return helper.make_tensor_value_info(name, elem_type, None)
    return helper.make_tensor_value_info(name, elem_type, [d if d is not None else "" for d in dims])


def _walk_graphs(graph: GraphProto) -> Iterable[GraphProto]:
    yield graph
    for node in graph.node:
        for body in subgraphs_of(node):
            yield from _walk_graphs(body)


def value_infos(graph: GraphProto, intermediates: bool = True) -> dict[str, ValueInfoProto]:
    """Inputs, outputs (and value_info, unless ``intermediates=False``) of every scope by name;
    decoded only when asked for."""
    found: dict[str, ValueInfoProto] = {}
    for g in _walk_graphs(graph):
        for field in ((g.value_info,) if intermediates else ()) + (g.input, g.output):
            for vi in field:
                found[vi.name] = vi
    return found


def infer_shapes(proto: ModelProto, value_info: bool = False, propagate: bool = True) -> dict[str, ValueInfoProto]:
    """ONNX shape inference on a weight-free copy (data propagation where it stays cheap, when
    ``propagate``), from the inputs alone: a model's value_info for its intermediate values is not
    believed (a static dim it declares may be one the data does not have) unless ``value_info``
    (shapes surgeon declared itself); {} when it fails."""
    inferred = infer_skeleton(proto, keep_small=64, value_info=value_info, propagate=propagate)
    return value_infos(inferred.graph) if inferred is not None else {}


def shape_of(infos: dict[str, ValueInfoProto], name: str) -> ShapeInfo | None:
    vi = infos.get(name)
    return read_type(vi.type) if vi is not None else None


def is_static(dims) -> bool:
    return dims is not None and all(isinstance(d, int) for d in dims)


class ShapeTable:
    """Lazily answers (elem_type, dims) for any value; runs inference once, on first need.

    Graph inputs and outputs are the model's interface: their declarations are believed.
    Intermediate values get what inference derives from the inputs; where it derives nothing, a
    declared value_info gives the type, the rank and the names of dynamic dims, but no static
    dim (nothing confirmed it)."""

    def __init__(self, proto: ModelProto):
        self.proto = proto
        self.table: dict[str, ShapeInfo] = {}
        self._declared = value_infos(proto.graph, intermediates=False)
        self._stated = value_infos(proto.graph)  # as loaded, intermediate value_info included
        self._initializers: dict | None = None
        self._inferred: dict[str, ValueInfoProto] | None = None
        self._propagated = False  # the inference with data propagation ran
        self._measured: dict[str, tuple] | None = None  # dims read off two runs (graph/measure.py)

    def _known(self, name: str) -> ShapeInfo | None:
        if name in self.table:
            return self.table[name]
        info = shape_of(self._declared, name)
        if info is None:
            if self._initializers is None:
                self._initializers = {t.name: t for t in iter_tensors(self.proto.graph)}
            tensor = self._initializers.get(name)
            if tensor is not None:
                info = (tensor.data_type, tuple(tensor.dims))
        self.table[name] = info
        return info

    def get(self, name: str) -> ShapeInfo | None:
        info = self._known(name)
        if info is not None and is_static(info[1]):
            return info
        if self._inferred is None:  # plain inference first: it is enough for most values
            self._inferred = infer_shapes(self.proto, propagate=False)
        inferred = shape_of(self._inferred, name)
        if not self._propagated and (inferred is None or inferred[1] is None or any(
                d is None or (isinstance(d, str) and d.startswith("unk__")) for d in inferred[1])):
            self._propagated = True  # a dim plain inference could not tell: sizes computed from shapes
            self._inferred = infer_shapes(self.proto) or self._inferred
            inferred = shape_of(self._inferred, name)
        if inferred is not None and (info is None or info[1] is None or _more_known(inferred[1], info[1])):
            self.table[name] = info = inferred
        if info is None or _incomplete(info[1]):  # what inference cannot tell, two runs tell
            measured = self._measure().get(name)
            if measured is not None and (info is None or info[1] is None or _more_known(measured, info[1])):
                self.table[name] = info = ((info[0] if info and info[0] else self._elem(name)), measured)
        if info is None or info[1] is None:
            stated = shape_of(self._stated, name)
            if stated is not None and (info is None or stated[1] is not None):
                dims = None if stated[1] is None else tuple(d if isinstance(d, str) else None for d in stated[1])
                self.table[name] = info = (stated[0] or (info[0] if info else 0), dims)
        return info

    def _measure(self) -> dict[str, tuple]:
        """Dims of every main-graph value inference left incomplete, read off two runs (once)."""
        if self._measured is None:
            from ..graph.measure import measured_dims

            unknown = [o for n in self.proto.graph.node for o in n.output
                       if o and (shape_of(self._inferred or {}, o) is None
                                 or _incomplete(shape_of(self._inferred or {}, o)[1]))]
            self._measured = measured_dims(self.proto, unknown) if unknown else {}
        return self._measured

    def _elem(self, name: str) -> int:
        stated = shape_of(self._stated, name)
        return stated[0] if stated else 0

    def declared(self, name: str) -> ShapeInfo | None:
        """What the model stated for ``name`` when it was loaded."""
        return shape_of(self._stated, name)

    def set(self, name: str, elem_type: int, dims) -> None:
        self.table[name] = (elem_type, tuple(dims) if dims is not None else None)


def _incomplete(dims) -> bool:
    return dims is None or any(d is None or (isinstance(d, str) and d.startswith("unk__")) for d in dims)


def _more_known(new, old) -> bool:
    if new is None or len(new) != len(old):
        return False
    # an inference placeholder (unk__N) says no more than None: a measured name ties it to an input
    score = lambda dims: sum(2 if isinstance(d, int) else 1 if isinstance(d, str) and not d.startswith("unk__")
                             else 0 for d in dims)
    return score(new) > score(old)


def parse_input_shape(spec: str) -> tuple[str, list[int]]:
    """``"x:1,3,224,224"`` -> ``("x", [1, 3, 224, 224])``; the name may itself hold colons."""
    name, sep, dims = spec.rpartition(":")
    if not sep or not name:
        raise InvalidArgumentError(f"--input-shape {spec!r}: expected NAME:D1,D2,... (e.g. x:1,3,224,224)")
    try:
        values = [int(d) for d in dims.split(",")] if dims else []
    except ValueError:
        raise InvalidArgumentError(f"--input-shape {spec!r}: dims must be integers") from None
    if any(v <= 0 for v in values):
        raise InvalidArgumentError(f"--input-shape {spec!r}: dims must be positive")
    return name, values


def apply_input_shapes(proto: ModelProto, shapes: dict[str, Sequence[int]]) -> None:
    """Fix graph input dims, so shape computations on them fold to constants."""
    inputs = {i.name: i for i in proto.graph.input}
    for name, dims in shapes.items():
        if name not in inputs:
            known = ", ".join(sorted(inputs)) or "none"
            raise InvalidArgumentError(f"--input-shape: the model has no input {name!r} (inputs: {known})")
        tt = inputs[name].type.tensor_type
        if tt.HasField("shape") and len(tt.shape.dim) != len(dims):
            raise InvalidArgumentError(
                f"--input-shape: input {name!r} has rank {len(tt.shape.dim)}, got {len(dims)} dims"
            )
        for i, declared in enumerate(tt.shape.dim if tt.HasField("shape") else []):
            if declared.HasField("dim_value") and declared.dim_value != dims[i]:
                raise InvalidArgumentError(
                    f"--input-shape: input {name!r} dim {i} is fixed at {declared.dim_value}, got {dims[i]}"
                )
        tt.ClearField("shape")
        tt.shape.SetInParent()  # a scalar's shape has no dims, but must still be there
        for d in dims:
            tt.shape.dim.add().dim_value = int(d)
