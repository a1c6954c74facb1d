"""torch.compile (fullgraph: no graph breaks) and torch.export trace models using the ops,
the batch dynamic, forward and backward."""

import pytest
import torch

import surgeon_ops.torch as st

from .cases import assert_equals_torch, image, theta


class CompiledWarp(torch.nn.Module):
    def __init__(self, mode="bilinear", padding_mode="zeros", align_corners=False):
        super().__init__()
        self.args = (mode, padding_mode, align_corners)

    def forward(self, x, theta):
        y = st.fused_grid_sample(x, theta, x.size(), *self.args)
        return y * 2 + st.affine_grid(theta, x.shape, self.args[2]).mean()


def _inputs(n, nsp=2, seed=0):
    shape = (n, 3, 9, 11) if nsp == 2 else (n, 2, 4, 5, 6)
    return image(shape, seed=seed), theta(n, nsp, seed=seed)


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
def test_compile_fullgraph_dynamic_batch_forward_and_backward(backend):
    torch._dynamo.reset()
    model = CompiledWarp("bicubic", "border", True)
    compiled = torch.compile(model, fullgraph=True, dynamic=True, backend=backend)
    for n in (2, 5):  # a second batch size reuses the dynamic graph
        x, t = _inputs(n, seed=n)
        x.requires_grad_(), t.requires_grad_()
        got = compiled(x, t)
        want = model(x, t)
        assert (got - want).abs().max() <= 1e-4
        gx, gt = torch.autograd.grad(got.sum(), (x, t))
        wx, wt = torch.autograd.grad(want.sum(), (x, t))
        assert (gx - wx).abs().max() <= 1e-4 and (gt - wt).abs().max() <= 1e-3 * wt.abs().max()


def test_compile_3d_static_shapes_counts_no_graph_break():
    torch._dynamo.reset()
    model = CompiledWarp("nearest", "reflection")
    explained = torch._dynamo.explain(model)(*_inputs(2, nsp=3))
    assert explained.graph_break_count == 0 and explained.graph_count == 1
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    x, t = _inputs(3, nsp=3)
    assert torch.equal(compiled(x, t), model(x, t))


def test_export_with_dynamic_batch_runs_other_batches():
    n = torch.export.Dim("n")
    x, t = _inputs(2)
    ep = torch.export.export(CompiledWarp(), (x, t), dynamic_shapes={"x": {0: n}, "theta": {0: n}})
    targets = {str(node.target) for node in ep.graph.nodes if node.op == "call_function"}
    assert {"surgeon.fused_grid_sample.default", "surgeon.affine_grid.default"} <= targets
    x, t = _inputs(4, seed=3)
    got = ep.module()(x, t)
    assert (got - CompiledWarp()(x, t)).abs().max() <= 1e-5
    assert_equals_torch(st.fused_grid_sample(x, t), x, t, x.shape)


def test_jit_trace_replays_at_other_sizes_without_tracer_warnings():
    import warnings

    x, t = _inputs(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", torch.jit.TracerWarning)
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        traced = torch.jit.trace(CompiledWarp("bilinear", "border"), (x, t))
    x, t = image((3, 3, 7, 13), seed=2), theta(3, 2, seed=2)
    assert torch.equal(traced(x, t), CompiledWarp("bilinear", "border")(x, t))
