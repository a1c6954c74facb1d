"""Step 5, write: the replacement. theta made ready for the op (rows sliced from a homogeneous
matrix, mapped from only the elements the original reads, moved to the original's size-1
coordinate, cast to the image's type, its batch broadcast explicitly), the ``size`` tensor when
the output size is dynamic, and the contract's nodes with their shapes declared."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from surgeon import RewriteContext
from surgeon.recognise import AffineMap, DimScaling, Fixed, Piece, SizeWriter
from surgeon_ops.onnx_grid import onnx_mode

from .convention import compensate
from .cut import ThetaLayout
from .grid_ops import CUSTOM_DOMAIN


@dataclass
class Plan:
    form: str  # "fused" or "grid"
    image: str
    theta: str | None  # None: a fitted theta is written (theta_value)
    grid: str
    output: str | None  # the sampler's output (fused, or when the sampler is rewritten too)
    k: int
    layout: ThetaLayout | None  # how theta holds its matrices (flat rows, homogeneous)
    align_corners: int
    mode: str
    padding_mode: str
    cast_to: int | None  # element type theta must be cast to
    elem_type: int  # of the image / grid
    broadcast: Piece | None  # batch piece theta is expanded to, or None
    batch: Piece  # size pieces
    channels: Piece
    spatial: list  # per spatial dim, a Piece
    out_dims: list  # value_info dims of the output: N, C, *spatial
    rewrite_sampler: bool = False  # write a standard sampler too (target affine-grid on ATen)
    sampler_align_corners: int = 0  # the sampler's own flag (may differ from the grid's)
    theta_value: np.ndarray | None = None  # theta fitted to a constant grid: written as a constant
    size_value: str | None = None  # the model's own size tensor, when the dims are computed from inputs
    theta_map: AffineMap | None = None  # applied to theta first: the grid was affine_grid(map(theta))
    theta_scaling: DimScaling | None = None  # theta_value's or theta_map's coefficients follow these dims
    scaling_pieces: list = field(default_factory=list)  # where each of theta_scaling's dims is read
    size_one: dict = field(default_factory=dict)  # output dim -> the original's size-1 coordinate (not 0)
    opset: int = 20
    warnings: list[str] = field(default_factory=list)
    atol: float | None = None  # the original computes in half precision: equal only to this
    read_columns: list[int] | None = None  # a mapped theta: the flat elements the original reads (None: all)
    profile: str | None = None  # "tensorrt": op types and plugin lookup keys of that profile
    native_type: int | None = None  # a type the contract lacks: ONNX's own ops, the grid computed in this type
    undefined_at: dict = field(default_factory=dict)  # input dims where the original is undefined (Match's)
    runs_at: dict = field(default_factory=dict)  # input dims and the one size the original runs at (Match's)
    sampled_grid_type: int | None = None  # ONNX's own ops: the type the original's sampler reads its grid in

    @property
    def theta_type(self) -> int:
        """The element type theta is written in: the grid's for ONNX's own AffineGrid, else the image's."""
        return self.native_type or self.elem_type

    def reads(self) -> list[str]:
        """Values of the model the rewrite reads besides the image and theta."""
        pieces = [self.batch, self.channels, *self.spatial, *self.scaling_pieces]
        return [p.value for p in pieces if not isinstance(p, Fixed)] + ([self.size_value] if self.size_value else [])

    @property
    def static_size(self) -> list[int] | None:
        if all(isinstance(p, Fixed) for p in self.spatial):
            return [p.value for p in self.spatial]
        return None


class Writer(SizeWriter):
    def __init__(self, ctx: RewriteContext, plan: Plan):
        super().__init__(ctx)
        self.plan = plan

    def theta(self) -> str:
        p, rows = self.plan, self.plan.k
        if p.theta_value is not None:
            elem = p.theta_type
            t = self.fitted(p.theta_value, elem, p.theta_scaling, p.scaling_pieces, "theta_fitted")
            if p.size_one:
                t = compensate(self, t, elem, p.theta_value.shape[0])
            return self._expand(t, elem) if p.broadcast is not None else t
        t, layout = p.theta, p.layout
        elem = self.ctx.dtype(t) or p.elem_type
        batch = (self.ctx.shape(t) or (None,))[0]
        if p.theta_map is not None:
            t = self._mapped(t, elem, batch)
        elif layout.flat:
            t = self.node("Reshape", [t, self.const([-1, layout.rows, layout.cols], "theta_matrix")],
                           "theta_matrix", elem, [batch, layout.rows, layout.cols])
        if layout.homogeneous and p.theta_map is None:
            t = self.node("Slice", [t, self.const([0], "rows_start"), self.const([rows], "rows_end"),
                                     self.const([1], "rows_axis")], "theta_rows", elem, [batch, rows, rows + 1])
        if p.size_one:
            t = compensate(self, t, elem, batch)
        if p.cast_to is not None:
            elem = p.cast_to
            t = self.node("Cast", [t], "theta_cast", elem, [batch, rows, rows + 1], to=elem)
        if p.broadcast is not None:
            t = self._expand(t, elem)
        return t

    def _expand(self, theta: str, elem: int) -> str:
        rows = self.plan.k
        shape = self.pieces([self.plan.broadcast, Fixed(rows), Fixed(rows + 1)], "theta_batch_shape")
        return self.node("Expand", [theta, shape], "theta_expanded", elem, [self.plan.out_dims[0], rows, rows + 1])

    def _mapped(self, theta: str, elem: int, batch) -> str:
        """theta' = Reshape(Reshape(theta, [-1, p]) @ W + b, [-1, k, k+1])."""
        p, layout = self.plan, self.plan.layout
        flat = self.node("Reshape", [theta, self.const([-1, layout.rows * layout.cols], "theta_flat")],
                          "theta_flat", elem, [batch, layout.rows * layout.cols])
        out = self.affine_map(flat, elem, batch, p.theta_map, p.read_columns, p.theta_scaling, p.scaling_pieces,
                              "theta_mapped")
        return self.node("Reshape", [out, self.const([-1, p.k, p.k + 1], "theta_matrix")], "theta_matrix",
                          elem, [batch, p.k, p.k + 1])

    def size(self) -> list[str]:
        """The optional size input: [] when the output size is static."""
        if self.plan.static_size is not None:
            return []
        p = self.plan
        if p.size_value is not None:
            return [p.size_value]
        return [self.pieces([p.batch, p.channels, *p.spatial], "size")]

    def size_attr(self) -> dict:
        static = self.plan.static_size
        return {"output_size": static} if static is not None else {}

    def profiled(self, op: str) -> tuple[str, dict]:
        """The op type to write for a contract op, and the attributes the profile adds."""
        if self.plan.profile is None:
            return op, {}
        from surgeon_ops.tensorrt import profile

        return profile.op_type(op), profile.node_attributes()

    def fused(self) -> None:
        p = self.plan
        if p.native_type is not None:
            grid = self.ctx.fresh_name("grid")
            self.native_grid(grid)
            self.sampler(grid)
            return
        theta = self.theta()
        op, extra = self.profiled("FusedGridSample")
        self.ctx.add_node(op, [p.image, theta, *self.size()], [p.output], domain=CUSTOM_DOMAIN,
                          align_corners=p.align_corners, mode=p.mode, padding_mode=p.padding_mode,
                          **self.size_attr(), **extra)
        self.ctx.set_shape(p.output, p.elem_type, p.out_dims)

    def native_grid(self, grid: str) -> None:
        """ONNX's own AffineGrid (opset 20), for a type the contract's ops do not take: its size
        input holds N and C too."""
        p = self.plan
        size = [p.size_value] if p.size_value is not None else [self.pieces([p.batch, p.channels, *p.spatial], "size")]
        n, _, *spatial = p.out_dims
        sampled = p.sampled_grid_type or p.elem_type
        computed = grid if p.native_type == sampled else self.ctx.fresh_name("grid_computed")
        self.ctx.add_node("AffineGrid", [self.theta(), *size], [computed], align_corners=p.align_corners)
        self.ctx.set_shape(computed, p.native_type, [n, *spatial, p.k])
        if computed != grid:  # computed in the original's precision, sampled in the type its sampler reads
            self.ctx.add_node("Cast", [computed], [grid], to=sampled)
            self.ctx.set_shape(grid, sampled, [n, *spatial, p.k])

    def grid(self) -> None:
        p = self.plan
        if p.native_type is not None:
            self.native_grid(p.grid)
            if p.rewrite_sampler:
                self.sampler()
            return
        theta = self.theta()
        op, extra = self.profiled("AffineGrid")
        self.ctx.add_node(op, [theta, *self.size()], [p.grid], domain=CUSTOM_DOMAIN,
                          align_corners=p.align_corners, **self.size_attr(), **extra)
        n, _, *spatial = p.out_dims
        self.ctx.set_shape(p.grid, p.elem_type, [n, *spatial, p.k])
        if p.rewrite_sampler:
            self.sampler()

    def sampler(self, grid: str | None = None) -> None:
        """A standard grid sampler reading the grid (``grid``, else the original's; a contrib one
        below opset 16)."""
        p = self.plan
        grid = grid or p.grid
        if p.opset >= 16:
            self.ctx.add_node("GridSample", [p.image, grid], [p.output], align_corners=p.sampler_align_corners,
                              mode=onnx_mode(p.mode, p.opset), padding_mode=p.padding_mode)
        else:
            self.ctx.add_node("GridSample", [p.image, grid], [p.output], domain="com.microsoft",
                              align_corners=p.sampler_align_corners, mode=p.mode, padding_mode=p.padding_mode)
        self.ctx.set_shape(p.output, p.elem_type, p.out_dims)
