"""Where does run-time data enter an output? Walk it back to the cut.

The walk stops at constants, at run-time values the caller's ``is_candidate`` accepts (by
shape: the candidates), at the outputs of nodes the caller computes itself (``known(node)``:
their variable input is then the candidate), at ``Shape``/``Size`` of run-time tensors (fed
with concrete dims when probing) and at short run-time int tensors (a size given as data: fed
with concrete sizes). An output qualifies when at most one run-time candidate is left and no
other run-time value is read. A candidate built from sizes and constants alone is part of the
output's computation, not a candidate; an initializer that is also a graph input (IR >= 4) is
run-time data. A candidate that only widens another (float32 cast to double) or only flattens
one of higher rank is cut at that one, which holds the same values.

Decides: the ``Region`` (nodes from the cut to the output, the candidate its variable, the
known nodes in ``computed``) or a ``Refusal`` naming what the output reads besides one
candidate; with it, the candidates a retry may walk past (``strategies.Cuts``).
"""

from __future__ import annotations

from dataclasses import dataclass

from onnx import TensorProto

from ..graph.walk import BackWalk
from ..rewrite.match import Refusal
from .region import Region, reads_only_shapes

_INTS = {TensorProto.INT64, TensorProto.INT32}
MAX_INT_LEAF = 5  # a size tensor holds at most [N, C, D, H, W]
MAX_REGION_NODES = 400  # past this it is a network, not the computation of one value
MAX_SHAPE_WALK = 64  # how far to look before calling a Shape input a run-time tensor
_WIDER = {(TensorProto.FLOAT16, TensorProto.FLOAT), (TensorProto.FLOAT16, TensorProto.DOUBLE),
          (TensorProto.FLOAT, TensorProto.DOUBLE), (TensorProto.BFLOAT16, TensorProto.FLOAT),
          (TensorProto.BFLOAT16, TensorProto.DOUBLE)}


@dataclass
class Words:
    """How refusals name the output and its candidates."""

    output: str = "output"
    candidate: str = "variable-shaped"


def _is_shape_op(node) -> bool:
    return node.op_type in ("Shape", "Size") and node.domain in ("", "ai.onnx")


class _Walk:
    def __init__(self, ctx, is_candidate):
        self.ctx, self.is_candidate = ctx, is_candidate

    def derivable(self, value: str) -> bool:
        """Computed from constants, shapes and candidates only (computable inside the region)."""
        return reads_only_shapes(self.ctx, value, also=self.is_candidate, max_nodes=MAX_REGION_NODES)

    def shape_only(self, value: str, max_nodes: int = MAX_SHAPE_WALK) -> bool:
        """Reads no run-time data at all: part of the output's computation, not a candidate."""
        return reads_only_shapes(self.ctx, value, max_nodes=max_nodes)

    def int_leaf(self, value: str) -> bool:
        """A short run-time int tensor computed from more than shapes: a size given as data."""
        dims = self.ctx.shape(value)
        if self.ctx.dtype(value) not in _INTS or dims is None or len(dims) > 1:
            return False
        if dims and not (isinstance(dims[0], int) and 1 <= dims[0] <= MAX_INT_LEAF):
            return False
        return self.ctx.constant(value) is None and not self.derivable(value)

    def candidate(self, value: str, past) -> bool:
        return value not in past and self.is_candidate(self.ctx, value) and not self.shape_only(value)

    def narrowed(self, value: str, walk: BackWalk) -> str:
        """The candidate another only widens or flattens, taking the node that does it."""
        ctx = self.ctx
        node = ctx.producer(value)
        if node is None or ctx.constant(value) is not None:
            return value
        source = node.inputs[0] if node.inputs else None
        if node.is_op("Cast"):
            found = (ctx.dtype(source), ctx.dtype(value)) in _WIDER and self.is_candidate(ctx, source)
        elif node.is_op("Reshape") or node.is_op("Flatten"):
            found = len(ctx.shape(source) or ()) > len(ctx.shape(value) or ()) > 0 and \
                self.is_candidate(ctx, source) and ctx.constant(source) is None
        else:
            found = False
        if not found:
            return value
        walk.take(node)
        return self.narrowed(source, walk)


def cut_back(ctx, output: str, anchor: str, is_candidate, known=lambda node: None, past=frozenset(),
             words: Words = Words()) -> tuple[Region | Refusal, list[str]]:
    """The output's region and its variable, or why it reads more than one candidate, and the
    candidates a retry may walk through. ``known(node)``: (the caller's description, its variable
    input) for nodes it computes itself, else None. Values in ``past`` are walked through, not
    taken as the cut. ``anchor``'s values (not its shape) are never part of a region."""
    w = _Walk(ctx, is_candidate)
    candidates: dict[str, None] = {}
    runtime, shape_leaves, computed, folded = [], [], [], []
    constants: dict[str, None] = {}
    int_leaves: dict[str, None] = {}
    walk = BackWalk([output])  # the region's nodes are the ones it takes
    for v in walk:
        if v == anchor:  # the anchor's values: a flow field, features
            runtime.append(v)
            break
        node = ctx.producer(v)
        if v != output and w.int_leaf(v):
            int_leaves[v] = None
            continue
        if node is None:
            if is_candidate(ctx, v):
                candidates[v] = None  # constant ones are sorted out below
            elif ctx.is_initializer(v) or ctx.constant(v) is not None:
                constants[v] = None
            else:
                runtime.append(v)
            continue
        if node.is_op("Constant"):
            if v != output and w.candidate(v, past):
                candidates[v] = None  # a fixed candidate; its node stays (the rewrite reads it)
            else:
                walk.take(node)
            continue
        found = known(node)
        if found is not None:
            op, variable = found
            walk.take(node)
            computed.append(op)
            # a variable built from sizes and constants (an identity expanded to the batch) is
            # part of the output's computation, as any such value is
            if variable in past or (ctx.producer(variable) is not None and w.shape_only(variable)):
                walk.into([variable])
            else:
                candidates[variable] = None
            walk.into([i for i in node.inputs if i != variable])
            continue
        if v != output and w.candidate(v, past):
            candidates[v] = None
            continue
        if node.subgraphs():
            return Refusal(f"the {words.output} is computed with control flow ({node.label})"), []
        walk.take(node)
        if walk.taken > MAX_REGION_NODES:
            return Refusal(f"no {words.candidate} cut within {MAX_REGION_NODES} nodes of the {words.output}"), []
        if _is_shape_op(node):
            if ctx.constant(v) is not None:
                folded.append(node)  # the tensor's shape is static: a constant of the region
                constants[v] = None
                continue
            source = node.inputs[0]
            # the shape of a candidate reads its dims, not its values: no candidate. A value computed
            # from shapes alone is walked into however far it is (after onnxruntime's ALL level a
            # length is a Shape of a ScatterND ~100 nodes from the anchor's Shape): no candidate
            # lies on that way, and its dims are the ones the region computes
            if source == anchor or ctx.producer(source) is None or is_candidate(ctx, source) or \
                    not (w.derivable(source) or w.shape_only(source, MAX_REGION_NODES)):
                shape_leaves.append(node)
                continue
        walk.into(node.inputs)

    # A run-time candidate is the cut. Without one, a constant one (a buffer, an identity) is,
    # read where it is. Without either, the output itself is constant.
    live = [c for c in candidates if ctx.constant(c) is None]
    fixed = [c for c in candidates if c not in live]
    if runtime:
        named = ", ".join(repr(r) + (" (an initializer that is also a graph input: a default the caller may "
                                     "override)" if ctx.is_overridable(r) else "") for r in runtime[:3])
        return Refusal(f"the {words.output} depends on run-time data other than one {words.candidate} tensor "
                       f"({named})"), []
    if len(live) > 1 or (not live and len(fixed) > 1):
        several = live or fixed
        named = ", ".join(repr(c) for c in several[:3])
        return (Refusal(f"the {words.output} reads several {words.candidate} tensors ({named})"),
                [c for c in several if ctx.producer(c) is not None])
    variable = live[0] if live else fixed[0] if fixed else None
    constants.update((c, None) for c in fixed if c != variable)
    if variable is not None:
        variable = w.narrowed(variable, walk)
    return Region(output, variable, walk.nodes(), shape_leaves, folded=folded, constants=list(constants),
                  ints=list(int_leaves), constant_variable=not live, computed=computed), []
