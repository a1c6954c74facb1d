"""Step 1, cut: where does run-time data enter the grid? Walk the sampler's grid back to the cut.

The walk stops at constants, at theta-shaped run-time values (the candidates), at the outputs of
known grid ops (whose theta input is then the candidate), at ``Shape``/``Size`` of run-time
tensors (fed with concrete dims when probing) and at short run-time int tensors (a size given as
data: fed with concrete sizes). A grid qualifies when at most one candidate is left and no other
run-time value is read: everything else is constant or comes from shapes and sizes. A matrix
built from sizes and constants alone is part of the grid's computation, not a candidate; an
initializer that is also a graph input (IR >= 4) is run-time data.

Decides: the region (``surgeon.recognise.Region``: nodes from the cut, theta its variable, to the
grid, its output; the known grid ops in ``computed``) and its leaves, or a ``Refusal`` naming
what the grid reads besides one theta; with it, the candidates a retry may walk past.
"""

from __future__ import annotations

from dataclasses import dataclass

from onnx import TensorProto

from surgeon import BackWalk, MatchContext, Node, Refusal
from surgeon.recognise import Region, fixed_elements, reads_only_shapes
from surgeon_ops.theta_forms import MATRICES, matrix_dims

from .grid_ops import KnownGrid, read_known_grid

_FLOATS = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
_INTS = {TensorProto.INT64, TensorProto.INT32}
MAX_INT_LEAF = 5  # a size tensor holds at most [N, C, D, H, W]
MAX_REGION_NODES = 400  # affine grids take tens of nodes; past this it is a network, not a grid
MAX_SHAPE_WALK = 64  # how far to look before calling a Shape input a run-time tensor


@dataclass
class ThetaLayout:
    rows: int
    cols: int
    flat: bool  # [N, rows*cols] rather than [N, rows, cols]

    @property
    def k(self) -> int:
        return MATRICES[(self.rows, self.cols)][0]

    @property
    def homogeneous(self) -> bool:
        return MATRICES[(self.rows, self.cols)][1]


def theta_layout(dims) -> ThetaLayout | None:
    found = matrix_dims(dims)
    return ThetaLayout(found[0], found[1], len(dims) == 2) if found else None


def theta_form(ctx: MatchContext, value: str) -> tuple[int, int] | None:
    dtype = ctx.dtype(value)
    if dtype is not None and dtype not in _FLOATS:
        return None
    return matrix_dims(ctx.shape(value))


def _is_shape_op(node: Node) -> bool:
    return node.op_type in ("Shape", "Size") and node.domain in ("", "ai.onnx")


def _leaf_is_constant(ctx: MatchContext, value: str) -> bool:
    return ctx.is_initializer(value) or ctx.constant(value) is not None


def _derivable(ctx: MatchContext, value: str) -> bool:
    """Computed from constants, shapes and theta-shaped values only (so onnxruntime can compute
    it in the region)."""
    return reads_only_shapes(ctx, value, also=lambda c, v: theta_form(c, v) is not None, max_nodes=MAX_SHAPE_WALK)


def _shape_only(ctx: MatchContext, value: str) -> bool:
    """Reads no run-time data at all: a theta-shaped matrix built from sizes and constants is part
    of the grid's computation, not a theta."""
    return reads_only_shapes(ctx, value, max_nodes=MAX_SHAPE_WALK)


def _is_int_leaf(ctx: MatchContext, value: str) -> bool:
    """A short run-time int tensor computed from more than shapes: a size given as data."""
    dims = ctx.shape(value)
    if ctx.dtype(value) not in _INTS or dims is None or len(dims) > 1:
        return False
    if dims and not (isinstance(dims[0], int) and 1 <= dims[0] <= MAX_INT_LEAF):
        return False
    return ctx.constant(value) is None and not _derivable(ctx, value)


_WIDER = {(TensorProto.FLOAT16, TensorProto.FLOAT), (TensorProto.FLOAT16, TensorProto.DOUBLE),
          (TensorProto.FLOAT, TensorProto.DOUBLE), (TensorProto.BFLOAT16, TensorProto.FLOAT),
          (TensorProto.BFLOAT16, TensorProto.DOUBLE)}


def _unwiden(ctx: MatchContext, theta: str, walk: BackWalk) -> str:
    """A theta that only widens another (float32 cast to double before affine_grid): cut at the
    narrower one, which holds the same values, so the rewrite reads theta in its own type."""
    node = ctx.producer(theta)
    if node is None or not node.is_op("Cast") or ctx.constant(theta) is not None:
        return theta
    source = node.inputs[0]
    if (ctx.dtype(source), ctx.dtype(theta)) not in _WIDER or theta_form(ctx, source) is None:
        return theta
    walk.take(node)
    return source


def _unflatten(ctx: MatchContext, theta: str, walk: BackWalk) -> str:
    """A flat theta ([N, 9]) that only reshapes a matrix ([N, 3, 3]): cut at the matrix, so the
    rewrite reads it directly instead of reshaping it back."""
    node = ctx.producer(theta)
    if node is None or not (node.is_op("Reshape") or node.is_op("Flatten")) or len((ctx.shape(theta) or ())) != 2:
        return theta
    source = node.inputs[0]
    if len(ctx.shape(source) or ()) != 3 or theta_form(ctx, source) is None or ctx.constant(source) is not None:
        return theta
    walk.take(node)
    return source


def cut_grid(ctx: MatchContext, grid: str, image: str, pattern_name: str,
             past=frozenset()) -> tuple[Region | Refusal, list[str]]:
    """The grid's region and its theta, or why it is not one theta's grid, and the candidates a
    retry may walk through (several theta-shaped tensors, one computed from another). Values in ``past``
    are walked through, not taken as the cut (a transposed square matrix looks like theta too)."""
    candidates: dict[str, None] = {}
    runtime: list[str] = []
    shape_leaves: list[Node] = []
    known: list[KnownGrid] = []
    folded: list[Node] = []
    constants: dict[str, None] = {}
    int_leaves: dict[str, None] = {}
    walk = BackWalk([grid])  # the region's nodes are the ones it takes
    for v in walk:
        if v == image:  # the image's values (not its shape): a flow field, features
            runtime.append(v)
            break
        node = ctx.producer(v)
        if v != grid and _is_int_leaf(ctx, v):
            int_leaves[v] = None
            continue
        if node is None:
            if theta_form(ctx, v) is not None:
                candidates[v] = None  # constant ones are sorted out below
            elif _leaf_is_constant(ctx, v):
                constants[v] = None
            else:
                runtime.append(v)
            continue
        if node.is_op("Constant"):
            if v != grid and v not in past and theta_form(ctx, v) is not None and not _shape_only(ctx, v):
                candidates[v] = None  # a fixed theta; its node stays (the rewrite reads it)
            else:
                walk.take(node)
            continue
        grid_op = read_known_grid(ctx, node, pattern_name)
        if grid_op is not None:
            walk.take(node)
            known.append(grid_op)
            # a grid op's theta built from sizes and constants (an identity expanded to the
            # batch) is part of the grid's computation, as any such matrix is
            if grid_op.theta in past or (ctx.producer(grid_op.theta) is not None and _shape_only(ctx, grid_op.theta)):
                walk.into([grid_op.theta])
            else:
                candidates[grid_op.theta] = None
            walk.into(node.inputs[1:])
            continue
        if v != grid and v not in past and theta_form(ctx, v) is not None and not _shape_only(ctx, v):
            candidates[v] = None
            continue
        if node.subgraphs():
            return Refusal(f"the grid is computed with control flow ({node.label})"), []
        walk.take(node)
        if walk.taken > MAX_REGION_NODES:
            return Refusal(f"no theta-shaped cut within {MAX_REGION_NODES} nodes of the grid"), []
        if _is_shape_op(node):
            if ctx.constant(v) is not None:
                folded.append(node)  # the tensor's shape is static: a constant of the region
                constants[v] = None
                continue
            source = node.inputs[0]
            # the shape of a theta-shaped value reads its dims, not its values: no theta candidate
            if source == image or ctx.producer(source) is None or not _derivable(ctx, source) or \
                    theta_form(ctx, source) is not None:
                shape_leaves.append(node)
                continue
        walk.into(node.inputs)

    # A run-time theta is the cut. Without one, a constant theta (a buffer, an identity) is one
    # too: the rewrite reads it where it is. Without either, the grid itself is constant.
    live = [c for c in candidates if ctx.constant(c) is None]
    fixed = [c for c in candidates if c not in live]
    if runtime:
        named = ", ".join(repr(r) + (" (an initializer that is also a graph input: a default the caller may "
                                     "override)" if ctx.is_overridable(r) else "") for r in runtime[:3])
        return Refusal(f"the grid depends on run-time data other than one theta-shaped tensor ({named})"), []
    if len(live) > 1 or (not live and len(fixed) > 1):
        several = live or fixed
        named = ", ".join(repr(c) for c in several[:3])
        return (Refusal(f"the grid reads several theta-shaped tensors ({named})"),
                [c for c in several if ctx.producer(c) is not None])
    theta = live[0] if live else fixed[0] if fixed else None
    constants.update((c, None) for c in fixed if c != theta)
    if theta is not None:
        theta = _unflatten(ctx, _unwiden(ctx, theta, walk), walk)
    return Region(grid, theta, walk.nodes(), shape_leaves, folded=folded, constants=list(constants),
                  ints=list(int_leaves), constant_variable=not live, computed=known,
                  fixed=_last_row(ctx, theta) if live else {}), []


def _last_row(ctx: MatchContext, theta: str) -> dict:
    """A homogeneous theta's last row where every run of the model holds it (kornia's
    ``[M; 0 0 1]`` through a normalisation and an inverse: exactly (0, 0, 1), proved by
    ``surgeon.recognise.exact``): flat position -> value. Its grid divides by that row."""
    layout = theta_layout(ctx.shape(theta))
    if layout is None or not layout.homogeneous or ctx.producer(theta) is None:
        return {}
    found = fixed_elements(ctx, theta, 1 if layout.flat else 2)
    return {pos: value for pos, value in found.items() if pos // layout.cols >= layout.k}
