"""lint/tensorrt/: what TensorRT will do with a model, from what is known of its ONNX parser
(``facts.py``: no probe, TensorRT need not be installed): the ops it refuses (``ops.py``), the
plugins a model's custom ops need (``plugins.py``) and the sampling modes it runs otherwise
(``sampling.py``).

May import: ``lint/`` (the report, the context) only.
"""
