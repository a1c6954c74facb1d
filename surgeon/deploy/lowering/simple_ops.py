"""Lowerings of ops whose newer versions only added types, attributes with defaults, or an input
that an older version spells another way: ConstantOfShape, GlobalMaxPool, LpPool, Split, Pad, and
the reductions whose axes became an input at 18."""

from __future__ import annotations

import numpy as np
from onnx import helper

from .schemas import first_with_attribute, type_misfit
from .site import Site


def same_node(site: Site) -> str | None:
    """Ops whose later versions only allow more types: the node itself, if its types fit."""
    why = type_misfit(site.node, site.target, site.elem_of)
    if why:
        return why
    site.build.copy(site.node)
    return None


ANY = object()  # an attribute that matters only for types the older opsets lack (float8): dropped


def newer_attributes(**defaults):
    """Ops whose newer versions added attributes (that onnx's adapter keeps, writing a node the
    older version refuses): the node without them, when each is at its default or ANY."""
    def lower(site: Site) -> str | None:
        for name, default in defaults.items():
            value = site.attr(name)
            if value is not None and default is not ANY and value != default:
                return f"{name}={value!r} exists from opset {first_with_attribute(site.node.op_type, name)}"
        site.build.copy(site.node, drop=tuple(defaults))
        return None
    return lower


def constant_of_shape(site: Site) -> str | None:
    value = next((a.t for a in site.node.attribute if a.name == "value"), None)
    if value is not None:  # the output's type is the value's, whatever inference knew
        known = site.elem_of
        site.elem_of = lambda v: value.data_type if v == site.node.output[0] else known(v)
    return same_node(site)


def lp_pool(site: Site) -> str | None:
    """LpPool-18 added ceil_mode and dilations; at their defaults the node is LpPool-11's."""
    if site.attr("ceil_mode", 0):
        return "ceil_mode=1 exists from opset 18"
    if any(d != 1 for d in site.attr("dilations", [])):
        return "dilations exist from opset 18"
    site.build.copy(site.node, drop=("ceil_mode", "dilations"))
    return None


def split(site: Site) -> str | None:
    """Split-18's num_outputs (the last chunk smaller when the dim does not divide) as the split
    input of Split-13: constant when the dim is static, computed from the shape otherwise."""
    node, b = site.node, site.build
    parts = site.attr("num_outputs")
    if site.input(1) or parts is None:  # the split input given, or equal parts: Split-13 reads it alike
        b.copy(node, drop=("num_outputs",))
        return None
    axis, parts = site.attr("axis", 0), int(parts)
    dims = site.dims_of(node.input[0])
    if dims is not None and -len(dims) <= axis < len(dims) and isinstance(dims[axis], int):
        chunk = -(-dims[axis] // parts)
        sizes = b.const([chunk] * (parts - 1) + [dims[axis] - chunk * (parts - 1)])
    else:
        size = b.op("Gather", [b.op("Shape", [node.input[0]]), b.const([axis])], axis=0)
        chunk = b.op("Div", [b.op("Add", [size, b.const([parts - 1])]), b.const([parts])])
        head = b.op("Tile", [chunk, b.const([parts - 1])])
        sizes = b.op("Concat", [head, b.op("Sub", [size, b.op("Mul", [chunk, b.const([parts - 1])])])], axis=0)
    b.ops("Split", [node.input[0], sizes], list(node.output), axis=axis)
    return None


def pad(site: Site) -> str | None:
    """Pad-18's axes input as Pad-13's full-rank pads; Pad-19's wrap mode has no older form."""
    node, b = site.node, site.build
    if site.attr("mode", "constant") == "wrap":
        return "mode 'wrap' exists from opset 19"
    axes_value = site.input(3)
    data, pads = node.input[0], node.input[1]
    value = [site.input(2)] if site.input(2) else []
    if axes_value is None:
        b.copy(node, inputs=[data, pads, *value])
        return None
    rank = site.rank(data)
    if rank is None:
        return "its axes input needs the data's rank, which is unknown"
    axes = site.constant_of(axes_value)
    if axes is None:  # axes known at run time only: scatter the pads into zeros of the full length
        axes = b.op("Cast", [axes_value], to=7)
        positive = b.op("Mod", [b.op("Add", [axes, b.const(rank)]), b.const(rank)])
        where = b.op("Concat", [positive, b.op("Add", [positive, b.const(rank)])], axis=0)
        full = b.op("ScatterElements", [b.const(np.zeros(2 * rank)), where, pads], axis=0)
    else:
        axes = [int(a) % rank for a in np.asarray(axes).reshape(-1)]
        if len(set(axes)) != len(axes):
            return f"its axes {axes} repeat an axis"
        given = site.constant_of(pads)
        k = len(axes)
        pick = [axes.index(a) + (k if i else 0) if a in axes else 2 * k for i in range(2) for a in range(rank)]
        if given is not None:
            full = b.const(np.append(np.asarray(given, np.int64).reshape(-1), 0)[pick])
        else:
            full = b.op("Gather", [b.op("Concat", [pads, b.const([0])], axis=0), b.const(pick)], axis=0)
    b.copy(node, inputs=[data, full, *value])
    return None


def reduce(site: Site) -> str | None:
    """Reduce*-18's axes input (and noop_with_empty_axes, which exporters write even at its
    default) as Reduce*-13's axes attribute. onnx's adapter keeps noop_with_empty_axes, which
    13 does not know: the node it writes is invalid."""
    node, b = site.node, site.build
    axes_value = site.input(1)
    axes = site.constant_of(axes_value) if axes_value else np.zeros(0, np.int64)
    if axes is None:
        return "its axes are known at run time only; before opset 18 they are an attribute"
    axes = [int(a) for a in np.asarray(axes).reshape(-1)]
    if not axes and site.attr("noop_with_empty_axes", 0):
        b.op("Identity", [node.input[0]], out=node.output[0])
        return None
    b.copy(node, drop=("noop_with_empty_axes", "axes"), inputs=[node.input[0]])
    if axes:
        b.nodes[-1].attribute.extend([helper.make_attribute("axes", axes)])
    return None
