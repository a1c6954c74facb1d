"""Forward results against torch's F.grid_sample(x, F.affine_grid(theta, size)) and the
operator's registration."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import surgeon_ops.torch as st

from ..error_bounds import affine_grid_bound, assert_within, unit_roundoff
from .cases import COMBOS, assert_equals_torch, image, shapes, theta


@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS)
def test_every_mode_padding_and_align_corners_equal_torch(nsp, mode, padding, ac):
    for i, (shape, out) in enumerate(shapes(nsp)):
        x, t = image(shape, seed=i), theta(shape[0], nsp, seed=i)
        size = torch.Size(shape[:2] + out)
        got = st.fused_grid_sample(x, t, size, mode, padding, ac)
        assert got.dtype == torch.float32
        assert_equals_torch(got, x, t, size, mode, padding, ac, f"{shape} -> {out}")


@pytest.mark.parametrize("nsp", (2, 3))
def test_float16_is_computed_in_float32_and_rounded(nsp):
    shape, out = shapes(nsp)[0]
    x, t = image(shape), theta(shape[0], nsp)
    size = shape[:2] + out
    got = st.fused_grid_sample(x.half(), t.half(), size)
    assert got.dtype == torch.float16
    assert_equals_torch(got, x.half(), t.half(), size)


def test_size_spellings_match_f_affine_grid():
    x, t = image((2, 3, 8, 10)), theta(2, 2)
    want = st.fused_grid_sample(x, t, x.size())
    assert_equals_torch(want, x, t, x.size())

    for size in (x.shape, list(x.shape), tuple(x.shape), [8, 10], None, np.array(x.shape), [np.int64(8), 10]):
        assert torch.equal(st.fused_grid_sample(x, t, size), want)
    # F.affine_grid ignores the C of its size; so does the op (the output has x's channels)
    assert torch.equal(st.fused_grid_sample(x, t, [2, 1, 8, 10]), want)


def test_affine_grid_equals_torch():
    # torch's CPU kernels differ by ISA (one ulp in 3-D between AVX2 and AVX-512): the bound of
    # two computations of theta @ base, not bit equality
    for nsp, size in ((2, [3, 1, 5, 7]), (3, [3, 2, 4, 5, 6])):
        t = theta(3, nsp)
        bound = affine_grid_bound(t.numpy()).reshape(3, *[1] * nsp, nsp)
        for ac in (False, True):
            assert_within(st.affine_grid(t, size, ac).numpy(), F.affine_grid(t, size, align_corners=ac).numpy(),
                          bound, f"{nsp}-D, align_corners={ac}")
    t = theta(2, 2).half()
    want = F.affine_grid(t.float(), [2, 3, 6, 5], align_corners=False).numpy()
    bound = affine_grid_bound(t.float().numpy()).reshape(2, 1, 1, 2) + unit_roundoff(np.float16) * np.abs(want)
    assert_within(st.affine_grid(t, [2, 3, 6, 5]).float().numpy(), want, bound, "float16")


def test_non_contiguous_inputs():
    x, t = image((3, 2, 9, 8)), theta(2, 2)
    xs = x.transpose(2, 3)[:2]  # not contiguous
    ts = t.transpose(1, 2).contiguous().transpose(1, 2)
    assert not xs.is_contiguous() and not ts.is_contiguous()
    assert_equals_torch(st.fused_grid_sample(xs, ts, [2, 2, 5, 6]), xs.contiguous(), t, [2, 2, 5, 6])


def test_registered_as_torch_operators():
    assert str(torch.ops.surgeon.fused_grid_sample.default._schema) == (
        "surgeon::fused_grid_sample(Tensor x, Tensor theta, SymInt[] size, str mode, str padding_mode, "
        "bool align_corners) -> Tensor")
    assert str(torch.ops.surgeon.affine_grid.default._schema) == (
        "surgeon::affine_grid(Tensor theta, SymInt[] size, bool align_corners) -> Tensor")
    x, t = image((1, 2, 5, 6)), theta(1, 2)
    torch.library.opcheck(torch.ops.surgeon.fused_grid_sample.default, (x, t, [4, 3], "bicubic", "border", True))
    torch.library.opcheck(torch.ops.surgeon.affine_grid.default, (theta(2, 3), [2, 3, 4], False))


def test_surgeon_torch_is_a_deprecated_alias_of_surgeon_ops_torch():
    import surgeon.torch

    for name in ("fused_grid_sample", "affine_grid", "replace_grid_samplers", "onnx_translation_table"):
        with pytest.warns(DeprecationWarning, match=f"import surgeon_ops.torch instead .*surgeon_ops.torch.{name}"):
            assert getattr(surgeon.torch, name) is getattr(st, name)


def test_surgeon_torch_is_not_imported_by_surgeon():
    import subprocess
    import sys

    code = "import sys, surgeon; print('surgeon.torch' in sys.modules, 'surgeon_ops.torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_eager_calls_with_nothing_to_record_skip_the_operator_with_its_bits(monkeypatch):
    """Plain CPU tensors with no gradient to record run the kernel without the operator's dispatch
    (_ops.plain_eager_cpu): the same bits as the operator, float64 included (the reference
    path).  A gradient to record, a dispatch mode or a functorch transform still gets the
    operator."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from surgeon_ops.torch import _ops

    direct = []
    real = _ops.fused_cpu
    monkeypatch.setattr(_ops, "fused_cpu", lambda *args: direct.append(args[3]) or real(*args))
    for dtype in (torch.float32, torch.float16, torch.float64):
        x, t = image((2, 3, 9, 11)).to(dtype), theta(2, 2).to(dtype)
        for mode in ("bilinear", "nearest", "bicubic"):
            want = torch.ops.surgeon.fused_grid_sample(x, t, [7, 13], mode, "reflection", True)
            assert torch.equal(st.fused_grid_sample(x, t, [2, 3, 7, 13], mode, "reflection", True), want)
            x.requires_grad_()
            with torch.no_grad():
                assert torch.equal(st.fused_grid_sample(x, t, [7, 13], mode, "reflection", True), want)
            x.requires_grad_(False)
    assert len(direct) == 18
    x, t = image((2, 3, 9, 11)), theta(2, 2)
    assert st.fused_grid_sample(x, t.requires_grad_()).grad_fn is not None
    t = t.detach()
    with FakeTensorMode() as mode:
        assert st.fused_grid_sample(mode.from_tensor(x), mode.from_tensor(t)).shape == x.shape
    batched = torch.vmap(lambda img: st.fused_grid_sample(img[None], t[:1])[0])(x)
    assert len(direct) == 18  # none of these three: the operator (vmap through its fallback)
    assert torch.equal(batched, st.fused_grid_sample(x, t[:1].expand(2, 2, 3)))


def test_the_glance_at_plain_calls_accepts_only_what_the_checks_accept():
    """_ops.plain_call (the eager fast path's one look at the arguments) gives the spatial size
    the full checks give, and None for anything they might refuse or route elsewhere."""
    import numpy as np

    from surgeon_ops.torch import _checks, _ops

    x, t = image((2, 3, 9, 11)), theta(2, 2)
    for size in (None, [7, 13], (2, 3, 7, 13), torch.Size([2, 5, 7, 13])):
        got = _ops.plain_call(x, t, size, "nearest", "border", True)
        assert got == _checks.spatial("f", x.shape if size is None else size, 2, 2)[0]
    x3, t3 = image((1, 2, 4, 5, 6)), theta(1, 3)
    assert _ops.plain_call(x3, t3, None, "bilinear", "zeros", False) == [4, 5, 6]
    refused = [
        (x, t, [0, 13], "bilinear", "zeros", False), (x, t, [2, 0, 7, 13], "bilinear", "zeros", False),
        (x, t, [3, 3, 7, 13], "bilinear", "zeros", False), (x, t, [7], "bilinear", "zeros", False),
        (x, t, [np.int64(7), 13], "bilinear", "zeros", False), (x, t, None, "linear", "zeros", False),
        (x, t, None, "bilinear", "wrap", False), (x, t, None, "bilinear", "zeros", 1),
        (x, t, None, ["bilinear"], "zeros", False), (x, t[:1], None, "bilinear", "zeros", False),
        (x, theta(2, 3), None, "bilinear", "zeros", False), (x3, t3, None, "bicubic", "zeros", False),
        (x.double(), t.double(), None, "bilinear", "zeros", False), (x, t.half(), None, "bilinear", "zeros", False),
        (image((2, 3, 0, 4)), t, None, "bilinear", "zeros", False), (x[0], t, None, "bilinear", "zeros", False),
        (torch.nn.Parameter(x), t, None, "bilinear", "zeros", False),
        (x, t.clone().requires_grad_(), None, "bilinear", "zeros", False),
    ]
    for args in refused:
        assert _ops.plain_call(*args) is None, args
    with torch.no_grad():  # nothing to record: the gradient no longer matters
        assert _ops.plain_call(x, t.clone().requires_grad_(), None, "bilinear", "zeros", False) == [9, 11]
