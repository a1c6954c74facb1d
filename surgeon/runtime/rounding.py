"""How far the original itself moves under rounding: a Monte Carlo rounding probe.

A rewrite computes the same function in other float operations, so it may differ from the
original wherever the original's own result depends on the last bits of its values: a
coordinate within rounding of a pixel boundary in nearest sampling (the neighbour pixel: a jump
of a whole pixel value), a large coordinate in bilinear sampling, a long reduction. Such an
element is not a wrong rewrite, and no fixed tolerance tells it from one.

So the original is run again with every float value it computes (its inputs, constants and
every node's output, top-level graph; bodies read the moved values too) moved by
``u * (|v| + m)``: ``u`` uniform within ``AMPLITUDE_ULPS`` units of the type's precision, drawn
afresh for each of ``TRIALS`` runs, ``m`` the mean magnitude of the value's elements (the
perturbations of Monte Carlo arithmetic). The ``|v|`` part is a rounding of ``v`` itself; the
``m`` part is what rounding inside the op that computed ``v`` leaves: an op sums terms of about
its output's size (a matrix product, the base grid of an affine grid), so an output near 0 is
off by ulps of its neighbours, not of itself. Whole numbers stay as they are, and are left out
of ``m``: they come from exact arithmetic (sizes, indices, 0/1 masks, -1e9 attention masks),
which rounding never moves, and moving them would make a Floor or a Cast to an integer jump
where the original never does. An element's *spread* is the most any run moved it. An element
of the rewrite outside the tolerance is *explained by rounding* when its difference is at most
``SLACK`` times its spread: the original is that sensitive there. A wrong rewrite differs where
the original is not sensitive (a spread of 0, or a few ulps), and still fails: a tanh GELU for
an erf one differs by 4.7e-4 where the spread is 1e-6.

Each moved value ``v`` is read as ``Add(v, delta_v)``; the moves of all values of one type come
in as one model input (split and reshaped in the graph: thousands of inputs would cost more to
feed than to run), drawn here from a seeded generator: the same inputs give the same spread
every time.
"""

from __future__ import annotations

import numpy as np
from onnx import GraphProto, helper, numpy_helper

from .plan import _subgraphs

AMPLITUDE_ULPS = 8
TRIALS = 16  # 8 pairs: each move, then its opposite
SLACK = 8
SUFFIX = "@rounded"


class Probe:
    """A graph whose float values are read moved: ``values`` are their unmoved arrays (the
    values to move; others are left alone). ``graph`` is changed in place; ``opset`` is its
    default-domain opset (Split takes its sizes as an input from 13)."""

    def __init__(self, graph: GraphProto, values: dict[str, np.ndarray], taken: set[str], opset: int):
        self._scales: dict[np.dtype, list[tuple[str, np.ndarray]]] = {}
        for name, value in values.items():
            value = np.asarray(value)
            if value.dtype.kind != "f" or value.dtype.itemsize < 2 or not name:
                continue
            scale = _scale(value)
            if scale is not None:  # else nothing to move: every element whole or not finite
                self._scales.setdefault(value.dtype, []).append((name, scale))
        self.inputs: dict[np.dtype, str] = {}  # one input of moves per type
        self.moved: dict[str, str] = {}  # value -> its moved name
        added = []
        for dtype, entries in self._scales.items():
            flat = fresh(f"rounding_moves_{dtype.name}", taken)
            self.inputs[dtype] = flat
            elem = helper.np_dtype_to_tensor_dtype(dtype)
            graph.input.append(helper.make_tensor_value_info(flat, elem, [sum(s.size for _, s in entries)]))
            parts = [fresh(f"{name}{SUFFIX}_flat", taken) for name, _ in entries]
            sizes = np.array([s.size for _, s in entries], np.int64)
            if opset >= 13:
                sizes_name = fresh(f"{flat}_sizes", taken)
                graph.initializer.append(numpy_helper.from_array(sizes, sizes_name))
                added.append(helper.make_node("Split", [flat, sizes_name], parts, axis=0))
            else:
                added.append(helper.make_node("Split", [flat], parts, axis=0, split=sizes.tolist()))
            for (name, scale), part in zip(entries, parts):
                shape, delta = fresh(f"{name}{SUFFIX}_shape", taken), fresh(f"{name}{SUFFIX}_delta", taken)
                self.moved[name] = fresh(name + SUFFIX, taken)
                graph.initializer.append(numpy_helper.from_array(np.array(scale.shape, np.int64), shape))
                added += [helper.make_node("Reshape", [part, shape], [delta]),
                          helper.make_node("Add", [name, delta], [self.moved[name]])]
        rewire(graph, self.moved)
        graph.node.extend(added)

    def feeds(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """One trial's moves."""
        return {self.inputs[dtype]: np.concatenate([(rng.uniform(-1.0, 1.0, size=s.shape) * s).astype(dtype).ravel()
                                                    for _, s in entries])
                for dtype, entries in self._scales.items()}


def _scale(value: np.ndarray) -> np.ndarray | None:
    """The largest move of each element: ``AMPLITUDE_ULPS`` ulps of ``|v| + m``, 0 where the
    element is whole or not finite."""
    with np.errstate(invalid="ignore"):
        movable = np.isfinite(value) & (value != np.round(value))
    if not movable.any():
        return None
    magnitude = np.abs(value.astype(np.float64))
    mean = float(magnitude[movable].mean())
    step = AMPLITUDE_ULPS * float(np.finfo(value.dtype).eps)
    return np.where(movable, step * (magnitude + mean), 0.0).astype(value.dtype)


def rewire(graph: GraphProto, renamed: dict[str, str]) -> None:
    """Make ``graph``'s nodes read ``renamed`` values under their new names, inside bodies too
    (where a body does not define the name itself)."""
    for node in graph.node:
        node.input[:] = [renamed.get(i, i) for i in node.input]
        for body in _subgraphs(node):
            own = ({i.name for i in body.input} | {t.name for t in body.initializer}
                   | {o for n in body.node for o in n.output})
            inner = {k: v for k, v in renamed.items() if k not in own}
            if inner:
                rewire(body, inner)


def fresh(name: str, taken: set[str]) -> str:
    new, k = name, 1
    while new in taken:
        k += 1
        new = f"{name}{k}"
    taken.add(new)
    return new


def all_names(graph: GraphProto) -> set[str]:
    names = {i.name for i in graph.input} | {t.name for t in graph.initializer} | {o.name for o in graph.output}
    for node in graph.node:
        names.update(node.output)
        names.add(node.name)
    return names


def spreads(runner, feeds: dict[str, np.ndarray], probe: Probe, outputs: dict[str, str],
            reference: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """Run ``runner`` (of ``probe``'s model) ``TRIALS`` times; for each ``outputs`` entry (key ->
    the value to read), the largest move of each element from ``reference[key]`` (0 where a run
    gave a non-finite value: that says nothing about rounding)."""
    found = {key: np.zeros(np.shape(reference[key]), np.float64) for key in outputs}
    wanted = list(dict.fromkeys(probe.moved.get(v, v) for v in outputs.values()))
    rng = np.random.default_rng([seed, 29])
    for trial in range(TRIALS):
        if trial % 2 == 0:
            moves = probe.feeds(rng)
        else:  # the opposite move: an element within rounding of a jump crosses it one way or the other
            moves = {name: np.negative(delta, out=np.empty_like(delta)) for name, delta in moves.items()}
        values = runner.run({**feeds, **moves}, wanted)
        for key, value in outputs.items():
            ref = np.asarray(reference[key])
            moved = np.asarray(values[probe.moved.get(value, value)])
            if moved.shape != ref.shape or ref.dtype.kind not in "biuf":
                continue
            with np.errstate(invalid="ignore", over="ignore"):
                step = np.abs(moved.astype(np.float64) - ref.astype(np.float64))
            step[~np.isfinite(step)] = 0.0
            np.maximum(found[key], step, out=found[key])
    return found
