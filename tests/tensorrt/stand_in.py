"""A stand-in for the parts of TensorRT the plugins touch, for machines without TensorRT (CI, and
this project's GPU machine: its wheels need libraries from NVIDIA's own index). Written from
TensorRT 11.4's `tensorrt.plugin` sources and onnx-tensorrt 10.1's fallback importer (read, not
copied), holding the plugins to the same rules:

- registration: TensorDesc inputs first, then typed attributes (int, float, str, bool, bytes or
  numpy.typing.NDArray[dtype]), no defaults; impl and autotune signatures checked against it;
- the ONNX parser: op_type + plugin_version (default "1") + plugin_namespace (default "") find
  the plugin; only attributes the plugin declares are passed, as fields: INT/INTS -> int32
  arrays, FLOAT(S) -> float32, STRING -> bytes with a NUL; the plugin API then turns each field
  into its annotation's type as TensorRT does (`int(field)` of a 1-element array fails on
  NumPy >= 2.4, as it does there);
- shape functions run on opaque dims; enqueue gets Tensors with data_ptr, shape, dtype.
"""

import enum
import inspect
import types
import typing

import numpy as np


class DataType(enum.Enum):
    FLOAT = "float32"
    HALF = "float16"
    INT32 = "int32"
    INT64 = "int64"


class TensorDesc:
    def __init__(self, shape_expr=(), dtype=None):
        self.shape_expr, self.dtype = tuple(shape_expr), dtype

    @property
    def ndim(self):
        return len(self.shape_expr)


class Tensor:
    def __init__(self, array: np.ndarray, dtype):
        self.array, self.dtype, self.shape = array, dtype, tuple(array.shape)
        self.data_ptr = array.ctypes.data


class AutoTuneCombination:
    def __init__(self, io_types="", layouts=""):
        self.io_types, self.layouts = io_types, layouts


def from_shape_expr(shape_expr, dtype):
    if not isinstance(shape_expr, tuple):
        raise TypeError("from_shape_expr takes a tuple")
    return TensorDesc(shape_expr, dtype)


_BUILTIN = (int, float, str, bool, bytes)


def _is_array(annotation) -> bool:
    return typing.get_origin(annotation) is np.ndarray


class StandInPlugin:
    def __init__(self, plugin_id, register_func):
        self.id, self.register = plugin_id, register_func
        self.impl = self.autotune = None
        self.tensors, self.attrs = [], {}
        seen_attr = False
        for name, p in inspect.signature(register_func).parameters.items():
            if p.annotation is inspect.Parameter.empty or p.default is not inspect.Parameter.empty:
                raise ValueError(f"{plugin_id}: {name} needs an annotation and no default")
            if p.annotation is TensorDesc:
                if seen_attr:
                    raise ValueError(f"{plugin_id}: tensors must come before attributes")
                self.tensors.append(name)
                continue
            if name in ("outputs", "stream", "tactic") or not (p.annotation in _BUILTIN or _is_array(p.annotation)):
                raise ValueError(f"{plugin_id}: attribute {name} has an unsupported type {p.annotation}")
            seen_attr = True
            self.attrs[name] = p.annotation

    def check_schema(self, func, tail: tuple, kind: str):
        names = list(inspect.signature(func).parameters)
        for name, p in inspect.signature(func).parameters.items():
            if name in self.attrs and p.annotation is not inspect.Parameter.empty and p.annotation != self.attrs[name]:
                raise ValueError(f"{self.id} {kind}: {name} annotated differently from the registration")
        expected = self.tensors + [n for n in self.attrs if n in names] + list(tail)
        if names != expected:
            raise ValueError(f"{self.id} {kind}: signature {names} is not {expected}")

    def enqueue(self, inputs, attrs: dict, outputs, stream: int = 0):
        """As TensorRT's enqueue calls impl: tensors, the attributes impl names (in registration
        order), the outputs, the stream."""
        wanted = inspect.signature(self.impl).parameters
        self.impl(*inputs, *[attrs[k] for k in self.attrs if k in wanted], tuple(outputs), stream=stream)

    def field_value(self, name, data: np.ndarray):
        """A plugin field as the plugin API hands it to the functions."""
        annotation = self.attrs[name]
        if _is_array(annotation):
            return data.astype(typing.get_args(typing.get_args(annotation)[1])[0])
        if annotation is str:
            return data.tobytes().decode("utf-8")
        return annotation(data)  # int(np.array([v])) fails on NumPy >= 2.4, as in TensorRT


class PluginModule(types.ModuleType):
    """`tensorrt.plugin`: register / impl / autotune, and the registry the parser looks in."""

    TensorDesc, Tensor, AutoTuneCombination = TensorDesc, Tensor, AutoTuneCombination
    from_shape_expr = staticmethod(from_shape_expr)

    def __init__(self):
        super().__init__("tensorrt.plugin")
        self.registry: dict[tuple, StandInPlugin] = {}  # (name, version, namespace)

    def _find(self, plugin_id):
        ns, name = plugin_id.split("::")
        return self.registry[(name, "1", ns)]

    def register(self, plugin_id):
        ns, name = plugin_id.split("::")
        if "." in ns or "." in name or ns in ("", "trt", "tensorrt", "std"):
            raise ValueError(f"namespace {ns!r} refused")

        def decorate(func):
            if (name, "1", ns) in self.registry:
                raise ValueError(f"{plugin_id} already defined")
            self.registry[(name, "1", ns)] = StandInPlugin(plugin_id, func)
            return func
        return decorate

    def impl(self, plugin_id):
        def decorate(func):
            plugin = self._find(plugin_id)
            plugin.check_schema(func, ("outputs", "stream"), "impl")
            plugin.impl = func
            return func
        return decorate

    def autotune(self, plugin_id):
        def decorate(func):
            plugin = self._find(plugin_id)
            plugin.check_schema(func, ("outputs",), "autotune")
            plugin.autotune = func
            return func
        return decorate


def parser_fields(node, plugin: StandInPlugin) -> dict:
    """onnx-tensorrt's loadFields: the node's attributes the plugin declares, as field data."""
    from onnx import AttributeProto

    fields = {}
    for a in node.attribute:
        if a.name not in plugin.attrs:
            continue
        if a.type == AttributeProto.INT:
            data = np.array([a.i], dtype=np.int32)
        elif a.type == AttributeProto.INTS:
            data = np.array(list(a.ints), dtype=np.int32)
        elif a.type == AttributeProto.FLOAT:
            data = np.array([a.f], dtype=np.float32)
        elif a.type == AttributeProto.STRING:
            data = np.frombuffer(a.s + b"\0", dtype=np.int8)
        else:
            raise ValueError(f"attribute {a.name}: type {a.type} is refused as a plugin field")
        fields[a.name] = plugin.field_value(a.name, data)
    return fields


class Stand_in:
    """`tensorrt` and `tensorrt.plugin`, fresh per test."""

    def __init__(self):
        self.trt = types.SimpleNamespace(DataType=DataType, float32=DataType.FLOAT, float16=DataType.HALF)
        self.trtp = PluginModule()

    def parse(self, node):
        """The plugin and attributes TensorRT's parser would create for this ONNX node."""
        attrs = {a.name: a for a in node.attribute}
        version = attrs["plugin_version"].s.decode() if "plugin_version" in attrs else "1"
        namespace = attrs["plugin_namespace"].s.decode() if "plugin_namespace" in attrs else ""
        plugin = self.trtp.registry.get((node.op_type, version, namespace))
        if plugin is None:
            raise LookupError(f"Plugin not found: {node.op_type} version {version} namespace {namespace!r}")
        return plugin, parser_fields(node, plugin)
