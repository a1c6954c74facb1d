"""lint/openvino/: what OpenVINO will do with a model: reading it at all (``model.py``,
``sniff.py``), the ops its frontend lacks (``ops.py``, probed by ``probe.py``) and outputs its CPU
plugin computes at lower precision (``precision.py``).

May import: ``lint/`` (the report, the context), ``lint/onnxruntime`` (the probe's pattern),
``runtime/`` (the OpenVINO runner), ``validate/`` (the draws), ``io/``, ``graph/``, ``errors``.
"""
