"""The ``surgeon`` command: parse, call the library, print. Errors are one line and exit 1;
usage errors exit 2 (click's convention).

The top floor: may import any folder and ``api``; nothing in the engine imports it."""

from __future__ import annotations

import logging
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
            _error(str(exc))
            ctx.exit(1)
        except BrokenPipeError:  # `surgeon ... | head`: the reader left; nothing to say
            _quiet_stdout()
            ctx.exit(1)
        except KeyboardInterrupt:
            _error("interrupted")
            ctx.exit(1)
        except MemoryError:
            _error("out of memory (the model needs more memory than this machine has free)")
            ctx.exit(1)
        except Exception as exc:  # never a traceback for users; SURGEON_DEBUG=1 shows one
            if os.environ.get("SURGEON_DEBUG"):
                raise
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            _error(f"internal error: {type(exc).__name__}: {first} (SURGEON_DEBUG=1 shows a traceback)")
            ctx.exit(1)


def _quiet_stdout() -> None:
    # Point stdout at /dev/null so the interpreter's final flush does not fail a second time.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _error(message: str) -> None:
    """One line, always: control characters from file or value names (a newline, a terminal
    escape, an undecodable byte) are shown escaped."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)
    click.echo(f"error: {text}", err=True)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="surgeon")
def cli() -> None:
    """Post-export graph surgery for ONNX models: rewrite exported op chains into single
    plugin ops with the installed patterns (`surgeon patterns` lists them), inspect what would
    match, and run and validate the result."""


def warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


# Importing the command modules registers them.
from . import fuse_cmd, inspect_cmd, lint_cmd, ortlib_cmd, patterns_cmd, run_cmd, unfuse_cmd, validate_cmd  # noqa: E402,F401


def main() -> None:
    # The command prints its notes and warnings itself: the library's log records of them stay
    # off the root logger, whatever a plugin configured there.
    logging.getLogger("surgeon").propagate = False
    cli.main(prog_name="surgeon")


if __name__ == "__main__":
    sys.exit(main())
