"""The ``surgeon`` command: parse, call the library, print. Errors are one line and exit 1;
usage errors exit 2 (click's convention)."""

from __future__ import annotations

import os
import sys

import click

from ..errors import SurgeonError


class _Group(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except SurgeonError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("error: interrupted", err=True)
            ctx.exit(1)
        except Exception as exc:  # never a traceback for users; SURGEON_DEBUG=1 shows one
            if os.environ.get("SURGEON_DEBUG"):
                raise
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            click.echo(f"error: internal error: {type(exc).__name__}: {first} (SURGEON_DEBUG=1 shows a traceback)",
                       err=True)
            ctx.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="surgeon")
def cli() -> None:
    """Post-export graph surgery for ONNX models: rewrite exported op chains into single
    plugin ops with the installed patterns (`surgeon patterns` lists them), inspect what would
    match, and run and validate the result."""


def warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


from . import fuse_cmd, inspect_cmd, patterns_cmd, run_cmd, validate_cmd  # noqa: E402,F401  (register the commands)


def main() -> None:
    cli.main(prog_name="surgeon")


if __name__ == "__main__":
    sys.exit(main())
