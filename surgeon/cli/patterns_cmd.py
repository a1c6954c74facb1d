from __future__ import annotations

import click

from . import cli, warn
from .options import plugin_options, plugin_set


@cli.command()
@plugin_options()
def patterns(plugins, only, skip, prefer):
    """List installed patterns: name, package, version, enabled. When two plugins give the same
    pattern name, it says which one runs and why (a --plugin over an installed one, --prefer).

    \b
    Example:
      surgeon patterns
      surgeon patterns --plugin my_pkg.patterns:FlowWarp
    """
    found = plugin_set(plugins, only, skip, prefer)
    for line in found.conflicts():
        warn(line)
    rows = [("NAME", "PACKAGE", "VERSION", "ENABLED", "DESCRIPTION")]
    for p in found.plugins:
        rows.append((p.name, p.origin.package, p.origin.version, found.standing(p), p.pattern.description))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4])
