"""Deployment lint: what an engine will do with a model, node by node, before you deploy it.

``lint(model, target)`` returns a :class:`LintReport`: one :class:`Hazard` per node an engine
would refuse or (worse) run differently, each naming the node, what the engine will do and the
fix. The rules are generic ONNX facts about an engine (``ENGINES``); one small module per rule
family, one folder per engine (``onnxruntime/``, ``openvino/``, ``tensorrt/``); ``run.py``
asks each, ``context.py`` and ``view.py`` are what they share. Nothing here knows what a pattern
rewrites.

May import: ``graph/``, ``io/``, ``rewrite/`` (the plugin set, shapes), ``deploy/`` (the opset
conversion), ``runtime/`` (OpenVINO), ``validate/`` (the draws), ``errors``, ``reportfields``.
"""

from .report import Hazard, LintReport
from .run import ENGINES, lint

__all__ = ["lint", "ENGINES", "Hazard", "LintReport"]
