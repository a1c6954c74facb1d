"""The engine's dim machinery on its own, with no grid in sight: dim classes never merged by name,
ties made only where the region needs them and split where it does not, sizes baked into
constants that run elsewhere named, and the proof's leaves read off the declared dims."""

from types import SimpleNamespace

import numpy as np
from onnx import helper

from surgeon import Refusal
from surgeon.recognise import (AT_LEAST_ONE, DIMS, KNOWN, DimPlan, Failure, Region, Symbols, leaves, partitions,
                               pinned_elsewhere, prove_beyond_one, runs, split, tie_co_valued)
from surgeon.graph.node import Node
from surgeon.recognise.bounds import BRANCH


class _Ctx:
    """The one question the ties ask the graph: do its ops make two dims one? Here never."""

    def same_dim(self, *_):
        return False


def _symbols():
    # x [N, 3, H, W] is the anchor, v [N, 4] the variable: four classes, both N's apart
    return Symbols({"x": ("N", 3, "H", "W"), "v": ("N", 4)}, "x", "v")


def test_classes_are_never_merged_by_name():
    sym = _symbols()
    assert [(d.value, d.axis, d.declared) for d in sym.classes] == [("x", 0, "N"), ("x", 2, "H"), ("x", 3, "W"),
                                                                   ("v", 0, "N")]
    plan = DimPlan(sym, [[c] for c in range(4)])
    assert len(set(plan.base().values())) == 4  # every class its own probe value
    assert sym.at(plan.base())["v"] == (plan.base()[3], 4)


def test_partitions_tie_the_variables_batch_to_the_anchors_then_by_name():
    plans = [sorted(map(sorted, p.groups)) for p in partitions(_symbols())]
    assert plans[:2] == [[[0], [1], [2], [3]], [[0, 3], [1], [2]]]
    named = [sorted(map(sorted, p.groups)) for p in partitions(Symbols({"x": ("N", 3, "S", "S"), "v": ("B", 4)}, "x",
                                                                        "v"))]
    assert named[0] == [[0], [1], [2], [3]] and [[1, 2]] == [g for g in named[-1] if len(g) > 1 and 1 in g]


def test_split_unties_what_the_region_runs_without():
    plan = DimPlan(_symbols(), [[1], [2], [0, 3]])
    base = plan.base()
    found = split(_Ctx(), plan, base, lambda assign: "ran", "it holds")
    assert not isinstance(found, Refusal) and found[0] != found[3]
    assert sorted(map(sorted, plan.groups)) == [[0], [1], [2], [3]]


def test_split_refuses_a_tie_whose_classes_apart_give_another_result():
    plan = DimPlan(_symbols(), [[1], [2], [0, 3]])
    base = plan.base()
    failed = lambda assign: Failure("the values differ", ran=True, batch=assign[0])  # noqa: E731
    refusal = split(_Ctx(), plan, base, failed, "it holds")
    assert isinstance(refusal, Refusal)
    assert refusal.reason == "it holds only while N (x[0]) and N (v[0]) are equal: otherwise the values differ"
    # a result the consumer would not take (another batch) is no such hazard: the tie stays
    other = lambda assign: Failure("no", ran=True, batch=-1)  # noqa: E731
    assert split(_Ctx(), DimPlan(_symbols(), [[1], [2], [0, 3]]), base, other, "it holds") == base


def test_co_valued_groups_that_run_only_together_are_one_dim():
    plan = DimPlan(_symbols(), [[0], [1], [2], [3]])
    base = plan.base()
    base[2] = base[1]  # H and W share the probe's value
    check = lambda assign, salt: "ran" if assign[1] == assign[2] else Failure("no", ran=False)  # noqa: E731
    tie_co_valued(plan, base, check)
    assert [1, 2] in plan.groups
    assert runs(Failure("x", ran=True)) and not runs(Failure("x", ran=False)) and runs("a result")


def test_sizes_baked_in_that_run_swapped_are_named():
    sym = _symbols()
    plan = DimPlan(sym, [[0], [1], [2], [3]])
    base = {0: 2, 1: 12, 2: 16, 3: 2}
    swapped = lambda assign, salt: "ran" if assign[1] * assign[2] == 192 else Failure("no", ran=False)  # noqa: E731
    said = pinned_elsewhere(plan, base, {1, 2}, swapped, "the table")
    assert said.startswith("the table runs with H=16 (x[2]) and W=12 (x[3]) as well as at the sizes baked")
    only = lambda assign, salt: "ran" if (assign[1], assign[2]) == (12, 16) else Failure("no", ran=False)  # noqa: E731
    assert pinned_elsewhere(plan, base, {1, 2}, only, "the table") is None


def test_leaves_read_declared_static_dims_as_constants_and_dynamic_ones_as_sizes():
    sym = _symbols()
    shape = Node(helper.make_node("Shape", ["x"], ["x_shape"], name="shape"), 0)
    region = Region("out", "v", [shape], shapes=[shape])
    feeds = {"v": np.zeros((2, 4), np.float32), "x_shape": np.array([2, 3, 5, 7], np.int64)}
    found = leaves(region, sym, feeds, group_of=lambda cls: cls, bounds=lambda group: AT_LEAST_ONE, item=4)
    dims = found["x_shape"]
    assert list(dims.kind) == [DIMS, KNOWN, DIMS, DIMS] and list(dims.sym) == [0, -1, 1, 2]
    assert dims.lo[1] == dims.hi[1] == 3 and dims.lo[2] == 1 and dims.hi[2] == np.inf
    assert found["v"].axes == (3, -1)  # the variable's batch is its own group; its 4 is static


class _Plan:
    """Seven dim groups, none fixed (the ``DimPlan`` surface ``prove_beyond_one`` reads)."""

    groups = [[g] for g in range(7)]
    fixed: dict = {}

    @staticmethod
    def with_value(base, group, value):
        return {**base, group: value}


def _branch_on(reads):
    """A proof that meets a branch on ``prod(dims of reads) > 1``: settled where one read dim is
    at least 2, or all are exactly 1; else a refusal naming the branch."""
    calls = []

    def prove_at(assign, bounds):
        calls.append(assign)
        lows, highs = [bounds(g)[0] for g in reads], [bounds(g)[1] for g in reads]
        if all(lo <= 1 for lo in lows) and not all(hi == 1 for hi in highs):
            return Refusal(f"the grid depends on Greater: {BRANCH}")
        return SimpleNamespace(small_dims=False)
    return prove_at, calls


def test_past_five_groups_only_those_a_branch_reads_are_combined_at_one():
    prove_at, calls = _branch_on([2])
    proof = prove_beyond_one(_Plan(), {g: 5 for g in range(7)}, Refusal("first"), prove_at)
    assert not isinstance(proof, Refusal) and proof.small_dims
    assert len(calls) == 1 + 7 + 1 + 1  # relaxed, each group alone, the free ones together, group 2 at 1


def test_two_dims_that_branch_only_together_keep_the_refusal():
    prove_at, _ = _branch_on([2, 3])  # H * W > 1: each alone at 1 settles it, both at 1 do not
    first = Refusal("first")
    assert prove_beyond_one(_Plan(), {g: 5 for g in range(7)}, first, prove_at) is first


def test_dims_the_ops_make_one_are_one_from_the_first_partition():
    class Tied:  # the graph's ops make x's batch and v's one (a Pad that leaves the batch alone, say)
        def same_dim(self, a, axis_a, b, axis_b):
            return {(a, axis_a), (b, axis_b)} == {("x", 0), ("v", 0)}

    first = next(partitions(_symbols(), Tied()))
    assert sorted(map(sorted, first.groups)) == [[0, 3], [1], [2]]
    assert next(partitions(_symbols(), _Ctx())).groups == [[0], [1], [2], [3]]  # no such op: apart
