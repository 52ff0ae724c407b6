"""XLA element type names of MLIR element types, and their sizes as XLA's cost model
counts them (``ShapeUtil::ByteSizeOfPrimitiveType``: ``pred`` and sub-byte types take a
byte)."""

from __future__ import annotations

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import UnsupportedError

#: Bits of XLA's element types (``pred`` stored as a byte).
BITS = {
    "pred": 8, "s2": 2, "u2": 2, "s4": 4, "u4": 4, "f4e2m1fn": 4,
    "s8": 8, "u8": 8, "f8e4m3fn": 8, "f8e5m2": 8, "f8e4m3": 8, "f8e4m3fnuz": 8, "f8e5m2fnuz": 8,
    "f8e4m3b11fnuz": 8, "f8e3m4": 8, "f8e8m0fnu": 8, "f6e2m3fn": 8, "f6e3m2fn": 8,
    "s16": 16, "u16": 16, "f16": 16, "bf16": 16, "s32": 32, "u32": 32, "f32": 32, "tf32": 32,
    "s64": 64, "u64": 64, "f64": 64, "c64": 64, "c128": 128,
}


def byte_size(element_type: str) -> int:
    """Bytes of one element (at least 1)."""
    try:
        return max(1, BITS[element_type] // 8)
    except KeyError:
        raise UnsupportedError(f"element type '{element_type}' has no known size") from None


def bit_width(element_type: str) -> int:
    """Bits of one element (``pred``: 8)."""
    try:
        return BITS[element_type]
    except KeyError:
        raise UnsupportedError(f"element type '{element_type}' has no known size") from None


def xla_name(element: ir.Type) -> str:
    """The XLA name of an MLIR element type: ``i1`` -> ``pred``, ``i32``/``si32`` ->
    ``s32``, ``ui8`` -> ``u8``, ``f8E4M3FN`` -> ``f8e4m3fn``, ``complex<f32>`` -> ``c64``."""
    if isinstance(element, ir.ComplexType):
        inner = ir.ComplexType(element).element_type
        return {"f32": "c64", "f64": "c128"}.get(str(inner), f"complex<{inner}>")
    if isinstance(element, ir.IntegerType):
        integer = ir.IntegerType(element)
        if integer.width == 1:
            return "pred"
        return f"{'u' if integer.is_unsigned else 's'}{integer.width}"
    return str(element).lower()


def tensor_element_type(value_type: ir.Type) -> str:
    """The XLA element type name of a ranked tensor type."""
    return xla_name(ir.ShapedType(value_type).element_type)
