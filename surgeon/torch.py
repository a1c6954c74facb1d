"""Deprecated alias, kept for one release (removed in 0.2): the torch operator lives beside the op
it wraps, as ``surgeon_ops.torch``. Write ``import surgeon_ops.torch as st``.

The engine imports nothing of ``ops/``: ``import surgeon`` does not import this module, and this
module imports nothing when it is imported. The first name asked of it (``st.fused_grid_sample``)
warns with a DeprecationWarning naming the new import and loads ``surgeon_ops.torch``, which
registers the operators (``torch.ops.surgeon.*``) as it always did."""

import importlib as _importlib
import warnings as _warnings

NEW_NAME = "surgeon_ops.torch"


def __getattr__(name):
    if name.startswith("__") and name != "__all__":  # import machinery, copy, pickle: no warning
        raise AttributeError(name)
    _warnings.warn(f"surgeon.torch is deprecated and goes in 0.2: import {NEW_NAME} instead "
                   f"(surgeon.torch.{name} -> {NEW_NAME}.{name})", DeprecationWarning, stacklevel=2)
    return getattr(_importlib.import_module(NEW_NAME), name)
