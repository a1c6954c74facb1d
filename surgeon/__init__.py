"""surgeon: post-export ONNX graph surgery.

Library use::

    import surgeon
    result = surgeon.fuse("model.onnx", "model.fused.onnx")
    print(result.report.summary())

Pattern plugins subclass :class:`Pattern`; see docs/plugins.md.
"""

from .api import FuseResult, fuse, inspect
from .attrs import make_attribute, make_attributes
from .customop import CustomOp
from .errors import SurgeonError
from .graph import Node
from .rewrite.context import MatchContext, RewriteContext
from .rewrite.pattern import Match, Pattern, Refusal, refuse
from .rewrite.report import Report
from .runtime import register_kernel, run
from .validate import ValidationReport, validate
from .rewrite.template import Const, TemplateError, match_template

__all__ = [
    "fuse", "inspect", "FuseResult", "Report",
    "Pattern", "Match", "Refusal", "refuse", "MatchContext", "RewriteContext", "Node",
    "make_attribute", "make_attributes", "SurgeonError", "CustomOp",
    "Const", "match_template", "TemplateError",
    "run", "validate", "ValidationReport", "register_kernel",
]
