"""Small helpers over ONNX graphs: a node view, an index of producers and consumers, constant
folding, region extraction and ordering. Work on the protobuf directly: a graphsurgeon round trip
alone costs more than the whole fuse budget on large models. Also typed node attributes
(``attrs.py``) and what a rewrite leaves unused (``prune.py``).

The ground floor: may import only ``errors`` and ``forksafe``.
"""

from .node import Node, is_op
from .index import GraphIndex
from .walk import BackWalk, computing

__all__ = ["Node", "GraphIndex", "is_op", "BackWalk", "computing"]
