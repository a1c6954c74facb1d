"""The custom.ops contract (ops/OPS.md) implemented: ``custom.ops::FusedGridSample`` and
``custom.ops::AffineGrid`` for every runtime, in one place (README.md here has the map).

Importing the package loads nothing: ``surgeon_ops.kernels`` (numpy reference, C++/CUDA)
needs neither onnx nor surgeon; ``surgeon_ops.node_kernels.CUSTOM_OPS`` is what the built-in
patterns register with surgeon.
"""
