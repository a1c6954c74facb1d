from __future__ import annotations

import click

from ..errors import SurgeonError
from . import cli
from .options import plugin_options, plugin_set, quiet_option


@cli.command("ort-lib")
@click.option("--device", type=click.Choice(["cpu", "cuda"]), default="cpu", show_default=True,
              help="The library's execution provider (cuda: built when nvcc was there at install; includes the "
                   "CPU kernels).")
@quiet_option
@plugin_options(selection=False)
def ort_lib(device, plugins, prefer):
    """Print the path of the onnxruntime custom-op library of each installed plugin that brings
    one (as installed), for SessionOptions.register_custom_ops_library in your own program or
    tool.

    \b
    Example:
      surgeon ort-lib
      python -c "import onnxruntime as ort, sys; o = ort.SessionOptions(); o.register_custom_ops_library(sys.argv[1])" "$(surgeon ort-lib)"
    """
    found = plugin_set(plugins, prefer=prefer)
    paths: dict[str, list[str]] = {}
    for plugin in found.plugins:
        for op in plugin.pattern.custom_ops():
            chosen = found.op(*op.key)
            if chosen is not None and chosen.ort_library is not None:
                try:
                    path = chosen.ort_library(device)
                except Exception as exc:
                    text = str(exc).strip().splitlines()
                    raise SurgeonError(f"{op.label}: no onnxruntime op library: {text[0] if text else exc}") from None
                paths.setdefault(path, []).append(op.label)
    if not paths:
        raise SurgeonError("no installed plugin brings an onnxruntime op library")
    for path in paths:
        click.echo(path)
