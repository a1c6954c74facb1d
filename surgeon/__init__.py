"""surgeon: post-export ONNX graph surgery.

Library use::

    import surgeon
    result = surgeon.fuse("model.onnx", "model.fused.onnx")
    print(result.report.summary())

Pattern plugins subclass :class:`Pattern`; see docs/plugins.md. Which plugins a call uses is a
:class:`PluginSet` passed as ``plugins=`` (default: the installed ones).
"""

from .api import FuseResult, ValidateOptions, fuse, inspect, run
from .attrs import make_attribute, make_attributes
from .customop import CustomOp
from .errors import SurgeonError
from .graph import BackWalk, Node
from .lowering import sample_by_gathers
from .plugins import PluginSet
from .rewrite.context import MatchContext, RewriteContext
from .rewrite.match import Match, Refusal, refuse
from .rewrite.pattern import Pattern
from .rewrite.report import Report
from .rewrite.template import Const, TemplateError, match_template
from .unfuse import UnfuseResult, unfuse
from .validate import ValidationReport, validate

__all__ = [
    "fuse", "inspect", "run", "validate", "unfuse", "FuseResult", "UnfuseResult", "ValidateOptions", "Report",
    "ValidationReport",
    "Pattern", "Match", "Refusal", "refuse", "MatchContext", "RewriteContext", "Node", "CustomOp", "PluginSet",
    "make_attribute", "make_attributes", "SurgeonError", "Const", "match_template", "TemplateError",
    "sample_by_gathers", "BackWalk",
]
