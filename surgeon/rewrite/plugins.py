"""The plugin set: which patterns and custom ops a call uses, and where each came from.

A value, built once per command (or library call) and passed to ``fuse``, ``inspect``, ``run``,
``validate`` and ``unfuse``: nothing about plugins is process-global. Installed plugins come
from the ``surgeon.patterns`` entry-point group (the built-ins use it too); ``--plugin
module:Name`` adds one that is not installed. When two plugins provide the same pattern name or
the same custom op, using it is an error naming both, unless the user chose: a ``--plugin`` given
explicitly wins over an installed one, and ``prefer`` (``--prefer PACKAGE``) picks a package.
"""

from __future__ import annotations

import importlib
import inspect
import logging
from dataclasses import dataclass, field, replace
from importlib.metadata import entry_points
from typing import Iterable, Sequence

from .customop import CustomOp
from ..errors import ArgumentTypeError, PluginError, SurgeonError
from .pattern import Pattern, check_definition

GROUP = "surgeon.patterns"
log = logging.getLogger("surgeon.plugins")  # the name it has always logged under


@dataclass(frozen=True)
class Origin:
    """Where a plugin came from."""

    package: str
    version: str
    source: str  # "entry point NAME = module:attr", "--plugin module:attr", "given"
    explicit: bool = False  # the user named it for this call

    def __str__(self) -> str:
        return f"{self.label} ({self.source})"

    @property
    def label(self) -> str:
        """The package and version, or the --plugin spec."""
        if self.source.startswith("--plugin"):
            return self.source
        return f"{self.package} {self.version}" if self.version not in ("", "-", "?") else self.package


@dataclass
class Plugin:
    """One pattern, where it came from, and whether this call uses it."""

    pattern: Pattern
    origin: Origin
    enabled: bool = True

    @property
    def name(self) -> str:
        return self.pattern.name

    @property
    def label(self) -> str:
        """The one name reports, logs and errors give the plugin: the installed package and its
        version (``surgeon 0.1.0``); for a pattern not installed (``--plugin``, or passed to the
        call), its class as ``module:Name``."""
        return pattern_label(self.pattern, self.origin)


def pattern_label(pattern: Pattern, origin: Origin | None) -> str:
    """``Plugin.label`` for a pattern and its origin (None: unknown, the class is named)."""
    if origin is not None and origin.source.startswith("entry point"):
        return origin.label
    return f"{type(pattern).__module__}:{type(pattern).__name__}"


@dataclass
class PluginSet:
    plugins: list[Plugin] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # installed plugins that failed to load
    extra_ops: list[CustomOp] = field(default_factory=list)  # given by the caller: they win
    prefer: tuple[str, ...] = ()

    # -- building --------------------------------------------------------------------------

    @classmethod
    def installed(cls, extra: Iterable[str] = (), *, only: Iterable[str] = (), skip: Iterable[str] = (),
                  prefer: Iterable[str] = ()) -> "PluginSet":
        """The installed plugins plus ``extra`` ``module:Name`` specs, selected by name."""
        found = cls(prefer=tuple(prefer))
        for ep in sorted(entry_points(group=GROUP), key=lambda e: (e.dist.name if e.dist else "", e.name)):
            origin = Origin(ep.dist.name if ep.dist else "?", ep.dist.version if ep.dist else "?",
                            f"entry point {ep.name} = {ep.value}")
            try:
                patterns = _as_patterns(ep.load(), ep.value)
                for p in patterns:
                    _checked(p)
            except Exception as exc:  # one broken install must not take the others down
                found.warnings.append(f"plugin {ep.name!r} from package {origin.package!r} not loaded: "
                                      f"{_one_line(exc)}")
                log.warning("%s", found.warnings[-1])
                continue
            found._add(patterns, origin)
        for spec in extra:
            found._add(load_spec(spec), Origin(spec.partition(":")[0], "-", f"--plugin {spec}", explicit=True))
        return found.select(only, skip)

    @classmethod
    def of(cls, patterns: Iterable, *, ops: Sequence[CustomOp] = (), only: Iterable[str] = (),
           skip: Iterable[str] = ()) -> "PluginSet":
        """Exactly these patterns (classes or instances), and ``ops`` over theirs."""
        found = cls(extra_ops=list(ops))
        given = Origin("-", "-", "given", explicit=True)
        for item in patterns:
            try:
                group = _as_patterns(item, repr(item))
            except TypeError as exc:
                raise ArgumentTypeError(f"plugins: {exc}") from None
            for p in group:
                try:
                    _checked(p)
                except Exception as exc:
                    raise PluginError(str(exc), plugin=pattern_label(p, None)) from None
            found._add(group, given)
        return found.select(only, skip)

    def with_ops(self, *ops: CustomOp) -> "PluginSet":
        """A copy in which ``ops`` replace the plugins' own for the same op."""
        return replace(self, plugins=list(self.plugins), extra_ops=[*self.extra_ops, *ops])

    def _add(self, patterns: list[Pattern], origin: Origin) -> None:
        for p in patterns:
            if any(type(q.pattern) is type(p) and q.origin.package == origin.package for q in self.plugins):
                continue  # the same class reached twice (installed, and named with --plugin)
            self.plugins.append(Plugin(p, origin))

    def select(self, only: Iterable[str] = (), skip: Iterable[str] = ()) -> "PluginSet":
        """Enable patterns per ``only`` / ``skip`` (unknown names are errors)."""
        only, skip = list(only), list(skip)
        known = {p.name for p in self.plugins}
        for name in only + skip:
            if name not in known:
                raise PluginError(f"no pattern named {name!r} (installed: {', '.join(sorted(known)) or 'none'})")
        for p in self.plugins:
            p.enabled = (not only or p.name in only) and p.name not in skip
        return self

    # -- using -----------------------------------------------------------------------------

    def enabled(self) -> list[Plugin]:
        """The patterns a fuse uses, one per name; a name two plugins give is an error."""
        chosen: dict[str, Plugin] = {}
        for name in dict.fromkeys(p.name for p in self.plugins if p.enabled):
            chosen[name] = self._choose([p for p in self.plugins if p.name == name and p.enabled],
                                        f"pattern {name!r}", lambda p: p.origin)
        return list(chosen.values())

    def targets(self) -> tuple[str, ...]:
        """The ``fuse --target`` names the enabled patterns declare (``Pattern.targets``)."""
        return tuple(dict.fromkeys(t for p in self.enabled() for t in p.pattern.targets))

    def origin_label(self, pattern_name: str) -> str:
        """Where the pattern of that name comes from, for reports (``Plugin.label``); "" when no
        plugin of this set gives it."""
        offers = [p for p in self.plugins if p.name == pattern_name]
        if not offers:
            return ""
        try:
            chosen = self._choose(offers, f"pattern {pattern_name!r}", lambda p: p.origin)
        except SurgeonError:
            chosen = offers[0]
        return chosen.label

    def domains(self) -> dict[str, int]:
        """Custom domain -> opset version the enabled patterns write; two versions are an error."""
        versions: dict[str, tuple[int, Plugin]] = {}
        for plugin in self.enabled():
            for domain, version in plugin.pattern.domains.items():
                seen = versions.setdefault(domain, (version, plugin))
                if seen[0] != version:
                    raise PluginError(f"domain {domain!r}: pattern {seen[1].name!r} writes version {seen[0]} "
                                       f"and pattern {plugin.name!r} version {version}")
        return {d: v for d, (v, _) in versions.items()}

    def op(self, domain: str, op_type: str) -> CustomOp | None:
        """What the plugins bring for ``domain::op_type`` (None: nothing)."""
        key = (domain or "", op_type)
        given = [op for op in self.extra_ops if op.key == key]
        if given:
            return given[-1]
        offers = [(op, p) for p in self.plugins for op in p.pattern.custom_ops() if op.key == key]
        distinct = list({id(op.kernel) if op.kernel else id(op): (op, p) for op, p in offers}.values())
        if not distinct:
            return None
        return self._choose(distinct, f"op {domain}::{op_type}", lambda item: item[1].origin)[0]

    def op_origin_label(self, domain: str, op_type: str) -> str:
        """The label (``Plugin.label``) of the plugin whose op ``op()`` chooses; "" for an op the
        caller gave (``with_ops``) or none."""
        try:
            chosen = self.op(domain, op_type)
        except SurgeonError:
            return ""
        return next((p.label for p in self.plugins if any(op is chosen for op in p.pattern.custom_ops())), "")

    def equal_to_standard(self, op_type: str) -> CustomOp | None:
        """The op the plugins bring that equals the standard op ``op_type`` node for node and
        writes it as standard ONNX (``CustomOp.standard_op``, ``to_standard``); None: none."""
        ops = [*self.extra_ops, *(op for p in self.plugins for op in p.pattern.custom_ops())]
        for key in dict.fromkeys(op.key for op in ops if op.standard_op == op_type):
            chosen = self.op(*key)  # (the user's choice where two plugins bring it)
            if chosen is not None and chosen.standard_op == op_type and chosen.to_standard is not None:
                return chosen
        return None

    def can_run(self, domain: str, op_type: str) -> bool:
        """Whether some plugin of this set brings a way to run the op (a kernel, an onnxruntime
        library, a function body). A conflict between plugins counts as yes: it is reported
        where the op is run."""
        try:
            op = self.op(domain, op_type)
        except SurgeonError:
            return True
        return op is not None and any(f is not None for f in (op.kernel, op.ort_library, op.function))

    def _choose(self, offers: list, what: str, origin_of):
        return self._decide(offers, what, origin_of)[0]

    def _decide(self, offers: list, what: str, origin_of) -> tuple:
        """The offer the user's choice settles on, and why (the rule that chose it)."""
        if len(offers) == 1:
            return offers[0], "the only one"
        origins = [origin_of(o) for o in offers]
        explicit = [o for o, origin in zip(offers, origins) if origin.explicit]
        if len(explicit) == 1:
            return explicit[0], "named with --plugin, which wins over an installed one"
        for package in self.prefer:
            preferred = [o for o, origin in zip(offers, origins) if origin.package == package]
            if len(preferred) == 1:
                return preferred[0], f"--prefer {package}"
        packages = [origin.package for origin in origins]
        raise PluginError(f"{what} is provided by {origins[0]} and by {origins[1]}; choose one with "
                           f"--prefer {packages[0]} or --prefer {packages[1]}")

    def standing(self, plugin: Plugin) -> str:
        """Whether a listed pattern runs, and when another plugin gives the same name, which one
        wins and why: what ``surgeon patterns`` shows."""
        if not plugin.enabled:
            return "no"
        rivals = [p for p in self.plugins if p.name == plugin.name and p.enabled]
        if len(rivals) == 1:
            return "yes"
        try:
            winner, why = self._decide(rivals, f"pattern {plugin.name!r}", lambda p: p.origin)
        except SurgeonError:
            return "conflict: choose with --prefer"
        if winner is plugin:
            return f"yes, wins: {why}"
        return f"no, {winner.origin.label} wins: {why}"

    def conflicts(self) -> list[str]:
        """One line per name or op two plugins provide and no choice settles."""
        lines = []
        for name in dict.fromkeys(p.name for p in self.plugins):
            try:
                self._choose([p for p in self.plugins if p.name == name], f"pattern {name!r}", lambda p: p.origin)
            except SurgeonError as exc:
                lines.append(str(exc))
        for key in dict.fromkeys(op.key for p in self.plugins for op in p.pattern.custom_ops()):
            try:
                self.op(*key)
            except SurgeonError as exc:
                lines.append(str(exc))
        return lines

    def fingerprint(self) -> tuple:
        """Equal for sets that run custom ops alike (runners are cached by it)."""
        keys = dict.fromkeys(op.key for p in self.plugins for op in p.pattern.custom_ops())
        keys.update(dict.fromkeys(op.key for op in self.extra_ops))
        found = []
        for key in keys:
            try:
                op = self.op(*key)
            except SurgeonError:
                op = None
            found.append((key, op))
        return tuple(found)


def load_spec(spec: str) -> list[Pattern]:
    """``module:Name`` (or ``module`` with a ``PATTERNS`` list) -> checked patterns."""
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
        patterns = _as_patterns(getattr(module, attr or "PATTERNS"), spec)
        for p in patterns:
            _checked(p)
        return patterns
    except Exception as exc:
        raise PluginError(f"--plugin {spec}: cannot load: {_one_line(exc)}", plugin=spec) from None


def _checked(pattern: Pattern) -> None:
    try:
        check_definition(pattern)
    except Exception as exc:
        raise type(exc)(f"pattern {getattr(pattern, 'name', '?')!r} ({type(pattern).__name__}) "
                        f"{str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}") from None


def _as_patterns(obj, where: str) -> list[Pattern]:
    """An entry point may name a Pattern subclass, an instance, a list of them, or a factory."""
    if inspect.isclass(obj) and issubclass(obj, Pattern):
        return [obj()]
    if isinstance(obj, Pattern):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [p for item in obj for p in _as_patterns(item, where)]
    if callable(obj):
        return _as_patterns(obj(), where)
    raise TypeError(f"{where} is a {type(obj).__name__}, not a Pattern")


def _one_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def resolve(plugins) -> PluginSet:
    """What library calls accept: None (installed), a PluginSet, or patterns (classes/instances)."""
    if plugins is None:
        return PluginSet.installed()
    if isinstance(plugins, PluginSet):
        return plugins
    if isinstance(plugins, (str, bytes)):
        raise ArgumentTypeError("plugins: pass a PluginSet or a list of patterns; for 'module:Name' use "
                                "surgeon.PluginSet.installed(extra=[...])")
    if isinstance(plugins, (Pattern, type)) or not isinstance(plugins, Iterable):
        raise ArgumentTypeError(f"plugins: expected a PluginSet or a list of patterns, got {type(plugins).__name__}"
                                + (": wrap it in a list" if isinstance(plugins, (Pattern, type)) else ""))
    return PluginSet.of(plugins)
