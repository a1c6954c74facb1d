"""The TensorRT profile of the custom.ops contract: what ``surgeon fuse --target tensorrt``
writes so that TensorRT's ONNX parser hands each node to this package's plugins (README.md here
maps it attribute by attribute). Plain data: importing it needs no TensorRT.

The parser dispatches on op_type alone and looks a plugin up by (op_type, attribute
``plugin_version``, attribute ``plugin_namespace``). ``FusedGridSample`` names no standard op,
so it keeps the contract's type; ``AffineGrid`` does (the parser refuses it before any plugin
lookup), so the profile writes it as ``AffineGridPlugin``.
"""

NAMESPACE = "surgeon"  # no dots: TensorRT's Python plugin API refuses them ("custom.ops" cannot be used)
VERSION = "1"  # the Python plugin API registers every plugin at version "1"
OP_TYPES = {"FusedGridSample": "FusedGridSample", "AffineGrid": "AffineGridPlugin"}  # contract op -> profile op


def op_type(contract_op: str) -> str:
    return OP_TYPES[contract_op]


def node_attributes() -> dict:
    """The lookup keys, as ``RewriteContext.add_node`` keywords (STRING attributes)."""
    return {"plugin_version": VERSION, "plugin_namespace": NAMESPACE}
