"""How OpenVINO's ONNX frontend recognises a file before reading it (onnx_model_validator.cpp,
2024-2026): it decodes the top-level fields one by one until it has seen three distinct ones,
and takes the file for something else when a field comes twice before that, or a field is not a
ModelProto field. ``onnx.save`` writes fields in number order (ir_version, graph, opset_import...),
which passes; a writer that puts two opset imports first does not, and read_model then says only
"Unable to read the model ... Please check that model format"."""

from __future__ import annotations

from onnx import ModelProto

_FIELDS = {fd.number: fd.name for fd in ModelProto.DESCRIPTOR.fields}
_SEEN = 3  # distinct fields OpenVINO wants to see


def not_recognised(path: str) -> str | None:
    """Why OpenVINO's ONNX frontend will not take ``path`` for ONNX, or None."""
    seen: list[int] = []
    try:
        with open(path, "rb") as f:
            while len(seen) < _SEEN:
                key = _varint(f)
                if key is None:
                    return None  # a short file: OpenVINO's own message says enough
                number, wire = key >> 3, key & 7
                if number not in _FIELDS:
                    return None
                if number in seen:
                    order = ", ".join(_FIELDS[n] for n in seen + [number])
                    return (f"its top-level fields begin {order}: OpenVINO's ONNX frontend wants {_SEEN} distinct "
                            "fields before any repeats, so it does not take the file for ONNX")
                seen.append(number)
                if wire == 2:
                    f.seek(_varint(f) or 0, 1)
                elif wire == 0:
                    _varint(f)
                else:
                    return None
    except OSError:
        return None
    return None


def _varint(f) -> int | None:
    value, shift = 0, 0
    while True:
        byte = f.read(1)
        if not byte:
            return None
        value |= (byte[0] & 0x7F) << shift
        shift += 7
        if byte[0] < 0x80:
            return value
