"""Patterns that break the plugin author's rules (issue 29's edges): a check() that raises or
returns True, a match() returning a list, a pattern writing an op nothing can run, and another
plugin's pattern of a name already taken. Loaded by class and by ``--plugin
tests.plugins.misbehaving:Name``."""

from __future__ import annotations

from . import planted


class CheckRaises(planted.Swish):
    name = "check-raises"

    def check(self, ctx, match):
        return {"beta": 1}["alpha"]  # a KeyError, as in the issue


class CheckTrue(planted.Swish):
    name = "check-true"

    def check(self, ctx, match):
        return True  # meant "go ahead"


class MatchList(planted.Swish):
    name = "match-list"

    def match(self, ctx, node):
        return [node]


class NoKernel(planted.Swish):
    name = "no-kernel"
    ops = []


class OtherSwish(planted.SwishOff):
    """Another plugin's pattern of the same name."""

    name = "swish"
