"""A plain torch.onnx.export of a model using surgeon.torch holds exactly the nodes surgeon fuse
writes for the same model spelled with F.affine_grid + F.grid_sample (both exporters), and
runs: custom nodes on surgeon's reference kernels."""

import pytest
import torch
from onnx import AttributeProto

import surgeon

from .cases import assert_equals_torch, image, theta
from .exporting import WarpToExport, export
from .graphs import custom_nodes, declared_types, signature

# (exporter, dynamic dims, dims, size, mode, padding_mode, align_corners).  No align_corners=True
# with dynamic spatial dims: there ONNX's AffineGrid puts a size-1 dim's coordinate at -1, torch
# at 0, and surgeon fuse keeps the exported pair's ONNX meaning with a correction of theta.
CASES = [
    ("ts", "all", 2, "x", "bilinear", "zeros", False),
    ("ts", "batch", 2, (16, 20), "bicubic", "border", True),
    ("ts", "all", 3, "x", "nearest", "reflection", False),
    ("ts", None, 2, "x", "bilinear", "reflection", False),
    ("dynamo", "batch", 2, "x", "bilinear", "zeros", False),
    ("dynamo", "batch", 3, (4, 6, 5), "bilinear", "border", True),
    ("dynamo", None, 2, (9, 7), "nearest", "zeros", False),
]


def _inputs(nsp, n=2, seed=0):
    shape = (n, 3, 12, 10) if nsp == 2 else (n, 2, 5, 6, 7)
    return image(shape, seed=seed), theta(n, nsp, seed=seed)


def _fused_pair(tmp_path, exporter, dynamic, args, **kw):
    ours = export(WarpToExport(True, **kw), args, str(tmp_path / "ours.onnx"), exporter == "dynamo", dynamic)
    pair = export(WarpToExport(False, **kw), args, str(tmp_path / "pair.onnx"), exporter == "dynamo", dynamic)
    result = surgeon.fuse(pair)
    assert result.report.rewrites, result.report.summary()
    return ours, result.model


@pytest.mark.parametrize("exporter,dynamic,nsp,size,mode,padding,ac", CASES)
def test_export_equals_surgeon_fuse_node_by_node(tmp_path, exporter, dynamic, nsp, size, mode, padding, ac):
    args = _inputs(nsp)
    ours, fused = _fused_pair(tmp_path, exporter, dynamic, args, size=size, mode=mode, padding_mode=padding,
                              align_corners=ac)
    assert signature(ours) == signature(fused)
    node, = custom_nodes(ours)
    assert node.op_type == "FusedGridSample" and {o.domain: o.version for o in ours.opset_import}["custom.ops"] == 1
    types = {a.name: a.type for a in node.attribute}
    assert types["align_corners"] == AttributeProto.INT
    assert types["mode"] == types["padding_mode"] == AttributeProto.STRING
    static = size != "x" or dynamic != "all"
    assert ("output_size" in types) == static and len(node.input) == (2 if static else 3)
    _runs_like_torch(ours, nsp, mode, padding, ac, size, n=3 if dynamic else 2)


def _runs_like_torch(model, nsp, mode, padding, ac, size, n):
    x, t = _inputs(nsp, n=n, seed=4)
    full = x.shape if size == "x" else x.shape[:2] + tuple(size)
    got = surgeon.run(model, {"x": x.numpy(), "theta": t.numpy()})["y"]
    assert_equals_torch(torch.from_numpy(got), x, t, full, mode, padding, ac)


@pytest.mark.parametrize("exporter,dynamic,ac", [("ts", "all", False), ("dynamo", "batch", True)])
def test_affine_grid_with_another_reader_exports_as_surgeon_fuse_writes_it(tmp_path, exporter, dynamic, ac):
    ours, fused = _fused_pair(tmp_path, exporter, dynamic, _inputs(2), grid_out=True, align_corners=ac)
    assert signature(ours) == signature(fused)
    assert [n.op_type for n in custom_nodes(ours)] == ["AffineGrid"]


@pytest.mark.parametrize("exporter", ["ts", "dynamo"])
def test_float16_exports_float16_nodes(tmp_path, exporter):
    x, t = _inputs(2)
    ours, fused = _fused_pair(tmp_path, exporter, "batch", (x.half(), t.half()))
    assert declared_types(ours)["y"] == (10, ("N", 3, 12, 10))  # FLOAT16
    if exporter == "ts":  # dynamo's pair casts theta to float32 and back, a Cast pair surgeon keeps
        assert signature(ours) == signature(fused)
    else:
        node, = custom_nodes(ours)
        assert list(node.input) == ["x", "theta"]


@pytest.mark.parametrize("exporter", ["ts", "dynamo"])
def test_sizes_from_x_shape_stay_dynamic(tmp_path, exporter):
    """x.size() with dynamic H, W: the size input is Shape(x), as surgeon fuse writes it (the
    dynamo exporter fixes H, W of torch's own pair, so there is no fused pair to compare)."""
    model = export(WarpToExport(True), _inputs(2), str(tmp_path / "m.onnx"), exporter == "dynamo", "all")
    shape, node = [n for n in model.graph.node if n.op_type != "Constant"]
    assert shape.op_type == "Shape" and list(shape.input) == ["x"] and len(shape.attribute) == 0
    assert list(node.input) == ["x", "theta", shape.output[0]] and "output_size" not in {a.name for a in node.attribute}
    assert declared_types(model)["y"] == (1, ("N", 3, "H", "W"))
    for n, h, w in ((1, 5, 4), (3, 17, 9)):
        x, t = image((n, 3, h, w)), theta(n, 2)
        got = surgeon.run(model, {"x": x.numpy(), "theta": t.numpy()})["y"]
        assert_equals_torch(torch.from_numpy(got), x, t, x.shape)


class ComputedSizeWarp(torch.nn.Module):
    def forward(self, x, theta):
        import surgeon_ops.torch as st

        return st.fused_grid_sample(x, theta, [x.shape[0], x.shape[1], x.shape[2] // 2, x.shape[3] + 1])


@pytest.mark.parametrize("exporter", ["ts", "dynamo"])
def test_computed_sizes_export_a_size_input_that_runs(tmp_path, exporter):
    model = export(ComputedSizeWarp(), _inputs(2), str(tmp_path / "m.onnx"), exporter == "dynamo", "all")
    node, = custom_nodes(model)
    assert len(node.input) == 3
    x, t = image((3, 3, 14, 9)), theta(3, 2)
    got = surgeon.run(model, {"x": x.numpy(), "theta": t.numpy()})["y"]
    assert_equals_torch(torch.from_numpy(got), x, t, (3, 3, 7, 10))


def test_float64_is_refused_with_a_clear_error(tmp_path):
    x, t = _inputs(2)
    with pytest.raises(Exception, match="float32 or float16"):
        export(WarpToExport(True), (x.double(), t.double()), str(tmp_path / "m.onnx"), True)


def test_translation_table_exports_an_exported_program(tmp_path):
    import surgeon_ops.torch as st

    x, t = _inputs(2)
    dims = {"x": {0: torch.export.Dim("N"), 2: torch.export.Dim("H")}, "theta": {0: torch.export.Dim("N")}}
    for grid_out in (False, True):
        ep = torch.export.export(WarpToExport(True, grid_out=grid_out), (x, t), dynamic_shapes=dims)
        model = export(ep, (x, t), str(tmp_path / "ep.onnx"), True, custom_translation_table=st.onnx_translation_table)
        node, = custom_nodes(model)
        assert node.op_type == ("AffineGrid" if grid_out else "FusedGridSample")
        assert len(node.input) == (2 if grid_out else 3)
        xs, ts = image((3, 3, 7, 10)), theta(3, 2)
        got = surgeon.run(model, {"x": xs.numpy(), "theta": ts.numpy()})["y"]
        assert_equals_torch(torch.from_numpy(got), xs, ts, xs.shape)


class GridOfX(torch.nn.Module):
    def forward(self, x, theta):
        import surgeon_ops.torch as st

        return st.affine_grid(theta, x.size())


def test_affine_grid_output_has_theta_type_and_x_dims(tmp_path):
    x, t = _inputs(2)
    model = export(GridOfX(), (x.half(), t), str(tmp_path / "g.onnx"), False, "all")
    assert [n.op_type for n in model.graph.node] == ["Shape", "AffineGrid"]
    assert declared_types(model)["y"] == (1, ("N", "H", "W", 2))  # FLOAT: theta's type, not x's


class StrictOnly(torch.nn.Module):
    def forward(self, x, theta):
        import surgeon_ops.torch as st

        if not torch.compiler.is_dynamo_compiling():  # fails the exporter's first, non-strict trace
            raise RuntimeError("only a dynamo trace gets here")
        return st.fused_grid_sample(x, theta, x.size(), "bicubic")


def test_the_exporters_strict_retry_writes_the_node_too(tmp_path):
    """torch.onnx.export retries a failed non-strict trace with dynamo, which folds
    torch.onnx.is_in_onnx_export() to False and skips torch.onnx.ops.symbolic by default."""
    model = export(StrictOnly(), _inputs(2), str(tmp_path / "m.onnx"), True, "batch")
    node, = custom_nodes(model)
    assert node.op_type == "FusedGridSample" and list(node.input) == ["x", "theta"]
    assert declared_types(model)["y"] == (1, ("N", 3, 12, 10))
