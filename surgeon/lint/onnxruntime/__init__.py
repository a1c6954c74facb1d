"""lint/onnxruntime/: what onnxruntime will do with a model: the ops and domains it has
(probed from the installed build, ``probe.py``), the nodes it cannot run (``ops.py``) and the
custom domains no library registers (``domains.py``).

May import: ``lint/`` (the report, the context), ``graph/``, ``errors``.
"""
