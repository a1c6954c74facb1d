"""How far the original itself moves under rounding: a Monte Carlo rounding probe.

A rewrite computes the same function in other float operations, so it may differ from the
original wherever the original's own result depends on the last bits of its values: a
coordinate within rounding of a pixel boundary in nearest sampling (the neighbour pixel: a jump
of a whole pixel value), a large coordinate in bilinear sampling, a long reduction. Such an
element is not a wrong rewrite, and no fixed tolerance tells it from one.

So the original is run again with every float value it computes (its inputs, constants and
every node's output, top-level graph; bodies read the moved values too) moved by
``u * (|v| + m)``: ``u`` uniform within ``AMPLITUDE_ULPS`` units of the type's precision, drawn
afresh for each pair of ``TRIALS`` runs (the second moves the other way), ``m`` the mean magnitude of the value's elements (the
perturbations of Monte Carlo arithmetic). The ``|v|`` part is a rounding of ``v`` itself; the
``m`` part is what rounding inside the op that computed ``v`` leaves: an op sums terms of about
its output's size (a matrix product, the base grid of an affine grid), so an output near 0 is
off by ulps of its neighbours, not of itself. Whole numbers stay as they are, and are left out
of ``m``: they come from exact arithmetic (sizes, indices, 0/1 masks, -1e9 attention masks),
which rounding never moves, and moving them would make a Floor or a Cast to an integer jump
where the original never does. An element's *spread* is the most any run moved it. The runs
come in pairs of opposite moves: drift is linear in the move, so a pair moves an element evenly
(one way, then back the other way); a pair that moves it unevenly, by 1% of the value's
magnitude or more, made it *jump* (a tie: one way crosses a pixel boundary, the other does
not). An element of the rewrite outside the tolerance
is *explained by rounding* where the original drifts when its difference is at most ``SLACK``
times its spread, and where the original jumps when the rewrite's value is one the original
itself took in some run, or differs by no more than the original jumped. A wrong rewrite
differs where the original does not move, and still fails: a tanh GELU for an erf one differs
by 4.7e-4 where the spread is 1e-6; a nearest sampler reading the transposed image differs at
every element, and the few that happen to lie at ties do not carry the rest.

Each moved value ``v`` is read as ``Add(v, delta_v)``; the moves of all values of one type come
in as one model input (split and reshaped in the graph: thousands of inputs would cost more to
feed than to run), drawn here from a seeded generator: the same inputs give the same spread
every time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import GraphProto, helper, numpy_helper

from .plan import _subgraphs

AMPLITUDE_ULPS = 8
JUMP = 1e-2  # a move of 1% of a value's largest magnitude is no drift of a few ulps
TRIALS = 16  # 8 pairs: each move, then its opposite
ROUNDS = 4  # rounds of TRIALS at most, while a jump stays unmatched
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


@dataclass
class Sensitivity:
    """What the probe saw at each element of one value: ``spread``, the largest move; ``jumped``,
    whether a pair of opposite moves moved it unevenly and by at least ``jump`` (1% of the
    value's largest magnitude): a jump, not a drift (drift is linear in the move, so opposite
    moves give opposite drifts; at a kink, as bilinear sampling has at every pixel, they are
    uneven but as small as drift); ``calm``, the largest move of the pairs that did not jump;
    ``nearest``, how close the closest run came to the rewrite's value."""

    spread: np.ndarray
    jumped: np.ndarray
    calm: np.ndarray
    nearest: np.ndarray
    jump: float

    @classmethod
    def empty(cls, reference: np.ndarray) -> "Sensitivity":
        shape = reference.shape
        finite = np.abs(reference[np.isfinite(reference)])
        jump = JUMP * float(finite.max()) if finite.size else np.inf
        return cls(np.zeros(shape), np.zeros(shape, bool), np.zeros(shape), np.full(shape, np.inf), jump)

    def explains(self, diff: np.ndarray, tolerance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(explained, jumped) masks for elements differing by ``diff`` beyond ``tolerance``:
        where the original only drifts, a difference up to ``SLACK`` times its drift; where it
        jumps (a tie), a value the original itself took in some run (give or take the tolerance
        and its drift), or a difference no larger than the jumps it made there: no slack, so a
        wrong value at a tie is explained only by the chance of being that close."""
        drift = ~self.jumped & (diff <= SLACK * self.spread)
        tie = self.jumped & ((self.nearest <= tolerance + SLACK * self.calm) | (diff <= self.spread))
        return drift | tie, self.jumped

    def record(self, reference, up, down, rewritten, tolerance) -> None:
        """One pair of runs, moved one way (``up``) and the opposite way (``down``)."""
        ref = np.asarray(reference, np.float64)
        up, down = np.asarray(up, np.float64), np.asarray(down, np.float64)
        rew = np.asarray(rewritten, np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            rise, fall = up - ref, down - ref
            big = np.maximum(np.abs(rise), np.abs(fall))
            counted = np.isfinite(big)  # a run's non-finite element says nothing about rounding
            uneven = counted & (np.abs(rise + fall) > 0.5 * big) & (big > np.maximum(tolerance, self.jump))
            big = np.where(counted, big, 0.0)
            gap = np.fmin(np.abs(up - rew), np.abs(down - rew))
        np.maximum(self.spread, big, out=self.spread)
        self.jumped |= uneven
        np.maximum(self.calm, np.where(uneven, 0.0, big), out=self.calm)
        np.minimum(self.nearest, np.where(np.isfinite(gap), gap, np.inf), out=self.nearest)


def spreads(runner, feeds: dict[str, np.ndarray], probe: Probe, outputs: dict[str, str],
            reference: dict[str, np.ndarray], rewritten: dict[str, np.ndarray], tolerances: dict[str, tuple],
            seed: int) -> dict[str, Sensitivity]:
    """Run ``runner`` (of ``probe``'s model) ``TRIALS`` times, and up to ``ROUNDS`` times that
    while some element still differs by a jump no run has matched (a tie between several
    coordinates at once needs the runs to cross them in the right combination); for each
    ``outputs`` entry (key -> the value to read), how the runs moved it from ``reference[key]``
    and how close they came to ``rewritten[key]``, held to ``tolerances[key]`` (atol, rtol)."""
    found, limits = {}, {}
    for key in outputs:
        ref = np.asarray(reference[key], np.float64)
        found[key] = Sensitivity.empty(ref)
        atol, rtol = tolerances[key]
        with np.errstate(invalid="ignore"):
            limits[key] = atol + rtol * np.abs(ref)
    wanted = list(dict.fromkeys(probe.moved.get(v, v) for v in outputs.values()))
    rng = np.random.default_rng([seed, 29])
    for _ in range(ROUNDS):
        for _ in range(TRIALS // 2):
            moves = probe.feeds(rng)
            opposite = {name: np.negative(delta, out=np.empty_like(delta)) for name, delta in moves.items()}
            up, down = runner.run({**feeds, **moves}, wanted), runner.run({**feeds, **opposite}, wanted)
            for key, value in outputs.items():
                name = probe.moved.get(value, value)
                if np.shape(up[name]) == np.shape(reference[key]) and np.asarray(reference[key]).dtype.kind in "biuf":
                    found[key].record(reference[key], up[name], down[name], rewritten[key], limits[key])
        if not any(_unmatched_ties(found[key], reference[key], rewritten[key], limits[key]) for key in outputs):
            break
    return found


def _unmatched_ties(seen: Sensitivity, reference, rewritten, tolerance) -> bool:
    """Whether an element differs beyond tolerance where the original jumps, by a value no run
    has taken yet."""
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(np.asarray(rewritten, np.float64) - np.asarray(reference, np.float64))
    explained, jumped = seen.explains(diff, tolerance)
    return bool(np.any((diff > tolerance) & jumped & ~explained))
