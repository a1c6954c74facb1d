"""The dims a probe chooses: every dynamic dim of the tensors that feed the region (the image,
theta, the inputs of fed ``Shape`` nodes) becomes a class, numbered in order of appearance; dims
with the same symbol share a class, and the image's batch and theta's batch are one class (the
sampler needs them equal). Unknown dims get a class of their own."""

from __future__ import annotations

from dataclasses import dataclass

from .trace import theta_layout


@dataclass
class Owner:
    value: str
    dims: tuple  # per axis: an int (static) or ("class", index)


class Symbols:
    def __init__(self, dims_of: dict[str, tuple], image: str, theta: str | None):
        """``dims_of``: value -> declared dims (int, str or None per axis), image and theta first."""
        keys: dict[str, list] = {}
        for value, dims in dims_of.items():
            keys[value] = [d if isinstance(d, int) else ("sym", d) if isinstance(d, str) and d else ("anon", value, i)
                           for i, d in enumerate(dims)]
        alias: dict = {}
        if (theta is not None and keys[image] and keys[theta] and not isinstance(keys[image][0], int)
                and not isinstance(keys[theta][0], int)):
            alias[keys[theta][0]] = keys[image][0]
        self.classes: list = []  # representative key per class
        index: dict = {}
        self.owners: dict[str, Owner] = {}
        for value, ks in keys.items():
            dims = []
            for k in ks:
                if isinstance(k, int):
                    dims.append(k)
                    continue
                k = alias.get(k, k)
                if k not in index:
                    index[k] = len(self.classes)
                    self.classes.append(k)
                dims.append(("class", index[k]))
            self.owners[value] = Owner(value, tuple(dims))
        first = self.owners[image].dims[0] if self.owners[image].dims else 0
        self.batch_class = first[1] if isinstance(first, tuple) else None

    def concrete(self, value: str, assign: dict[int, int]) -> list[int]:
        return [d if isinstance(d, int) else assign[d[1]] for d in self.owners[value].dims]

    def pattern(self, value: str) -> tuple:
        """The owner's dims with classes by index: comparable across chains of one structure."""
        return self.owners[value].dims

    def name(self, cls: int) -> str:
        key = self.classes[cls]
        return key[1] if key[0] == "sym" else f"{key[1]}[{key[2]}]"

    def sources(self, cls: int) -> list[tuple[str, int]]:
        """(value, axis) pairs whose dim is this class; the image's first."""
        return [(o.value, axis) for o in self.owners.values() for axis, d in enumerate(o.dims) if d == ("class", cls)]

    def dim_name(self, cls: int):
        """How a value_info names a dim that follows this class (None when it has no name)."""
        key = self.classes[cls]
        return key[1] if key[0] == "sym" else None


def symbols_for(ctx, trace, sampler, k: int | None = None, constant: bool = False) -> "Symbols | str":
    """The dim classes of a traced region, or why its tensors cannot be probed. For a constant
    grid (theta fitted to it), only the image's dims: ``k`` says its rank."""
    image_dims = ctx.shape(sampler.x)
    if constant:
        dims = tuple(image_dims) if image_dims is not None and len(image_dims) == k + 2 else (None,) * (k + 2)
        return Symbols({sampler.x: dims}, sampler.x, None)
    theta_dims = ctx.shape(trace.theta)
    if theta_layout(theta_dims) is None:
        # A grid op's theta input is theta by meaning, even when its shape is not known.
        known_theta = any(op.theta == trace.theta for op in trace.known)
        if theta_dims is not None or not known_theta or image_dims is None or len(image_dims) not in (4, 5):
            return f"theta {trace.theta!r} has shape {theta_dims}, not [N, 2, 3] / [N, 3, 4]"
        k = len(image_dims) - 2
        theta_dims = (None, k, k + 1)
    k = theta_layout(theta_dims).k
    if image_dims is None:
        image_dims = (None,) * (k + 2)
    if len(image_dims) != k + 2:
        return f"the image has rank {len(image_dims)} but theta {list(theta_dims)} makes a {k}-D grid"
    dims_of = {sampler.x: tuple(image_dims), trace.theta: tuple(theta_dims)}
    for leaf in trace.shape_leaves:
        source = leaf.inputs[0]
        if source not in dims_of:
            dims = ctx.shape(source)
            if dims is None:
                return f"cannot probe: the rank of {source!r} (read by {leaf.label}) is unknown"
            dims_of[source] = tuple(dims)
    return Symbols(dims_of, sampler.x, trace.theta)
