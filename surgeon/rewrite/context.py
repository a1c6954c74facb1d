"""What a pattern may ask of the graph (``MatchContext``) and do to it (``RewriteContext``).

This is the whole surface patterns see; the engine's index and tables stay behind it.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from onnx import AttributeProto, NodeProto, helper, numpy_helper

from ..graph.attrs import attributes_from_keywords
from ..graph import GraphIndex, Node
from ..graph.dimsource import DimSources
from ..graph.extract import RegionEvaluator, Slice, backward_slice
from ..graph.fold import ConstantFolder
from .shapes import ShapeTable


class MatchContext:
    """Read-only questions about the graph being rewritten."""

    def __init__(self, index: GraphIndex, session: "Session"):
        self._index = index
        self._session = session

    @property
    def options(self) -> dict[str, Any]:
        """Options given to ``fuse`` (e.g. ``target``); patterns document the ones they read."""
        return self._session.options

    def opset(self, domain: str = "") -> int | None:
        return self._session.opsets.get(domain) or (self._session.opsets.get("ai.onnx") if domain == "" else None)

    def producer(self, value: str) -> Node | None:
        """The node computing ``value`` in this graph (None for inputs, constants, outer values)."""
        return self._index.find_producer(value) if value else None

    def consumers(self, value: str) -> list[Node]:
        """Nodes reading ``value`` (an If/Loop/Scan whose body reads it counts)."""
        return self._index.consumers_of(value)

    def is_graph_output(self, value: str) -> bool:
        return self._index.is_output(value)

    def is_graph_input(self, value: str) -> bool:
        return value in self._index.input_names

    def is_overridable(self, value: str) -> bool:
        """True for an initializer that is also a graph input: a default the caller may replace
        at run time, so neither a constant nor an initializer to ``constant``/``is_initializer``."""
        return bool(value) and self._index.is_overridable(value)

    def is_initializer(self, value: str) -> bool:
        """True when ``value`` is an initializer of this graph or an enclosing one; reads no data
        (so a walk can step over weights without loading them)."""
        return bool(value) and self._index.find_initializer(value) is not None

    def constant(self, value: str) -> np.ndarray | None:
        """The value when it is known before run time (folding shape computations), else None.

        Memory follows the graph, not the weights: a constant of more than
        ``surgeon.graph.fold.MAX_READ`` elements (4M) is never read and gives None too (use
        ``is_initializer`` to step over weights), and only shape-sized values are computed."""
        return self._session.folder.value(self._index, value)

    def shape(self, value: str) -> tuple | None:
        """Dims of ``value``: ints where static, str for named dims, None where unknown."""
        info = self._session.shapes.get(value)
        return info[1] if info else None

    def dtype(self, value: str) -> int | None:
        """ONNX element type (``onnx.TensorProto.FLOAT`` ...) of ``value``, when known."""
        info = self._session.shapes.get(value)
        return info[0] if info and info[0] else None

    def same_dim(self, a: str, axis_a: int, b: str, axis_b: int) -> bool:
        """Whether dim ``axis_a`` of ``a`` equals dim ``axis_b`` of ``b`` in every run the model
        completes, proved by the ops between them (a Reshape to another value's ``Shape``
        entries or to 0, shape-keeping ops, Transpose), never by declared names."""
        sources = DimSources(self.producer, self.constant, self.shape)
        return sources.same_dim(a, axis_a, b, axis_b)

    def backward_slice(self, outputs: Sequence[str], stop_at: Sequence[str] = ()) -> Slice:
        """The nodes computing ``outputs``, walking back to ``stop_at``, inputs and constants."""
        return backward_slice(self._index, list(outputs), stop_at)

    def evaluate(self, outputs: Sequence[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        """Run the region computing ``outputs`` from ``feeds`` (and constants) in onnxruntime."""
        return self._session.evaluator.run(self._index, list(outputs), feeds)

    def exclusive(self, nodes: Sequence[Node], outputs: Sequence[str]) -> list[Node]:
        """The part of ``nodes`` that nothing outside reads (other than through ``outputs``):
        what can be removed when those nodes are replaced. Shared helpers drop out."""
        keep = set(outputs)
        members = {id(n): n for n in nodes}
        changed = True
        while changed:
            changed = False
            for key, node in list(members.items()):
                for out in node.outputs:
                    if not out or out in keep:
                        continue
                    readers = self._index.consumers_of(out)
                    if self._index.is_output(out) or any(id(r) not in members for r in readers):
                        del members[key]
                        changed = True
                        break
        return [n for n in nodes if id(n) in members]


class RewriteContext(MatchContext):
    """Adds the means to write the replacement. Nothing reaches the graph until the rewrite
    returns: a rewrite that raises leaves the model as it was."""

    def __init__(self, index: GraphIndex, session: "Session", pattern_name: str, position: float):
        super().__init__(index, session)
        self._pattern = pattern_name
        self._position = position
        self.new_nodes: list[Node] = []
        self.new_initializers = []
        self.new_shapes: dict[str, tuple[int, tuple | None]] = {}
        self.domains: set[str] = set()

    def fresh_name(self, hint: str) -> str:
        """A value or node name not used anywhere in the model."""
        return self._session.names.fresh(hint)

    def add_node(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str] | int = 1,
                 domain: str = "", name: str | None = None, **attrs: Any) -> list[str]:
        """Add a node; attributes are typed by their values as in a replacement (``mode="bilinear"``,
        ``align_corners=0``, ``alpha=0.5``; an ``onnx.AttributeProto`` as it is).

        ``outputs`` is a list of names, or a count of fresh names to make. Returns the output
        names. The node gets a unique name and a ``metadata_props`` entry naming the pattern.
        """
        return self.add_node_with(op_type, inputs, outputs, domain, name,
                                  attributes_from_keywords(attrs, suffixed_alias=True))

    def add_node_with(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str] | int, domain: str,
                      name: str | None, attributes: Sequence[AttributeProto]) -> list[str]:
        """``add_node`` with ready-made attributes."""
        if isinstance(outputs, int):
            outputs = [self.fresh_name(f"{op_type}_out") for _ in range(outputs)]
        node_name = self._session.names.fresh(name or f"{self._pattern}/{op_type}")
        proto = NodeProto()  # helper.make_node's fields, set directly: one node per rewrite
        proto.op_type = op_type
        proto.input.extend(inputs)
        proto.output.extend(outputs)
        if node_name:
            proto.name = node_name
        if domain:
            proto.domain = domain
        proto.attribute.extend(attributes)
        entry = proto.metadata_props.add()
        entry.key, entry.value = "surgeon.pattern", self._pattern
        self.new_nodes.append(Node(proto, self._position))
        if domain and domain != "ai.onnx":
            self.domains.add(domain)
        return list(outputs)

    def add_constant(self, array: np.ndarray, hint: str = "const") -> str:
        """A new initializer holding ``array``; returns its name."""
        name = self.fresh_name(hint)
        array = np.asarray(array)
        self.new_initializers.append(numpy_helper.from_array(array, name))
        self.new_shapes[name] = (helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)
        return name

    def set_shape(self, value: str, elem_type: int, dims: Sequence | None) -> None:
        """Declare the type and dims of a value this rewrite creates (written as value_info)."""
        self.new_shapes[value] = (elem_type, tuple(dims) if dims is not None else None)

    def shape(self, value: str) -> tuple | None:
        info = self.new_shapes.get(value)
        return info[1] if info else super().shape(value)

    def dtype(self, value: str) -> int | None:
        info = self.new_shapes.get(value)
        return info[0] if info and info[0] else super().dtype(value)


class Session:
    """State shared by every context of one fuse run (not part of the public API)."""

    def __init__(self, loaded, shapes: ShapeTable, folder: ConstantFolder, names, options: dict):
        self.loaded = loaded
        self.shapes = shapes
        self.folder = folder
        self.names = names
        self.options = options
        self.opsets = {o.domain: o.version for o in loaded.proto.opset_import}
        self.evaluator = RegionEvaluator(loaded.proto, folder)
        self.domains_used: set[str] = set()
