import onnxruntime as ort
import pytest

import surgeon_ops.ort


def new_session(model, threads=1, **kwargs):
    """A plain onnxruntime session with the op library (CPU), `threads` intra-op threads."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.log_severity_level = 3
    return surgeon_ops.ort.session(model, sess_options=opts, **kwargs)


@pytest.fixture(scope="session")
def library() -> str:
    return surgeon_ops.ort.library_path()
