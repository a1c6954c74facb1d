"""Every op rule of the engine's proof, by table: each attribute and input form across opsets,
and beside each a region where the rule's assumption fails (a clamp that binds, a term the op
skips, a repeated index, a length that follows the dims). A verdict of "affine" is checked on
numbers (``is_affine_numerically``), "neither" is shown to bend, and claimed reads are exact: an
element claimed unread may hold an infinity without touching the output."""

import numpy as np
import pytest
from onnx import helper

from surgeon.recognise import AFFINE, DIMS, KNOWN, OTHER, NotProved

from .harness import RuleRegion, is_affine_numerically

N = helper.make_node
F32 = np.float32


def _i64(*v):
    return np.array(v, np.int64)


# (id, region, expected kinds of y: one kind for all, or an array; expected reads per element or None)
CASES = [
    # Clip: bounds as inputs from opset 11, attributes before
    ("clip11-bounds", lambda: RuleRegion([N("Clip", ["v", "lo", "hi"], ["y"])], 13,
                                     consts={"lo": F32(-0.5), "hi": F32(0.5)}), OTHER),
    ("clip6-attributes", lambda: RuleRegion([N("Clip", ["v"], ["y"], min=-0.5, max=0.5)], 10), OTHER),
    # Gemm: a term with a zero factor is skipped, so nothing in it is read
    ("gemm-beta1", lambda: RuleRegion([N("Gemm", ["a", "b", "v"], ["y"])], 13, v=(2, 3),
                                  consts={"a": np.eye(2, dtype=F32), "b": np.ones((2, 3), F32)}), AFFINE),
    ("gemm-beta0", lambda: RuleRegion([N("Gemm", ["a", "b", "v"], ["y"], beta=0.0)], 13, v=(2, 3),
                                  consts={"a": np.eye(2, dtype=F32), "b": np.ones((2, 3), F32)}), KNOWN),
    ("gemm-alpha0", lambda: RuleRegion([N("Gemm", ["v", "b", "c"], ["y"], alpha=0.0)], 13, v=(2, 2),
                                   consts={"b": np.ones((2, 3), F32), "c": np.ones((2, 3), F32)}), KNOWN),
    # onnxruntime's FusedMatMul (its optimiser's MatMul + Transpose): a transpose of either side
    ("fusedmatmul-transB", lambda: RuleRegion([N("FusedMatMul", ["a", "v"], ["y"], domain="com.microsoft", transB=1,
                                              alpha=0.5)], 17, v=(3, 2), consts={"a": np.ones((2, 2), F32)}), AFFINE),
    ("fusedmatmul-both-vary", lambda: RuleRegion([N("FusedMatMul", ["v", "v"], ["y"], domain="com.microsoft",
                                                transA=1)], 17, v=(2, 2)), OTHER),
    # CumSum: exclusive sums stop before their own element
    ("cumsum", lambda: RuleRegion([N("CumSum", ["v", "ax"], ["y"])], 14, v=(3,), consts={"ax": _i64(0)}), AFFINE),
    ("cumsum-exclusive", lambda: RuleRegion([N("CumSum", ["v", "ax"], ["y"], exclusive=1)], 14, v=(3,),
                                        consts={"ax": _i64(0)}), np.array([KNOWN, AFFINE, AFFINE])),
    ("cumsum-exclusive-reverse", lambda: RuleRegion([N("CumSum", ["v", "ax"], ["y"], exclusive=1, reverse=1)], 14,
                                                v=(3,), consts={"ax": _i64(0)}), np.array([AFFINE, AFFINE, KNOWN])),
    # Scatter reductions: add stays affine, max/min clamp, mul of two varying factors is a product
    ("scatter-elements-add", lambda: RuleRegion([N("ScatterElements", ["z", "i", "v"], ["y"], axis=0, reduction="add")],
                                            18, v=(3,), consts={"z": np.zeros(2, F32), "i": _i64(0, 1, 0)}), AFFINE),
    ("scatter-elements-max", lambda: RuleRegion([N("ScatterElements", ["z", "i", "v"], ["y"], axis=0, reduction="max")],
                                            18, v=(2,), consts={"z": np.zeros(2, F32), "i": _i64(0, 1)}), OTHER),
    ("scatter-elements-min", lambda: RuleRegion([N("ScatterElements", ["z", "i", "v"], ["y"], axis=0, reduction="min")],
                                            18, v=(2,), consts={"z": np.zeros(2, F32), "i": _i64(1, 0)}), OTHER),
    ("scatter-elements-mul-constant", lambda: RuleRegion([N("ScatterElements", ["z", "i", "v"], ["y"], axis=0,
                                                        reduction="mul")], 18, v=(2,),
                                                     consts={"z": np.full(3, 2, F32), "i": _i64(0, 2)}),
     np.array([AFFINE, KNOWN, AFFINE])),
    ("scatter-elements-mul-repeated", lambda: RuleRegion([N("ScatterElements", ["z", "i", "v"], ["y"], axis=0,
                                                        reduction="mul")], 18, v=(2,),
                                                     consts={"z": np.full(2, 2, F32), "i": _i64(0, 0)}),
     np.array([OTHER, KNOWN])),
    ("scatter-nd-add-repeated", lambda: RuleRegion([N("ScatterND", ["z", "i", "v"], ["y"], reduction="add")], 18, v=(3,),
                                               consts={"z": np.zeros(2, F32), "i": _i64(0, 0, 1).reshape(3, 1)}),
     AFFINE),
    ("scatter-nd-max", lambda: RuleRegion([N("ScatterND", ["z", "i", "v"], ["y"], reduction="max")], 18, v=(2,),
                                      consts={"z": np.zeros(2, F32), "i": _i64(1, 0).reshape(2, 1)}), OTHER),
    # Reductions: axes as an attribute (before 18 for ReduceMean, 13 for ReduceSum) and as an input
    ("reducesum-axes-attribute", lambda: RuleRegion([N("ReduceSum", ["v"], ["y"], axes=[1], keepdims=0)], 11), AFFINE),
    ("reducesum-axes-input", lambda: RuleRegion([N("ReduceSum", ["v", "ax"], ["y"], keepdims=0)], 13,
                                            consts={"ax": _i64(1)}), AFFINE),
    ("reducemean-axes-input", lambda: RuleRegion([N("ReduceMean", ["v", "ax"], ["y"], keepdims=0)], 18,
                                             consts={"ax": _i64(0)}), AFFINE),
    ("reducemax", lambda: RuleRegion([N("ReduceMax", ["v"], ["y"], axes=[1], keepdims=0)], 13), OTHER),
    ("reduceprod", lambda: RuleRegion([N("ReduceProd", ["v"], ["y"], axes=[1], keepdims=0)], 13), OTHER),
    # Split, Squeeze, Unsqueeze: attribute forms and input forms
    ("split-attribute", lambda: RuleRegion([N("Split", ["v"], ["y", "y2"], axis=1, split=[1, 2])], 11), AFFINE),
    ("split-input", lambda: RuleRegion([N("Split", ["v", "s"], ["y", "y2"], axis=1)], 13, consts={"s": _i64(2, 1)}),
     AFFINE),
    ("squeeze-attribute", lambda: RuleRegion([N("Unsqueeze", ["v"], ["u"], axes=[0]), N("Squeeze", ["u"], ["y"], axes=[0])],
                                         11), AFFINE),
    ("squeeze-input", lambda: RuleRegion([N("Unsqueeze", ["v", "ax"], ["u"]), N("Squeeze", ["u", "ax"], ["y"])], 13,
                                     consts={"ax": _i64(0)}), AFFINE),
    # Constants whose length follows the dims are not constants once summed, measured or picked
    ("reducesum-of-constant-of-shape", lambda: RuleRegion(
        [N("ConstantOfShape", ["d"], ["c"], value=helper.make_tensor("one", 1, [1], [1.0])),
         N("ReduceSum", ["c"], ["s"], keepdims=0), N("Add", ["v", "s"], ["y"])], 18, d=[5]), DIMS),
    ("shape-of-expanded-constant", lambda: RuleRegion(
        [N("Expand", ["one", "d"], ["e"]), N("Shape", ["e"], ["s"]), N("Cast", ["s"], ["sf"], to=1),
         N("Add", ["v", "sf"], ["y"])], 18, v=(1,), d=[7], consts={"one": np.ones(1, F32)}), DIMS),
    ("gather-table-at-a-size", lambda: RuleRegion(
        [N("Gather", ["table", "d"], ["t"], axis=0), N("Add", ["v", "t"], ["y"])], 18, v=(1,), d=[2],
        consts={"table": np.array([0.0, 1.0, 0.5], F32)}), DIMS),
    ("pad-fill-at-a-size", lambda: RuleRegion(
        [N("Concat", ["zero", "d"], ["pads"], axis=0), N("Pad", ["one", "pads", "fill"], ["p"]),
         N("ReduceMin", ["p"], ["m"], keepdims=0), N("Add", ["v", "m"], ["y"])], 18, v=(1,), d=[1],
        consts={"one": np.ones(2, F32), "zero": _i64(0), "fill": F32(-3.0)}), DIMS),
]


def _expected_kinds(expected, shape):
    return np.broadcast_to(np.asarray(expected, np.int8), shape)


@pytest.mark.parametrize("name,make,expected", CASES, ids=[c[0] for c in CASES])
def test_rule(name, make, expected):
    region = make()
    proved = region.prove()
    got = np.asarray(proved.kind)
    want = _expected_kinds(expected, got.shape)
    if (want == DIMS).all():  # the whole output follows the dims: no element may pass for a constant
        assert (got >= DIMS).all() and not (got == KNOWN).any(), (name, got)
    else:
        assert np.array_equal(got, want), (name, got.tolist(), want.tolist())
    if (want == AFFINE).all():
        assert is_affine_numerically(region), f"{name}: proved affine, the numbers bend"
    if (want == OTHER).any():
        assert not is_affine_numerically(region), f"{name}: proved not affine, yet the numbers are: the case " \
                                                  "does not show the hazard"


# Reads are exact: what the proof says an output element reads, and nothing it says it does not.
READS = [
    ("gemm-beta0-reads-nothing-of-c", lambda: RuleRegion([N("Gemm", ["a", "b", "v"], ["y"], beta=0.0)], 13,
                                                     consts={"a": np.eye(2, dtype=F32), "b": np.ones((2, 3), F32)})),
    ("cumsum-exclusive-reads-before", lambda: RuleRegion([N("CumSum", ["v", "ax"], ["y"], exclusive=1)], 14, v=(3,),
                                                     consts={"ax": _i64(0)})),
    ("scatter-add-repeated-reads-all", lambda: RuleRegion([N("ScatterND", ["z", "i", "v"], ["y"], reduction="add")], 18,
                                                      v=(3,), consts={"z": np.zeros(2, F32),
                                                                      "i": _i64(0, 0, 1).reshape(3, 1)})),
    ("scatter-elements-add-repeated-reads-all", lambda: RuleRegion(
        [N("ScatterElements", ["z", "i", "v"], ["y"], axis=0, reduction="add")], 18, v=(3,),
        consts={"z": np.zeros(2, F32), "i": _i64(0, 1, 0)})),
]


@pytest.mark.parametrize("name,make", READS, ids=[c[0] for c in READS])
def test_reads_are_exact(name, make):
    region = make()
    reads = np.asarray(region.prove().reads).reshape(-1)
    n = int(np.prod(region.v_shape))
    base = region.run(np.zeros(region.v_shape))[0].reshape(-1)
    for e in range(n):
        poisoned = np.zeros(n, np.float32)
        poisoned[e] = np.inf
        out = region.run(poisoned.reshape(region.v_shape))[0].reshape(-1)
        touched = ~np.isfinite(out) | (out != base)
        claimed = (reads >> np.uint32(e)) & 1 == 1
        assert np.array_equal(touched, claimed), (name, e, touched.tolist(), claimed.tolist())


@pytest.mark.parametrize("opset", [10, 13])
def test_clip_clamps_even_without_bounds(opset):
    # its bounds default to the float's extremes (attributes before opset 11, inputs after): an
    # infinity comes out finite, which no probe of finite values shows, so the rule must know it
    region = RuleRegion([N("Clip", ["v"], ["y"])], opset)
    proved = region.prove()
    assert (np.asarray(proved.kind) == OTHER).all() and "an infinity comes out finite" in proved.why
    assert np.isfinite(region.run(np.full(region.v_shape, np.inf))[0]).all()


def test_a_clamp_is_named_in_the_refusal():
    proved = RuleRegion([N("Clip", ["v"], ["y"], min=-0.5, max=0.5)], 10).prove()
    assert "clamps values that depend on the variables" in proved.why


def test_a_scatter_max_is_named_in_the_refusal():
    proved = RuleRegion([N("ScatterElements", ["z", "i", "v"], ["y"], axis=0, reduction="max")], 18, v=(2,),
                    consts={"z": np.zeros(2, F32), "i": _i64(0, 1)}).prove()
    assert "(max) clamps values that depend on the variables" in proved.why


def test_an_op_without_a_rule_is_not_proved_on_sizes():
    region = RuleRegion([N("Cast", ["d"], ["df"], to=1), N("Sin", ["df"], ["s"]), N("Add", ["v", "s"], ["y"])], 18,
                    v=(1,), d=[3])
    proved = region.prove()
    assert (np.asarray(proved.kind) >= DIMS).all()
    with pytest.raises(NotProved, match="no rule for Bernoulli"):
        RuleRegion([N("Cast", ["d"], ["df"], to=1), N("Bernoulli", ["df"], ["s"]), N("Add", ["v", "s"], ["y"])], 18,
               v=(1,), d=[1]).prove()
