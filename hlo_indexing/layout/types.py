"""XLA's layout values: :class:`Layout` and :class:`Shape`, and how they print.

Parsing is in :mod:`hlo_indexing.layout.text` and placement in
:mod:`hlo_indexing.layout.tiling`; ``Layout.parse``, ``Shape.parse`` and the placement
methods are thin delegates to them, installed by :mod:`hlo_indexing.layout` (see
:mod:`hlo_indexing.delegates`).

Example::

    >>> str(Layout((1, 0), tiles=((8, 128), (2, 1))))
    '{1,0:T(8,128)(2,1)}'
    >>> str(Shape("f32", (3, 5), Layout((0, 1))))
    'f32[3,5]{0,1}'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from hlo_indexing.delegates import Delegates

#: tile entry meaning "combine this dimension with the next more-minor one" (XLA's ``*``)
COMBINE = -1
INT64_MAX = 2**63 - 1

#: What the parse and placement methods delegate to; :mod:`hlo_indexing.layout` installs them.
OPERATIONS = Delegates("hlo_indexing.layout")


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
    def parse(text: str) -> "Layout":
        """Parse a layout alone (``{1,0:T(2,2)}``) or the layout of a shape text
        (``f32[3,5]{1,0:T(2,2)}``); see :meth:`Shape.parse`."""
        return cast(Layout, OPERATIONS.parse_layout(text))

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
        return cast(tuple[int, ...], OPERATIONS.physical_shape(dims, self))

    def padded_size(self, dims: "Sequence[int] | Shape") -> int:
        """Element slots of the buffer, ``L(n)`` tail padding included."""
        return cast(int, OPERATIONS.padded_size(dims, self))

    def linear_index(self, dims: "Sequence[int] | Shape", index: Sequence[int]) -> int:
        """The buffer offset (in elements) of logical ``index``."""
        return cast(int, OPERATIONS.linear_index(dims, index, self))

    def logical_index(self, dims: "Sequence[int] | Shape", offset: int) -> tuple[int, ...] | None:
        """The logical index at buffer ``offset``, or None for a padding slot."""
        return cast("tuple[int, ...] | None", OPERATIONS.logical_index(dims, offset, self))

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
    def parse(text: str) -> "Shape":
        """Parse ``dtype[d0,...]{layout}``; the layout defaults to row-major. The layout
        is checked against the dims (a permutation of them, padded size within int64)."""
        return cast(Shape, OPERATIONS.parse_shape(text))

    def __str__(self) -> str:
        layout = str(self.layout) if self.layout.has_braces else ""
        return f"{self.dtype}[{','.join(map(str, self.dims))}]{layout}"
