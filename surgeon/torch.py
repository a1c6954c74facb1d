"""surgeon.torch: the fused grid sampler as a torch operator (see surgeon_ops.torch).

Not imported by `import surgeon`: it needs torch and registers operators on import."""

import surgeon_ops.torch as _impl
from surgeon_ops.torch import *  # noqa: F401,F403
from surgeon_ops.torch import __all__  # noqa: F401


def __getattr__(name):  # onnx_translation_table, loaded on first use
    return getattr(_impl, name)
