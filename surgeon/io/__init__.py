"""io/: models in and out. Loading a model safely (``load.py``: what a model argument may be, the
checks, external data read only on demand), saving one (``save.py``: never onto an input, all
outputs or none; ``surgeon.save``), external-data files (``datafile.py``), atomic writes
(``atomic.py``), streaming serialisation past 2 GB (``wire.py``), where a returned model's
external data lives (``homes.py``) and onnx-graphsurgeon interop (``graphsurgeon.py``).

It decides how bytes reach and leave the disk, and nothing about what a graph computes.
May import: ``graph/`` (the load-time checks on order and propagation), ``errors``,
``arguments``, ``forksafe``; never ``rewrite/``, ``runtime/``, ``validate/``, ``deploy/``.
"""
