"""How far the original itself moves under rounding: a Monte Carlo rounding probe.

A rewrite computes the same function in other float operations, so it may differ from the
original by what rounding moves: a few ulps carried through the original's ops (drift: bilinear
sampling at large coordinates, a long reduction), or, where a discontinuous op of the original
decides by the last bits of its inputs, a whole step (a tie: nearest sampling with a coordinate
on a pixel boundary takes the neighbour pixel). No fixed tolerance tells those from a wrong
rewrite, so the original is run again with every float value it reads or computes moved by up to
``AMPLITUDE_ULPS`` ulps of its own magnitude and of the terms that computed it (ulps.py: a row
of small values moves by ulps of its own size, never of the tensor's), 8 pairs of runs at a
time, the second of a pair moving everything the opposite way; each pair twice:

- *pinned*: every discontinuous op (discontinuous.py: nearest sampling, Round, Floor, Ceil,
  comparisons, ArgMax, casts to integers) keeps its original result. How far an element moves
  in these runs is its *drift*; a difference up to ``SLACK`` times the drift is rounding the
  original is sensitive to.
- *free*: the same moves, the discontinuous ops deciding afresh. Where an element of a free run
  differs from its pinned twin by more than the tolerance, a discontinuous op on its path
  flipped under the move of its own inputs: a *tie*. A difference there is explained when the
  rewrite's value is one the original itself took in some run (give or take the tolerance and
  the drift), or no larger than the original jumped; more pairs are run (up to 32) while such
  an element is still unmatched.

Everything else is a failure: a planted RMSNorm with its epsilon outside the square root differs
by 2 on rows of magnitude 6e-4 where the original drifts by 1e-6 and nothing flips; a nearest
sampler reading the transposed image differs at every element, and the few that lie at ties do
not carry the rest. Without a discontinuous op on the path there are no pinned runs to make.

Each moved value ``v`` is read as ``Add(v, delta_v)``; the moves of all values of one type come
in as one model input (split and reshaped in the graph: thousands of inputs would cost more to
feed than to run), drawn here from a seeded generator: the same inputs give the same spread
every time. A pinned op's outputs are read through ``Where(pin, original result, its result)``
(in a type that holds them exactly where onnxruntime's Where has no kernel for theirs: bool).
Discontinuous ops inside If/Loop bodies are not pinned: what they do counts as drift.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import GraphProto, TensorProto, helper, numpy_helper

from ..graph.node import subgraphs_of

AMPLITUDE_ULPS = 8
TRIALS = 16  # 8 pairs: each move, then its opposite
ROUNDS = 4  # rounds of TRIALS at most, while a tie stays unmatched
SLACK = 8
SUFFIX = "@rounded"


class RoundingProbe:
    """A graph whose float values are read moved: ``steps`` holds, for each value to move, the
    largest move of each element (ulps.py). ``pins`` are the outputs of discontinuous nodes, with
    their original values: a run with ``pin=True`` reads those instead of what the nodes compute.
    ``graph`` is changed in place; ``opset`` is its default-domain opset (Split takes its sizes
    as an input from 13)."""

    def __init__(self, graph: GraphProto, steps: dict[str, np.ndarray], taken: set[str], opset: int,
                 pins: dict[str, np.ndarray] | None = None):
        self._scales: dict[np.dtype, list[tuple[str, np.ndarray]]] = {}
        for name, scale in steps.items():
            self._scales.setdefault(scale.dtype, []).append((name, scale))
        self.pins = {}  # feeds of a pinned run
        self.pin = ""  # the bool input choosing pinned runs ("" when nothing is pinned)
        if pins:
            self._pin(graph, pins, taken)
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

    def _pin(self, graph: GraphProto, pins: dict[str, np.ndarray], taken: set[str]) -> None:
        """Route each pinned value through ``Where(pin, its original value, what computes it)``."""
        self.pin = fresh("rounding_pin", taken)
        graph.input.append(helper.make_tensor_value_info(self.pin, TensorProto.BOOL, []))
        free = {name: fresh(f"{name}@free", taken) for name in pins}
        for node in graph.node:
            node.output[:] = [free.get(o, o) for o in node.output]
        for name, value in pins.items():
            value = np.asarray(value)
            elem = helper.np_dtype_to_tensor_dtype(value.dtype)
            carrier = _WHERE_CARRIER.get(elem)
            held = fresh(f"{name}@pinned", taken)
            if carrier is None:
                graph.input.append(helper.make_tensor_value_info(held, elem, list(value.shape)))
                graph.node.append(helper.make_node("Where", [self.pin, held, free[name]], [name]))
                self.pins[held] = value
                continue
            # onnxruntime's Where has no kernel for this type (a comparison's bool, say): the
            # choice is made in a type that holds every value of it exactly, and cast back
            carried, chosen = fresh(f"{name}@carried", taken), fresh(f"{name}@chosen", taken)
            graph.input.append(helper.make_tensor_value_info(held, carrier, list(value.shape)))
            graph.node.extend([helper.make_node("Cast", [free[name]], [carried], to=carrier),
                               helper.make_node("Where", [self.pin, held, carried], [chosen]),
                               helper.make_node("Cast", [chosen], [name], to=elem)])
            self.pins[held] = value.astype(helper.tensor_dtype_to_np_dtype(carrier))

    def feeds(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """One trial's moves."""
        return {self.inputs[dtype]: np.concatenate([(rng.uniform(-1.0, 1.0, size=s.shape) * s).astype(dtype).ravel()
                                                    for _, s in entries])
                for dtype, entries in self._scales.items()}

    def runs(self, runner, feeds: dict, moves: dict, wanted: list[str]) -> tuple[dict, dict]:
        """(pinned, free) values of ``wanted`` for one set of moves; the same run twice where
        nothing is pinned."""
        if not self.pin:
            free = runner.run({**feeds, **moves}, wanted)
            return free, free
        pinned = runner.run({**feeds, **moves, **self.pins, self.pin: np.array(True)}, wanted)
        return pinned, runner.run({**feeds, **moves, **self.pins, self.pin: np.array(False)}, wanted)


# Types onnxruntime's Where has no kernel for -> one it has that holds each of their values
# exactly (uint64 through int64 wraps both ways, bit for bit).
_WHERE_CARRIER = {TensorProto.BOOL: TensorProto.UINT8, TensorProto.INT8: TensorProto.INT32,
                  TensorProto.INT16: TensorProto.INT32, TensorProto.UINT16: TensorProto.INT32,
                  TensorProto.UINT64: TensorProto.INT64, TensorProto.BFLOAT16: TensorProto.FLOAT}


def rewire(graph: GraphProto, renamed: dict[str, str]) -> None:
    """Make ``graph``'s nodes read ``renamed`` values under their new names, inside bodies too
    (where a body does not define the name itself)."""
    for node in graph.node:
        node.input[:] = [renamed.get(i, i) for i in node.input]
        for body in subgraphs_of(node):
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
    """What the probe saw at each element of one value: ``drift``, the most a pinned run moved
    it; ``flipped``, whether a free run differed from its pinned twin by more than the tolerance
    (a discontinuous op on its path flipped); ``jump``, the most such a run moved it;
    ``nearest``, how close the closest free run came to the rewrite's value."""

    drift: np.ndarray
    flipped: np.ndarray
    jump: np.ndarray
    nearest: np.ndarray

    @classmethod
    def empty(cls, shape) -> "Sensitivity":
        return cls(np.zeros(shape), np.zeros(shape, bool), np.zeros(shape), np.full(shape, np.inf))

    def explains(self, diff: np.ndarray, tolerance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(explained, ties) masks for elements differing by ``diff`` beyond ``tolerance``: a
        difference up to ``SLACK`` times the drift; and where a discontinuous op flipped (a tie),
        a value the original itself took in some run (give or take the tolerance and the drift),
        or a difference no larger than the original jumped there: no slack, so a wrong value at a
        tie is explained only by the chance of being that close."""
        drift = diff <= SLACK * self.drift
        tie = self.flipped & ~drift & ((self.nearest <= tolerance + SLACK * self.drift) | (diff <= self.jump))
        return drift | tie, tie

    def record(self, reference, pinned: tuple, free: tuple, rewritten, tolerance) -> None:
        """One pair of opposite moves: its (up, down) runs pinned and free."""
        ref = np.asarray(reference, np.float64)
        rew = np.asarray(rewritten, np.float64)
        for held, run in zip(pinned, free):
            held, run = np.asarray(held, np.float64), np.asarray(run, np.float64)
            with np.errstate(invalid="ignore", over="ignore"):
                moved = np.abs(held - ref)  # a run's non-finite element says nothing about rounding
                np.maximum(self.drift, np.where(np.isfinite(moved), moved, 0.0), out=self.drift)
                flip = np.abs(run - held) > tolerance  # (NaN compares False)
                self.flipped |= flip
                np.maximum(self.jump, np.where(flip, np.abs(run - ref), 0.0), out=self.jump)
                gap = np.abs(run - rew)
            np.minimum(self.nearest, np.where(np.isfinite(gap), gap, np.inf), out=self.nearest)


def spreads(runner, feeds: dict[str, np.ndarray], probe: RoundingProbe, outputs: dict[str, str],
            reference: dict[str, np.ndarray], rewritten: dict[str, np.ndarray], tolerances: dict[str, tuple],
            seed: int) -> dict[str, Sensitivity]:
    """Run ``runner`` (of ``probe``'s model) ``TRIALS`` pairs of moves, and up to ``ROUNDS``
    times that while some element still differs at a tie by a value no run has matched (a tie
    between several coordinates at once needs the runs to cross them in the right combination);
    for each ``outputs`` entry (key -> the value to read), how the runs moved it from
    ``reference[key]`` and how close they came to ``rewritten[key]``, held to
    ``tolerances[key]`` (atol, rtol)."""
    found, limits = {}, {}
    for key in outputs:
        ref = np.asarray(reference[key], np.float64)
        found[key] = Sensitivity.empty(ref.shape)
        atol, rtol = tolerances[key]
        with np.errstate(invalid="ignore"):
            limits[key] = atol + rtol * np.abs(ref)
    wanted = list(dict.fromkeys(probe.moved.get(v, v) for v in outputs.values()))
    rng = np.random.default_rng([seed, 29])
    for _ in range(ROUNDS):
        for _ in range(TRIALS // 2):
            moves = probe.feeds(rng)
            opposite = {name: np.negative(delta, out=np.empty_like(delta)) for name, delta in moves.items()}
            (held_up, up), (held_down, down) = (probe.runs(runner, feeds, m, wanted) for m in (moves, opposite))
            for key, value in outputs.items():
                name = probe.moved.get(value, value)
                if np.shape(up[name]) == np.shape(reference[key]) and np.asarray(reference[key]).dtype.kind in "biuf":
                    found[key].record(reference[key], (held_up[name], held_down[name]), (up[name], down[name]),
                                      rewritten[key], limits[key])
        if not probe.pin or not any(_unmatched_ties(found[key], reference[key], rewritten[key], limits[key])
                                    for key in outputs):
            break
    return found


def _unmatched_ties(seen: Sensitivity, reference, rewritten, tolerance) -> bool:
    """Whether an element differs beyond tolerance where a discontinuous op flipped, by a value
    no run has taken yet."""
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(np.asarray(rewritten, np.float64) - np.asarray(reference, np.float64))
    explained, _ = seen.explains(diff, tolerance)
    return bool(np.any((diff > tolerance) & seen.flipped & ~explained))
