"""XLA's layout values: :class:`Layout` and :class:`Shape`, how they print and parse,
and where a layout places a shape's elements.

Parsing is in :mod:`hlo_indexing.layout.text` and placement in
:mod:`hlo_indexing.layout.tiling`, both below this module: ``Layout.parse``,
``Shape.parse`` (and :func:`parse_layout`, :func:`parse_shape`) and the placement
methods are built on them.

Example::

    >>> str(Layout((1, 0), tiles=((8, 128), (2, 1))))
    '{1,0:T(8,128)(2,1)}'
    >>> str(Shape("f32", (3, 5), Layout((0, 1))))
    'f32[3,5]{0,1}'
    >>> Shape.parse("bf16[16,256]{1,0:T(8,128)(2,1)}").layout.tiles
    ((8, 128), (2, 1))
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from hlo_indexing.layout import text, tiling
from hlo_indexing.layout.tiling import COMBINE
from hlo_indexing.limits import INT64_MAX

__all__ = ["COMBINE", "INT64_MAX", "Layout", "Shape", "parse_layout", "parse_shape"]


@dataclass(frozen=True)
class Layout:
    """An XLA layout. ``minor_to_major`` lists logical dims from fastest to slowest;
    ``tiles`` apply left to right (entries > 0, or :data:`COMBINE`). The other fields are
    kept for printing; only ``tail_padding_alignment`` (``L``) changes sizes, none moves
    an element. ``has_braces`` is False only for the untiled scalar (``f32[]``)."""

    minor_to_major: tuple[int, ...] = ()
    tiles: tuple[tuple[int, ...], ...] = ()
    tail_padding_alignment: int = 1
    index_type: str | None = None
    pointer_type: str | None = None
    element_size_bits: int = 0
    memory_space: int = 0
    split_configs: tuple[tuple[int, tuple[int, ...]], ...] = ()
    sparse_physical_shape: str | None = None
    dynamic_metadata_bytes: int = 0
    has_braces: bool = field(default=True, compare=False)

    @staticmethod
    def parse(source: str) -> "Layout":
        """Parse a layout alone (``{1,0:T(2,2)}``) or the layout of a shape text
        (``f32[3,5]{1,0:T(2,2)}``); see :meth:`Shape.parse`."""
        return parse_layout(source)

    @staticmethod
    def row_major(rank: int) -> "Layout":
        """The default layout ``{rank-1,...,1,0}``."""
        return Layout(tuple(range(rank - 1, -1, -1)), has_braces=rank > 0)

    @property
    def rank(self) -> int:
        """The number of dimensions (the length of ``minor_to_major``)."""
        return len(self.minor_to_major)

    # placement (see hlo_indexing.layout.tiling); ``dims`` is a dims sequence or a Shape

    def physical_shape(self, dims: "Sequence[int] | Shape") -> tuple[int, ...]:
        """The padded, tiled shape, major to minor."""
        return tiling.physical_shape(dims, self)

    def padded_size(self, dims: "Sequence[int] | Shape") -> int:
        """Element slots of the buffer, ``L(n)`` tail padding included."""
        return tiling.padded_size(dims, self)

    def linear_index(self, dims: "Sequence[int] | Shape", index: Sequence[int]) -> int:
        """The buffer offset (in elements) of logical ``index``."""
        return tiling.linear_index(dims, index, self)

    def logical_index(self, dims: "Sequence[int] | Shape", offset: int) -> tuple[int, ...] | None:
        """The logical index at buffer ``offset``, or None for a padding slot."""
        return tiling.logical_index(dims, offset, self)

    def __str__(self) -> str:
        fields = []
        if self.tiles:
            fields.append("T" + "".join("(" + ",".join("*" if t == COMBINE else str(t) for t in tile) + ")" for tile in self.tiles))
        if self.tail_padding_alignment != 1:
            fields.append(f"L({self.tail_padding_alignment})")
        if self.index_type is not None:
            fields.append(f"#({self.index_type})")
        if self.pointer_type is not None:
            fields.append(f"*({self.pointer_type})")
        if self.element_size_bits:
            fields.append(f"E({self.element_size_bits})")
        if self.memory_space:
            fields.append(f"S({self.memory_space})")
        if self.split_configs:
            fields.append("SC" + "".join(f"({d}:{','.join(map(str, idx))})" for d, idx in self.split_configs))
        if self.sparse_physical_shape is not None:
            fields.append(f"P({self.sparse_physical_shape})")
        if self.dynamic_metadata_bytes:
            fields.append(f"M({self.dynamic_metadata_bytes})")
        body = ",".join(map(str, self.minor_to_major))
        if fields:
            body += ":" + "".join(fields)
        return "{" + body + "}"


@dataclass(frozen=True)
class Shape:
    """An array shape: XLA element type name (lower case), dims (dim 0 first), layout."""

    dtype: str
    dims: tuple[int, ...]
    layout: Layout

    @staticmethod
    def parse(source: str) -> "Shape":
        """Parse ``dtype[d0,...]{layout}``; the layout defaults to row-major. The layout
        is checked against the dims (a permutation of them, padded size within int64)."""
        return parse_shape(source)

    def __str__(self) -> str:
        layout = str(self.layout) if self.layout.has_braces else ""
        return f"{self.dtype}[{','.join(map(str, self.dims))}]{layout}"


@functools.lru_cache(maxsize=4096)
def parse_layout(source: str) -> Layout:
    """Parse a layout alone (``{1,0:T(2,2)}``) or the layout of a shape text
    (``f32[3,5]{1,0:T(2,2)}``); :class:`~hlo_indexing.layout.text.LayoutParseError` names
    the offending token. Layouts are immutable: a text parsed before gives the same
    object (the tiling ranking reads each operand's layout text per fusion)."""
    if source.strip().startswith("{"):
        written = text.parse_layout_text(source)
        return Layout(written.minor_to_major, **written.fields)
    return parse_shape(source).layout


def parse_shape(source: str) -> Shape:
    """Parse ``dtype[d0,...]{layout}``; the layout defaults to row-major. The layout is
    checked against the dims (a permutation of them, padded size within int64);
    :class:`~hlo_indexing.layout.text.LayoutParseError` names the offending token."""
    written = text.parse_shape_text(source)
    if written.layout is None:
        layout = Layout.row_major(len(written.dims))
    else:
        layout = Layout(written.layout.minor_to_major, **written.layout.fields)
    shape = Shape(written.dtype, written.dims, layout)
    try:
        tiling.check_padded_size(shape.dims, layout)
    except OverflowError as exc:
        raise text.layout_error(source, f"{exc} for shape '{shape}'", written.layout_column) from None
    return shape
