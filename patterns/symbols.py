"""The dims a probe chooses. Every dynamic dim of a tensor that feeds the region (the image,
theta, the inputs of fed ``Shape`` nodes) and every element of a run-time int tensor it reads
(a size given as data) is a class of its own, numbered in order of appearance. Nothing is
merged by name: two dims declared with the same symbol get different probe values, so which
output dim follows which input dim is proved by evaluation, never read from a name. Declared
names are only carried over to the dims the rewrite declares."""

from __future__ import annotations

from dataclasses import dataclass

from .trace import theta_layout


@dataclass(frozen=True)
class Dim:
    value: str
    axis: int
    kind: str  # "shape": an axis of the value's shape; "elem": an element of an int tensor
    declared: str | None = None  # the symbol the model declares for it (a name, not a fact)


class Symbols:
    def __init__(self, dims_of: dict[str, tuple], image: str, theta: str | None, ints: dict[str, int] | None = None):
        """``dims_of``: value -> declared dims (int, str or None per axis), image first;
        ``ints``: run-time int tensors read as data -> their length."""
        self.classes: list[Dim] = []
        self.owners: dict[str, tuple] = {}  # value -> per axis an int or ("class", index)
        self.elements: dict[str, tuple] = {}  # int tensor -> per element ("class", index)
        for value, dims in dims_of.items():
            self.owners[value] = tuple(d if isinstance(d, int) else self._new(value, i, "shape", d)
                                       for i, d in enumerate(dims))
        for value, length in (ints or {}).items():
            self.elements[value] = tuple(self._new(value, i, "elem", None) for i in range(length))
        self.image, self.theta = image, theta
        self.batch_class = _class_of(self.owners.get(image, ()), 0)
        self.theta_batch_class = _class_of(self.owners.get(theta, ()), 0) if theta else None

    def _new(self, value: str, axis: int, kind: str, declared) -> tuple:
        self.classes.append(Dim(value, axis, kind, declared if isinstance(declared, str) and declared else None))
        return ("class", len(self.classes) - 1)

    def concrete(self, value: str, assign: dict[int, int]) -> list[int]:
        table = self.owners if value in self.owners else self.elements
        return [d if isinstance(d, int) else assign[d[1]] for d in table[value]]

    def pattern(self, value: str) -> tuple:
        """The owner's dims with classes by index: comparable across chains of one structure."""
        return self.owners.get(value) or self.elements.get(value) or ()

    def name(self, cls: int, value: int | None = None) -> str:
        """How a class is named in messages: its declared symbol and where it is ("N (x[0])"),
        or with a value ("N=2 (x[0])")."""
        dim = self.classes[cls]
        where = f"{dim.value}[{dim.axis}]" if dim.kind == "shape" else f"{dim.value} element {dim.axis}"
        shown = "" if value is None else f"={value}"
        return f"{dim.declared}{shown} ({where})" if dim.declared else f"{where}{shown}"

    def dim_name(self, cls: int) -> str | None:
        """The name a value_info gives a dim that follows this class: the declared symbol it
        copies, or for an element of a size tensor, one made from the tensor's name."""
        dim = self.classes[cls]
        return dim.declared if dim.kind == "shape" else f"{dim.value}_{dim.axis}"


def _class_of(dims: tuple, axis: int):
    return dims[axis][1] if len(dims) > axis and isinstance(dims[axis], tuple) else None


def symbols_for(ctx, trace, sampler, k: int | None = None) -> "Symbols | str":
    """The dim classes of a traced region, or why its tensors cannot be probed. Without a theta
    (a grid fitted from its values) ``k`` gives the grid's rank."""
    image_dims = ctx.shape(sampler.x)
    theta_dims = None
    if trace.theta is not None:
        theta_dims = ctx.shape(trace.theta)
        if theta_layout(theta_dims) is None:
            # A grid op's theta input is theta by meaning, even when its shape is not known.
            known_theta = any(op.theta == trace.theta for op in trace.known)
            if theta_dims is not None or not known_theta or image_dims is None or len(image_dims) not in (4, 5):
                return f"theta {trace.theta!r} has shape {theta_dims}, not [N, 2, 3] / [N, 3, 4]"
            kk = len(image_dims) - 2
            theta_dims = (None, kk, kk + 1)
        k = theta_layout(theta_dims).k
    if image_dims is None:
        image_dims = (None,) * (k + 2)
    if len(image_dims) != k + 2:
        return f"the image has rank {len(image_dims)} but the grid is {k}-D"
    dims_of = {sampler.x: tuple(image_dims)}
    if trace.theta is not None:
        dims_of[trace.theta] = tuple(theta_dims)
    for leaf in trace.shape_leaves:
        source = leaf.inputs[0]
        if source not in dims_of:
            dims = ctx.shape(source)
            if dims is None:
                return f"cannot probe: the rank of {source!r} (read by {leaf.label}) is unknown"
            dims_of[source] = tuple(dims)
    ints = {}
    for value in trace.int_leaves:
        dims = ctx.shape(value)
        ints[value] = 1 if not dims else int(dims[0])
    return Symbols(dims_of, sampler.x, trace.theta, ints)
