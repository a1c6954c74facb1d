"""surgeon_ops.tensorrt: the TensorRT plugins for the custom ops, over the project's CUDA kernels.

    import surgeon_ops.tensorrt as st
    st.register()          # before parsing a model or deserialising an engine
    # then parse a file written by `surgeon fuse IN OUT --target tensorrt` as usual

``profile`` (plain data, no TensorRT) is what ``fuse --target tensorrt`` writes; ``plugin``
defines the plugins with TensorRT's Python plugin API; README.md maps the contract to them.
Importing this package imports no TensorRT; ``register()`` does.
"""

from __future__ import annotations

from .profile import NAMESPACE, OP_TYPES, VERSION

_registered: dict[str, list[str]] = {}  # namespace -> plugin ids (the API refuses a second definition)


def register(namespace: str = NAMESPACE) -> list[str]:
    """Registers the plugins in TensorRT's plugin registry (once per process and namespace) and
    returns their ids ("surgeon::FusedGridSample", ...)."""
    if namespace not in _registered:
        try:
            import tensorrt as trt
            import tensorrt.plugin as trtp
        except ImportError as exc:
            raise ImportError("surgeon's TensorRT plugins need TensorRT >= 10.6 with its Python plugin API "
                              f"(pip install tensorrt-cu12 or tensorrt-cu13): {exc}") from None
        from .plugin import define

        _registered[namespace] = define(trt, trtp, namespace)
    return list(_registered[namespace])


__all__ = ["register", "NAMESPACE", "VERSION", "OP_TYPES"]
