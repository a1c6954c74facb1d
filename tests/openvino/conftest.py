import numpy as np
import openvino as ov
import pytest
from onnx import helper

import surgeon_ops.openvino

RANKS = {"x": 4, "theta": 3, "size": 1}
F32 = {"INFERENCE_PRECISION_HINT": "f32"}


def ranked(model, **ranks):
    """The model with every input's rank given: OpenVINO's CPU plugin compiles no input of unknown
    rank, which the onnxruntime tests' models leave open. A rank gives named dims; a list, the
    dims themselves (a size input's length, which tells AffineGrid its rank)."""
    for vi in model.graph.input:
        rank = ranks.get(vi.name, RANKS.get(vi.name, 3))
        dims = list(rank) if isinstance(rank, (list, tuple)) else [f"{vi.name}{k}" for k in range(rank)]
        vi.CopyFrom(helper.make_tensor_value_info(vi.name, vi.type.tensor_type.elem_type, dims))
    return model


def compiled(model, core=None, threads=1, **ranks):
    """`model` (a ModelProto) read with the extension and compiled for the CPU in float32."""
    core = core or surgeon_ops.openvino.core()
    read = core.read_model(ranked(model, **ranks).SerializeToString(), b"")
    return core.compile_model(read, "CPU", {**F32, "INFERENCE_NUM_THREADS": threads})


def infer(model, feeds):
    """A compiled model's first output, run asynchronously: OpenVINO 2026.4's CPU plugin loses a
    node's run-time error in a synchronous infer() on one thread (its own Reshape's too: the
    output is left as it was), and reports it from wait()."""
    request = model.create_infer_request()
    request.start_async(feeds)
    request.wait()
    return np.array(request.get_output_tensor(0).data, copy=True)


def run(model, core=None, threads=1, **feeds):
    """The model's first output for `feeds`."""
    ranks = {k: (list(np.shape(v)) if k == "size" else np.ndim(v)) for k, v in feeds.items()}
    return infer(compiled(model, core, threads, **ranks), feeds)


@pytest.fixture(scope="session")
def core() -> ov.Core:
    return surgeon_ops.openvino.core()
