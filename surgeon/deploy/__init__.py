"""deploy/: the model an engine gets. ``unfuse`` (every custom node written back as standard
ONNX with its plugin's ``to_standard``), model-local function bodies for custom ops
(``functions.py``), the default-domain opset read and converted (``opsets.py``), standard nodes
carried across a conversion as the plugin op equal to them (``carry.py``) and the lowerings
that write a standard node at an older opset by hand (``lowering/``).

May import: ``rewrite/`` (the driver unfuse runs on, shapes, the plugin set), ``io/``,
``graph/``, ``runtime/`` (the domains onnxruntime runs) and the top-level helpers; nothing in
``rewrite/``, ``runtime/``, ``io/`` or ``graph/`` imports it.
"""
