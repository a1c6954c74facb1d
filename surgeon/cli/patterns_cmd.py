from __future__ import annotations

import click

from ..rewrite.plugins import discover, select
from . import cli, warn


@cli.command()
@click.option("--plugin", "plugins", multiple=True, metavar="MODULE:NAME", help="Also list this pattern.")
@click.option("--only", multiple=True, metavar="NAME", help="Show which would be enabled with --only.")
@click.option("--skip", multiple=True, metavar="NAME", help="Show which would be enabled with --skip.")
def patterns(plugins, only, skip):
    """List installed patterns: name, package, version, enabled.

    \b
    Example:
      surgeon patterns
      surgeon patterns --plugin my_pkg.patterns:FlowWarp
    """
    found = discover(plugins)
    for error in found.errors:
        warn(error)
    select(found, only, skip)
    rows = [("NAME", "PACKAGE", "VERSION", "ENABLED", "DESCRIPTION")]
    for p in found.patterns:
        rows.append((p.pattern.name, p.package, p.version, "yes" if p.enabled else "no", p.pattern.description))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4])
