"""TPU tiled formats: XLA's default tiling for a shape and element type, and the 32-bit
word holding each element of a packed (sub-32-bit) format.

Defaults, as ``spec/tiled-layout.md`` lists them (row-major ``minor_to_major``):

* 32-bit and wider types: ``T(8,128)``; ``T(2,128)`` when the second-minor dimension is
  1 or 2, ``T(4,128)`` when it is 3 or 4 (a rank-1 array counts as second-minor 1);
* narrower types pack ``p = 32 / bits`` elements of consecutive rows into one word with a
  second tile ``(p,1)``; the first tile has at least ``p`` rows: 16-bit ``(8,128)(2,1)``,
  8-bit ``(8,128)(4,1)``, 4-bit ``(8,128)(8,1)E(4)``, 1-bit ``(32,128)(32,1)E(1)``;
* scalars are untiled.

Example::

    >>> str(tpu_default_layout("bf16", (16, 256)))
    '{1,0:T(8,128)(2,1)}'
    >>> word_position(Shape.parse("bf16[16,256]{1,0:T(8,128)(2,1)}"), (1, 0))
    (0, 1)
"""

from __future__ import annotations

from collections.abc import Sequence

from hlo_indexing.errors import InvalidArgumentError
from hlo_indexing.layout.tiling import linear_index
from hlo_indexing.layout.types import Layout, Shape

_BITS = {
    "pred": 8, "s1": 1, "u1": 1, "s2": 2, "u2": 2, "s4": 4, "u4": 4, "f4e2m1fn": 4,
    "s8": 8, "u8": 8, "f8e4m3fn": 8, "f8e5m2": 8, "f8e4m3": 8, "f8e4m3fnuz": 8, "f8e5m2fnuz": 8,
    "f8e4m3b11fnuz": 8, "f8e3m4": 8, "f8e8m0fnu": 8, "f6e2m3fn": 8, "f6e3m2fn": 8,
    "s16": 16, "u16": 16, "f16": 16, "bf16": 16, "s32": 32, "u32": 32, "f32": 32, "tf32": 32,
    "s64": 64, "u64": 64, "f64": 64, "c64": 64, "c128": 128,
}

WORD_BITS = 32
LANES = 128


def element_bits(dtype: str, layout: Layout | None = None) -> int:
    """Bits per element: the layout's ``E(n)`` if set, else the type's storage size
    (``pred`` is a byte)."""
    if layout is not None and layout.element_size_bits:
        return layout.element_size_bits
    try:
        return _BITS[dtype.lower()]
    except KeyError:
        raise InvalidArgumentError(f"unknown element type '{dtype}'") from None


def tpu_default_layout(dtype: str, dims: Sequence[int], bits: int | None = None) -> Layout:
    """XLA's TPU default layout for an array of ``dtype`` and ``dims`` (see the module
    docstring); ``bits`` overrides the element size (``bits=1`` for 1-bit ``pred``)."""
    bits = bits or element_bits(dtype)
    rank = len(dims)
    if rank == 0:
        return Layout.row_major(0)
    second_minor = dims[-2] if rank >= 2 else 1
    rows = 2 if second_minor <= 2 else 4 if second_minor <= 4 else 8
    tiles: list[tuple[int, ...]] = []
    if bits < WORD_BITS:
        packing = WORD_BITS // bits
        tiles = [(max(rows, packing), LANES), (packing, 1)]
    else:
        tiles = [(rows, LANES)]
    return Layout(
        Layout.row_major(rank).minor_to_major,
        tuple(tiles),
        element_size_bits=bits if bits < 8 else 0,
    )


def word_position(shape: Shape, index: Sequence[int]) -> tuple[int, int]:
    """``(word, position)``: the 32-bit word offset of element ``index`` in the buffer and
    its position inside the word, counting elements from the low-order bits (XLA's
    ``PackIntN`` order). For 32-bit and wider types the position is 0."""
    bits = element_bits(shape.dtype, shape.layout)
    offset = linear_index(shape, index)
    if bits >= WORD_BITS:
        return offset * (bits // WORD_BITS), 0
    per_word = WORD_BITS // bits
    return offset // per_word, offset % per_word
