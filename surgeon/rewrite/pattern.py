"""What a pattern plugin is: how it finds its chain, checks it, and what it writes instead."""

from __future__ import annotations

import inspect
import re
import warnings
from typing import Callable, ClassVar, Mapping, Sequence

from .customop import CustomOp, Draw, Kernel
from ..graph import Node
from .match import Match, Refusal
from .replacement import write_replacement
from .template import TemplateError, match_template, trace

# Parameters a replacement may name besides the match's values.
_CONTEXT_PARAMETERS = ("ctx", "match")


_PARAMETERS: dict = {}  # replacement function -> its parameters after ``op``


def _parameters(fn: Callable) -> list[str]:
    """The names a replacement function takes after ``op``; read once per function (reading a
    signature costs more than writing the node)."""
    try:
        found = _PARAMETERS.get(fn)
    except TypeError:  # an unhashable callable: read it every time
        return list(inspect.signature(fn).parameters)[1:]
    if found is None:
        found = _PARAMETERS[fn] = list(inspect.signature(fn).parameters)[1:]
    return found


def _kebab(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


class Pattern:
    """Base class for pattern plugins. Subclass it and fill in what applies.

    - ``name``: what ``--only`` / ``--skip`` and reports use (default: the class name in kebab case).
    - ``anchor_ops``: op types that can end a match, as ``"Op"`` or ``"domain::Op"``; the driver
      only offers these nodes to ``match`` (default: the template's last op; ``None``: every node;
      ``()``: none, for a plugin that only brings ``kernels``/``ops``).
    - ``template``: a static function over ``op.X(...)`` describing the chain (see
      ``surgeon.rewrite.template``); the default ``match`` uses it.
    - ``replacement``: a static function over ``op.X(...)`` writing what replaces the chain; the
      default ``rewrite`` uses it (see ``surgeon.rewrite.replacement``).
    - ``domains``: opset versions of the custom domains the pattern writes, added to the model.
    - ``ops``: the custom ops it writes, as ``CustomOp(domain, op_type, kernel=fn)`` with
      ``fn(inputs, attrs, device="cpu") -> list of arrays`` (``validate`` and ``run`` use it), and
      whatever else a plugin brings for an op (a runtime library, a standard-ONNX form for
      ``unfuse``, a function body). ``kernels = {(domain, op_type): fn}`` is the older spelling,
      read with a DeprecationWarning until 0.2.
    - ``draw_inputs``: ``{input index: draw(shape, dtype, rng) -> array}`` for inputs of the nodes
      it writes that ``validate`` should draw its way (rows near an epsilon, gates far negative),
      as ``CustomOp.draw_inputs`` does for a custom op; the draw's docstring names it in reports.
    - ``targets``: the names ``fuse --target`` may give besides the engines' (``surgeon.lint.ENGINES``,
      which every pattern is asked for too), such as other output forms; ``match`` reads the one
      given as ``ctx.options["target"]``. The command line refuses any other name.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    anchor_ops: ClassVar[tuple[str, ...] | None] = None
    template: ClassVar[Callable | None] = None
    replacement: ClassVar[Callable | None] = None
    domains: ClassVar[dict[str, int]] = {}
    kernels: ClassVar[dict[tuple[str, str], Kernel]] = {}
    ops: ClassVar[Sequence[CustomOp]] = ()
    draw_inputs: ClassVar[Mapping[int, Draw]] = {}
    targets: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("name"):
            cls.name = _kebab(cls.__name__)

    def match(self, ctx, node: Node) -> Match | Refusal | None:
        """Recognise the chain ending at ``node``: a Match, a Refusal (near miss) or None."""
        return match_template(self, ctx, node)

    def check(self, ctx, match: Match) -> str | None:
        """Last word before rewriting: a reason to refuse, or None."""
        return None

    def rewrite(self, ctx, match: Match) -> None:
        """Write the replacement (``ctx.add_node``, or the ``replacement`` function); it must
        produce ``match.outputs``."""
        values = dict(match.values, ctx=ctx, match=match)
        write_replacement(self.replacement, ctx, Match(match.anchor, match.nodes, match.outputs, values),
                          _parameters(self.replacement))

    def custom_ops(self) -> list[CustomOp]:
        """``ops`` (and the deprecated ``kernels``) as one list of CustomOp."""
        found = {op.key: op for op in self.ops}
        for key, fn in self.kernels.items():
            found.setdefault(tuple(key), CustomOp(*key, kernel=fn))
        return list(found.values())

    def accepts(self, node: Node) -> bool:
        """Whether ``node`` may end a match. The driver only offers nodes of ``anchor_types()``:
        an override can narrow that, not widen it."""
        anchors = self.anchor_types()
        if anchors is None:
            return True
        domain = "" if node.domain == "ai.onnx" else node.domain
        return (domain, node.op_type) in anchors

    def anchor_types(self) -> set[tuple[str, str]] | None:
        """``{(domain, op_type)}`` of the nodes that may end a match; None for every node."""
        if "_anchors" not in self.__dict__:
            self.__dict__["_anchors"] = self._anchor_set()
        return self.__dict__["_anchors"]

    def _anchor_set(self):
        specs = self.anchor_ops
        if specs is None and self.template is not None:
            last = trace(self.template).anchor  # a template's last op is its anchor
            specs = (f"{last.domain}::{last.op_type}" if last.domain else last.op_type,)
        if specs is None:
            return None
        anchors = set()
        for spec in specs:
            domain, _, op = spec.rpartition("::")
            anchors.add(("" if domain == "ai.onnx" else domain, op))
        return anchors


def check_definition(pattern: Pattern) -> None:
    """Raise ``TemplateError`` with one line when a pattern is malformed: caught when its plugin
    loads, not as a near miss on every node."""
    cls = type(pattern)
    if not isinstance(pattern.name, str) or not pattern.name:
        raise TemplateError("has no name")
    for hook in ("template", "replacement"):
        raw = inspect.getattr_static(cls, hook, None)
        if raw is None:
            continue
        if not isinstance(raw, staticmethod):
            raise TemplateError(f"{hook} must be a @staticmethod whose first parameter is op")
    anchors_nothing = pattern.anchor_ops is not None and len(pattern.anchor_ops) == 0  # brings ops only
    if cls.match is Pattern.match and pattern.template is None and not anchors_nothing:
        raise TemplateError("defines neither match() nor a template")
    if cls.rewrite is Pattern.rewrite and pattern.replacement is None and not anchors_nothing:
        raise TemplateError("defines neither rewrite() nor a replacement")
    for hook, arity in (("match", 2), ("check", 2), ("rewrite", 2)):
        try:
            inspect.signature(getattr(pattern, hook)).bind(*([None] * arity))
        except TypeError:
            raise TemplateError(f"{hook}() must take (ctx, {'node' if hook == 'match' else 'match'})") from None
    bound: set[str] = set()
    if pattern.template is not None:
        template = trace(pattern.template)
        bound = set(template.variables) | {n.name for n in template.nodes if n.name}
        bound |= {v.name for n in template.nodes for v in n.outputs if v.name}
        pattern.anchor_types()
    if pattern.replacement is not None and pattern.template is not None and cls.match is Pattern.match:
        params = list(inspect.signature(pattern.replacement).parameters.values())[1:]
        for p in params:
            if p.name not in bound and p.name not in _CONTEXT_PARAMETERS and p.default is inspect.Parameter.empty:
                raise TemplateError(f"replacement parameter {p.name!r} is not a template variable, _name or _outputs")
    _check_tables(pattern)


def _check_tables(pattern: Pattern) -> None:
    if pattern.anchor_ops is not None and not all(isinstance(a, str) for a in pattern.anchor_ops):
        raise TemplateError("anchor_ops must be a tuple of 'Op' or 'domain::Op' strings")
    if not isinstance(pattern.domains, dict) or not all(
            isinstance(d, str) and isinstance(v, int) and not isinstance(v, bool) for d, v in pattern.domains.items()):
        raise TemplateError("domains must be a dict {domain: version int}")
    if not isinstance(pattern.kernels, dict) or not all(
            isinstance(k, tuple) and len(k) == 2 and callable(fn) for k, fn in pattern.kernels.items()):
        raise TemplateError("kernels must be a dict {(domain, op_type): function}")
    if pattern.kernels:
        warnings.warn(f"pattern {pattern.name!r}: kernels = {{...}} is deprecated (read until surgeon 0.2); list "
                      "ops = [surgeon.CustomOp(domain, op_type, kernel=fn)]", DeprecationWarning, stacklevel=2)
    if not all(isinstance(op, CustomOp) for op in pattern.ops):
        raise TemplateError("ops must be a list of surgeon.CustomOp")
    if not isinstance(pattern.draw_inputs, Mapping) or not all(
            isinstance(i, int) and i >= 0 and callable(fn) for i, fn in pattern.draw_inputs.items()):
        raise TemplateError("draw_inputs must be a dict {input index: draw(shape, dtype, rng)}")
    if not isinstance(pattern.targets, tuple) or not all(isinstance(t, str) and t for t in pattern.targets):
        raise TemplateError("targets must be a tuple of names (str)")
