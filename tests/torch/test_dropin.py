"""replace_grid_samplers: what it fuses in an existing model, what it leaves alone and why."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.functional import affine_grid, grid_sample

import surgeon_ops.torch as st

from .cases import image, theta
from .exporting import export
from .graphs import custom_nodes


def warp(x, theta):  # a plain helper function: traced through
    return grid_sample(x, affine_grid(theta, x.size(), align_corners=False), align_corners=False)


class DropInStn(nn.Module):
    def __init__(self):
        super().__init__()
        self.loc = nn.Linear(12, 6)
        with torch.no_grad():
            self.loc.weight.mul_(0.01)
            self.loc.bias.copy_(torch.tensor([1.0, 0, 0, 0, 1, 0]))

    def forward(self, x):
        theta = self.loc(x.flatten(1)[:, :12]).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=True)
        return F.grid_sample(x, grid, mode="bicubic", padding_mode="border", align_corners=True) + warp(x, theta)


class Shared(nn.Module):
    def forward(self, x, theta):
        g = F.affine_grid(theta, x.size(), align_corners=True)
        return F.grid_sample(x, g, align_corners=True) + F.grid_sample(2 * x, g, mode="nearest", align_corners=True)


class GridAlsoRead(nn.Module):
    def forward(self, x, theta):
        g = F.affine_grid(theta, x.size(), align_corners=False)
        return F.grid_sample(x, g, align_corners=False), g


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stn, self.shared, self.other = DropInStn(), Shared(), GridAlsoRead()

    def forward(self, x, theta):
        if x.sum() > 0:  # data-dependent control flow: torch.fx cannot trace this forward
            x = x * 1
        y, g = self.other(x, theta)
        z = F.grid_sample(x, F.affine_grid(theta, x.size(), align_corners=False), align_corners=False)
        return self.stn(x) + self.shared(x, theta) + y + z


def test_fuses_what_it_can_and_says_why_not_elsewhere():
    net = Net()
    x, t = image((2, 3, 8, 9)), theta(2, 2)
    want = net(x, t)
    state = {k: v.clone() for k, v in net.state_dict().items()}
    report = st.replace_grid_samplers(net)
    assert [f.split(":")[0] for f in report.fused] == ["stn", "stn", "shared", "shared"]
    assert any(s.startswith("Net: not traceable by torch.fx") for s in report.skipped)
    assert any(s.startswith("other:") and "readers other than F.grid_sample" in s for s in report.skipped)
    assert (net(x, t) - want).abs().max() <= 1e-4
    assert type(net.stn) is DropInStn and net.state_dict().keys() == state.keys()  # class and state untouched
    assert "fused 4 chain(s)" in str(report)
    again = st.replace_grid_samplers(net)  # idempotent
    assert len(again.fused) == 4 and (net(x, t) - want).abs().max() <= 1e-4


def test_other_dtypes_fall_back_to_torch_pair():
    stn = DropInStn().double()
    x = image((2, 3, 8, 9), dtype=torch.float64)
    want = stn(x)
    st.replace_grid_samplers(stn)
    assert torch.equal(stn(x), want)  # float64: torch's own pair ran


def test_rewritten_module_compiles_and_exports_the_contract_node(tmp_path):
    stn = DropInStn()
    st.replace_grid_samplers(stn)
    x = image((2, 3, 8, 9))
    compiled = torch.compile(stn, fullgraph=True, backend="aot_eager")
    assert (compiled(x) - stn(x)).abs().max() <= 1e-5

    class Wrapped(nn.Module):  # export() names two inputs
        def __init__(self):
            super().__init__()
            self.stn = stn

        def forward(self, x, theta):
            return self.stn(x) + theta.sum()

    model = export(Wrapped(), (x, theta(2, 2)), str(tmp_path / "m.onnx"), dynamo=True)
    assert [n.op_type for n in custom_nodes(model)] == ["FusedGridSample", "FusedGridSample"]
