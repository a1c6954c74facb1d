"""The OpenVINO extension against ops/OPS.md: every attribute, both arities, float32 and float16,
2-D and 3-D. It runs the kernels' own code (their static archive), so it must give
surgeon_ops.kernels' bits exactly (which the kernel tests compare with torch)."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import openvino as ov
import pytest

import surgeon_ops.kernels as K
import surgeon_ops.openvino

from ..builders import F16, fused_grid_sample_case_model, fused_grid_sample_model, with_empty_size_input
from ..kernels.cases import COMBOS, cases
from ..ort.contract_cases import affine_grid_cases
from .conftest import compiled, infer, run


@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS)
@pytest.mark.parametrize("size_input", [False, True], ids=["output_size", "size_input"])
def test_fused_grid_sample_gives_the_kernels_bits(core, nsp, mode, padding, ac, size_input):
    model = compiled(fused_grid_sample_case_model(nsp, mode, padding, ac, size_input, (3,) * nsp), core, x=nsp + 2)
    for x, theta, out in cases(nsp)[:4]:
        theta = np.ascontiguousarray(np.broadcast_to(theta, (x.shape[0],) + theta.shape[1:]))
        feeds = dict(x=x, theta=theta)
        if size_input:
            feeds["size"] = np.array(x.shape[:2] + tuple(out), np.int64)
        else:  # the output size is the node's: one compiled model per size
            model = compiled(fused_grid_sample_case_model(nsp, mode, padding, ac, False, out), core, x=nsp + 2)
        np.testing.assert_array_equal(infer(model, feeds), K.fused_grid_sample(x, theta, out, mode, padding, ac))


@pytest.mark.parametrize("nsp", [2, 3])
def test_float16(core, nsp):
    x, theta, out = cases(nsp, seed=3)[0]
    x, theta = x.astype(np.float16), theta.astype(np.float16)
    for mode in ("bilinear", "nearest") + (("bicubic",) if nsp == 2 else ()):
        y = run(fused_grid_sample_case_model(nsp, mode, "border", 0, False, out, F16), core, x=x, theta=theta)
        assert y.dtype == np.float16
        np.testing.assert_array_equal(y, K.fused_grid_sample(x, theta, out, mode, "border", 0))


@pytest.mark.parametrize("nsp", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("size_input", [False, True], ids=["output_size", "size_input"])
def test_affine_grid_gives_the_kernels_bits(core, nsp, dtype, size_input):
    for model, feeds, want in affine_grid_cases(nsp, dtype, size_input):
        grid = run(model, core, **feeds)
        assert grid.dtype == dtype
        np.testing.assert_array_equal(grid, want)


def test_a_skipped_size_input_is_absent(core):
    """A node that names its optional size input "" reads the output size from the attribute."""
    x, theta, out = cases(2)[0]
    model = with_empty_size_input(fused_grid_sample_model(output_size=list(out)))
    np.testing.assert_array_equal(run(model, core, x=x, theta=theta), K.fused_grid_sample(x, theta, out))


def test_constant_size_gives_static_shapes(core):
    """A size the model holds as a constant (or OpenVINO folds to one) gives the output static
    dims at compile time; a size fed at run time leaves them dynamic and sets them per run."""
    from onnx import numpy_helper

    model = fused_grid_sample_model(size_input=True)
    model.graph.input.pop()  # size becomes an initializer
    model.graph.initializer.append(numpy_helper.from_array(np.array([2, 3, 6, 5], np.int64), "size"))
    read = core.read_model(compiled_model_bytes(model), b"")
    assert str(read.outputs[0].partial_shape) == "[2,3,6,5]"
    fed = core.read_model(compiled_model_bytes(fused_grid_sample_model(size_input=True)), b"")
    shape = fed.outputs[0].partial_shape
    assert shape.rank.get_length() == 4 and shape[2].is_dynamic and shape[3].is_dynamic


def compiled_model_bytes(model):
    from .conftest import ranked

    return ranked(model).SerializeToString()


def test_empty_outputs(core):
    x, theta = np.ones((2, 3, 4, 4), np.float32), np.tile(np.eye(2, 3, dtype=np.float32), (2, 1, 1))
    assert run(fused_grid_sample_model(output_size=[0, 5]), core, x=x, theta=theta).shape == (2, 3, 0, 5)
    assert run(fused_grid_sample_model(output_size=[3, 5]), core, x=x[:0], theta=theta[:0]).shape == (0, 3, 3, 5)


def test_several_cores_and_threads_in_one_process():
    """The extension loads into any number of Cores (added again to the same one too), and
    models compiled from them run side by side, from several threads."""
    x, theta, out = cases(2)[0]
    want = K.fused_grid_sample(x, theta, out)
    model = fused_grid_sample_model(output_size=list(out))
    cores = [surgeon_ops.openvino.core() for _ in range(4)]
    plain = ov.Core()
    plain.add_extension(surgeon_ops.openvino.library_path())
    plain.add_extension(surgeon_ops.openvino.library_path())
    cores.append(plain)
    models_ = [compiled(model, c, threads=2) for c in cores]
    with ThreadPoolExecutor(8) as pool:  # each thread its own infer request, two per compiled model at once
        results = list(pool.map(lambda i: infer(models_[i % len(models_)], dict(x=x, theta=theta)), range(8)))
    for y in results:
        np.testing.assert_array_equal(y, want)


def test_ir_round_trip(core, tmp_path):
    """The operations are OpenVINO operations: a model holding them is saved as IR and read back
    (attributes through visit_attributes) with the same results."""
    x, theta, out = cases(2)[0]
    model = fused_grid_sample_model(mode="nearest", padding_mode="reflection", align_corners=1, output_size=list(out))
    read = core.read_model(compiled_model_bytes(model), b"")
    ov.save_model(read, tmp_path / "m.xml")
    again = core.compile_model(core.read_model(tmp_path / "m.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    np.testing.assert_array_equal(again(dict(x=x, theta=theta))[0],
                                  K.fused_grid_sample(x, theta, out, "nearest", "reflection", 1))


def test_one_thread_and_two_give_the_same_bits(core):
    rng = np.random.default_rng(0)
    x = rng.random((2, 3, 96, 80), dtype=np.float32)
    theta = np.tile(np.array([[0.9, 0.2, 0.05], [-0.15, 0.95, -0.1]], np.float32), (2, 1, 1))
    model = fused_grid_sample_model(output_size=[64, 72])
    y1 = compiled(model, core, threads=1)(dict(x=x, theta=theta))[0]
    y2 = compiled(model, core, threads=2)(dict(x=x, theta=theta))[0]
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(y1, K.fused_grid_sample(x, theta, (64, 72)))
