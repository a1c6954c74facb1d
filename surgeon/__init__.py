"""surgeon: post-export ONNX graph surgery.

Library use::

    import surgeon
    result = surgeon.fuse("model.onnx", "model.fused.onnx")
    print(result.report.summary())

Pattern plugins subclass :class:`Pattern`; see docs/plugins.md. Which plugins a call uses is a
:class:`PluginSet` passed as ``plugins=`` (default: the installed ones). Errors are
:class:`SurgeonError` and its kinds (docs/errors.md); notes and warnings are logged under the
``surgeon`` logger (silent unless the application configures logging).
"""

import logging as _logging

from .api import FuseResult, ValidateOptions, fuse, inspect, run
from .rewrite.customop import CustomOp
from .errors import (ArgumentTypeError, CannotWriteError, InvalidArgumentError, InvalidModelError, PluginError,
                     SurgeonError, ValidationFailed)
from .graph import BackWalk, Node, computing
from .deploy.lowering import sample_by_gathers
from .rewrite.plugins import PluginSet
from .rewrite.context import MatchContext, RewriteContext
from .rewrite.match import NEAR_MISS, NOT_MINE, Match, Refusal, not_mine, refuse
from .rewrite.pattern import Pattern
from .rewrite.report import Report
from .rewrite.template import Const, TemplateError, match_template
from .io.save import save
from .deploy.unfuse import UnfuseResult, unfuse
from .validate.check import ValidationReport, validate

# A library logs; the application decides where it goes (nothing is printed unless it configures logging).
_logging.getLogger(__name__).addHandler(_logging.NullHandler())

__all__ = [
    "fuse", "inspect", "run", "validate", "unfuse", "save", "FuseResult", "UnfuseResult", "ValidateOptions", "Report",
    "ValidationReport",
    "Pattern", "Match", "Refusal", "refuse", "not_mine", "NEAR_MISS", "NOT_MINE", "MatchContext", "RewriteContext", "Node", "CustomOp", "PluginSet",
    "SurgeonError", "InvalidModelError", "InvalidArgumentError",
    "ArgumentTypeError", "CannotWriteError", "ValidationFailed", "PluginError", "Const", "match_template", "TemplateError",
    "sample_by_gathers", "BackWalk", "computing",
]


_SUFFIXED = ("make_attribute", "make_attributes")


def __getattr__(name: str):
    # The suffixed attribute builders (align_corners_i=0), kept for one release (until 0.2).
    if name in _SUFFIXED:
        import warnings

        from .graph import attrs

        warnings.warn(f"surgeon.{name} is deprecated (until 0.2): attributes are written by value, op.X(alpha=0.5), "
                      "ctx.add_node(..., alpha=0.5)", DeprecationWarning, stacklevel=2)
        return getattr(attrs, name)
    raise AttributeError(f"module 'surgeon' has no attribute {name!r}")
