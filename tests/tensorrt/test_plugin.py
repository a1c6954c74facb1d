"""The TensorRT plugins without TensorRT: they register as the plugin API requires, the parser
finds them from what `fuse --target tensorrt` writes, their shape functions give the contract's
dims, and their enqueue, run on the host build of the CUDA source, equals the numpy reference."""

import sys
import types

import numpy as np
import pytest
from onnx import helper

import surgeon_ops.tensorrt as st
from surgeon_ops.kernels import affine_grid, fused_grid_sample
from surgeon_ops.tensorrt import dims, profile

from .profiles import profile_node, thetas
from .stand_in import Tensor, TensorDesc

MODES = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")


def test_registers_under_the_profile(trt):
    assert trt.ids == ["surgeon::FusedGridSample", "surgeon::AffineGridPlugin"]
    fused = trt.trtp.registry[("FusedGridSample", "1", "surgeon")]
    assert list(fused.attrs) == ["align_corners", "mode", "padding_mode", "output_size"]
    assert fused.tensors == ["x", "theta"] and fused.impl and fused.autotune
    grid = trt.trtp.registry[("AffineGridPlugin", "1", "surgeon")]
    assert list(grid.attrs) == ["align_corners", "output_size"] and grid.impl and grid.autotune
    assert "." not in profile.NAMESPACE and profile.VERSION == "1"


def test_register_once_per_process(monkeypatch):
    """surgeon_ops.tensorrt.register() imports TensorRT and defines the plugins once."""
    from .stand_in import Stand_in

    fake = Stand_in()
    trt_module = types.ModuleType("tensorrt")
    trt_module.float32, trt_module.float16, trt_module.plugin = fake.trt.float32, fake.trt.float16, fake.trtp
    monkeypatch.setitem(sys.modules, "tensorrt", trt_module)
    monkeypatch.setitem(sys.modules, "tensorrt.plugin", fake.trtp)
    monkeypatch.setattr(st, "_registered", {})
    assert st.register() == st.register() == ["surgeon::FusedGridSample", "surgeon::AffineGridPlugin"]
    assert len(fake.trtp.registry) == 2


def test_without_tensorrt_register_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorrt", None)
    monkeypatch.setattr(st, "_registered", {})
    with pytest.raises(ImportError, match="tensorrt-cu12 or tensorrt-cu13"):
        st.register()


def test_a_node_without_the_lookup_keys_finds_no_plugin(trt):
    node = helper.make_node("FusedGridSample", ["x", "theta"], ["y"], domain="custom.ops", output_size=[4, 4])
    with pytest.raises(LookupError):
        trt.parse(node)


@pytest.mark.parametrize("x_dims, size", [(("N", 3, 16, 12), [8, 6]), ((2, 1, 4, 5, 6), [3, 4, 5])])
def test_shape_function_gives_the_contracts_dims(trt, x_dims, size):
    k = len(size)
    plugin, attrs = trt.parse(profile_node(align_corners=1, mode="nearest", padding_mode="border", output_size=size))
    out = plugin.register(TensorDesc(x_dims, trt.trt.float16), TensorDesc((x_dims[0], k, k + 1), trt.trt.float16),
                          **attrs)
    assert out.shape_expr == (x_dims[0], x_dims[1], *size) and out.dtype == trt.trt.float16


def test_grid_shape_function(trt):
    plugin, attrs = trt.parse(profile_node("AffineGrid", align_corners=0, output_size=[7, 9]))
    out = plugin.register(TensorDesc(("N", 2, 3), trt.trt.float32), **attrs)
    assert out.shape_expr == ("N", 7, 9, 2) and out.dtype == trt.trt.float32


@pytest.mark.parametrize("attrs, message", [
    (dict(mode="cubicle", padding_mode="zeros", output_size=[4, 4]), "unknown mode"),
    (dict(mode="bilinear", padding_mode="wrap", output_size=[4, 4]), "unknown padding_mode"),
    (dict(mode="bilinear", padding_mode="zeros", output_size=[4, 4, 4]), "output_size"),
    (dict(mode="bilinear", padding_mode="zeros", output_size=[4, 4], align_corners=2), "align_corners"),
])
def test_bad_attributes_fail_the_build(trt, attrs, message):
    attrs.setdefault("align_corners", 0)
    plugin, fields = trt.parse(profile_node(**attrs))
    with pytest.raises(ValueError, match=message):
        plugin.register(TensorDesc((1, 1, 4, 4), trt.trt.float32), TensorDesc((1, 2, 3), trt.trt.float32), **fields)


def test_bicubic_volumes_are_refused(trt):
    plugin, fields = trt.parse(profile_node(align_corners=0, mode="bicubic", padding_mode="zeros",
                                            output_size=[2, 2, 2]))
    with pytest.raises(ValueError, match="2-D only"):
        plugin.register(TensorDesc((1, 1, 2, 2, 2), trt.trt.float32), TensorDesc((1, 3, 4), trt.trt.float32),
                        **fields)


def run_fused(trt, node, x, theta):
    plugin, attrs = trt.parse(node)
    dtype = trt.trt.float16 if x.dtype == np.float16 else trt.trt.float32
    desc = plugin.register(TensorDesc(x.shape, dtype), TensorDesc(theta.shape, dtype), **attrs)
    y = np.full(desc.shape_expr, np.nan, x.dtype)
    plugin.enqueue([Tensor(x, dtype), Tensor(theta, dtype)], attrs, [Tensor(y, dtype)])
    return y


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("ac", (0, 1))
def test_enqueue_equals_the_reference(trt, host_cuda, mode, padding, ac):
    rng = np.random.default_rng(hash((mode, padding, ac)) % 2**32)
    x = rng.uniform(-1, 1, (2, 3, 7, 6)).astype(np.float32)
    theta = thetas(2, 2, rng)
    y = run_fused(trt, profile_node(align_corners=ac, mode=mode, padding_mode=padding, output_size=[5, 8]), x, theta)
    want = fused_grid_sample(x, theta, [5, 8], mode, padding, bool(ac), backend="numpy")
    np.testing.assert_allclose(y, want, atol=2e-5, rtol=1e-5)


def test_enqueue_volumes_half_and_theta_broadcast(trt, host_cuda):
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (2, 2, 4, 5, 6)).astype(np.float16)
    theta = thetas(1, 3, rng).astype(np.float16)  # one matrix for both items
    y = run_fused(trt, profile_node(align_corners=0, mode="bilinear", padding_mode="border", output_size=[3, 4, 5]),
                  x, theta)
    want = fused_grid_sample(x, theta, [3, 4, 5], "bilinear", "border", False, backend="numpy")
    np.testing.assert_allclose(y.astype(np.float32), want.astype(np.float32), atol=3e-3)


def test_empty_batch_writes_nothing(trt, host_cuda):
    y = run_fused(trt, profile_node(align_corners=0, mode="bilinear", padding_mode="zeros", output_size=[3, 3]),
                  np.zeros((0, 1, 4, 4), np.float32), np.zeros((0, 2, 3), np.float32))
    assert y.shape == (0, 1, 3, 3)


def test_grid_enqueue_equals_the_reference(trt, host_cuda):
    rng = np.random.default_rng(5)
    theta = thetas(3, 2, rng)
    plugin, attrs = trt.parse(profile_node("AffineGrid", align_corners=1, output_size=[4, 7]))
    desc = plugin.register(TensorDesc(theta.shape, trt.trt.float32), **attrs)
    grid = np.full(desc.shape_expr, np.nan, np.float32)
    plugin.enqueue([Tensor(theta, trt.trt.float32)], attrs, [Tensor(grid, trt.trt.float32)])
    np.testing.assert_allclose(grid, affine_grid(theta, [4, 7], True, backend="numpy"), atol=1e-6)


def test_attribute_decoding():
    assert dims.text(b"zeros\0") == dims.text("zeros\x00") == "zeros"
    assert dims.flag(np.array([1], np.int32)) == dims.flag(1) == 1
    assert dims.mode("linear\0") == dims.mode("bilinear") and dims.mode("cubic") == dims.mode("bicubic")
