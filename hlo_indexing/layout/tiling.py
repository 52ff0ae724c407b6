"""Placement of array elements under a tiled layout.

A :class:`TilingPlan` describes how a logical index becomes a physical position, as a
sequence of steps (XLA's tiled-layout semantics, ``spec/tiled-layout.md``):

1. permute the logical dims into physical order (``minor_to_major`` reversed);
2. for each tile, left to right: prepend size-1 dims if the tile is longer than the
   current shape, combine every ``*`` dim with the next more-minor one, then pad each
   covered dim to a multiple of its tile size, split it into (tile index, in-tile
   index) and move all in-tile parts, in order, to the minor end;
3. the linear offset is the row-major index over the final (tiled) shape; ``L(n)``
   rounds the buffer size up to a multiple of ``n``.

The steps are written once, generically over an arithmetic (:class:`Arith`), so the same
code computes Python ints, numpy arrays (vectorised) and affine expressions
(:mod:`hlo_indexing.layout.lowering`).

This module is below the layout values (:mod:`hlo_indexing.layout.types`): it reads a
layout's ``minor_to_major``, ``tiles`` and ``tail_padding_alignment`` (a
:class:`TiledLayout`) and a shape's ``dims`` and ``layout`` (a :class:`TiledShape`), so
that ``Layout``'s placement methods are built on it.

Example::

    >>> from hlo_indexing.layout.types import Shape
    >>> s = Shape.parse("f32[3,5]{1,0:T(2,2)}")
    >>> physical_shape(s), padded_size(s), linear_index(s, (2, 3)), logical_index(s, 17)
    ((2, 3, 2, 2), 24, 17, (2, 3))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar, cast, runtime_checkable

import numpy as np

from hlo_indexing.errors import IndexOutOfRangeError, IntegerOverflowError, InvalidArgumentError
from hlo_indexing.limits import INT64_MAX, check_int64

#: tile entry meaning "combine this dimension with the next more-minor one" (XLA's ``*``)
COMBINE = -1

#: returned by :func:`logical_index` for a buffer position that holds no element
PADDING = None


class TiledLayout(Protocol):
    """What placement reads of a layout (:class:`~hlo_indexing.layout.types.Layout` is one)."""

    @property
    def minor_to_major(self) -> tuple[int, ...]:
        """Logical dims from fastest to slowest."""

    @property
    def tiles(self) -> tuple[tuple[int, ...], ...]:
        """The tiles, applied left to right (entries > 0, or :data:`COMBINE`)."""

    @property
    def tail_padding_alignment(self) -> int:
        """``L(n)``: the buffer size is rounded up to a multiple of it."""


@runtime_checkable
class TiledShape(Protocol):
    """What placement reads of a shape (:class:`~hlo_indexing.layout.types.Shape` is one)."""

    @property
    def dims(self) -> tuple[int, ...]:
        """The logical dimensions, dim 0 first."""

    @property
    def layout(self) -> TiledLayout:
        """The layout placing them."""


@dataclass(frozen=True)
class _RowMajor:
    """The default layout ``{rank-1,...,1,0}`` as placement reads it."""

    minor_to_major: tuple[int, ...]
    tiles: tuple[tuple[int, ...], ...] = ()
    tail_padding_alignment: int = 1


@dataclass(frozen=True)
class TileStep:
    """One tile level. ``groups`` partitions the dims of ``input_shape`` (after
    ``ones`` size-1 dims are prepended) into runs combined by ``*``; ``combined`` is the
    resulting shape, whose last ``len(tile)`` dims are tiled into ``output_shape``."""

    input_shape: tuple[int, ...]
    ones: int
    groups: tuple[tuple[int, ...], ...]
    combined: tuple[int, ...]
    tile: tuple[int, ...]
    output_shape: tuple[int, ...]

    @property
    def expanded(self) -> tuple[int, ...]:
        """``input_shape`` with the prepended size-1 dims."""
        return (1,) * self.ones + self.input_shape


@dataclass(frozen=True)
class TilingPlan:
    """How ``dims`` (logical, dim 0 first) are placed by ``layout``."""

    dims: tuple[int, ...]
    layout: TiledLayout
    permutation: tuple[int, ...]  # physical dim j (major to minor) is logical dim permutation[j]
    steps: tuple[TileStep, ...]

    @property
    def physical_dims(self) -> tuple[int, ...]:
        """The logical dimensions in physical order, major to minor (``minor_to_major``
        reversed)."""
        return tuple(self.dims[p] for p in self.permutation)

    @property
    def tiled_shape(self) -> tuple[int, ...]:
        """The physical shape after all tiles, major to minor; ``(1,)`` for an untiled
        scalar (a buffer always has at least one dimension)."""
        if self.steps:
            return self.steps[-1].output_shape
        return self.physical_dims or (1,)

    @property
    def element_count(self) -> int:
        """The number of logical elements (padding excluded)."""
        return math.prod(self.dims)

    @property
    def padded_size(self) -> int:
        """Element slots of the buffer: the tiled shape's size rounded up to the tail padding
        alignment ``L(n)``."""
        size = math.prod(self.tiled_shape)
        align = self.layout.tail_padding_alignment
        return -(-size // align) * align

    @property
    def strides(self) -> tuple[int, ...]:
        """Row-major strides (in elements) of :attr:`tiled_shape`."""
        strides, acc = [], 1
        for extent in reversed(self.tiled_shape):
            strides.append(acc)
            acc *= extent
        return tuple(reversed(strides))


def plan(shape: TiledShape | Sequence[int], layout: TiledLayout | None = None) -> TilingPlan:
    """The :class:`TilingPlan` of a :class:`Shape`, or of ``dims`` and a ``layout``.
    Raises :class:`InvalidArgumentError` (a ``ValueError``) when the layout does not fit
    the dims or a dim is negative, :class:`IntegerOverflowError` for a dim outside int64."""
    dims, layout = _dims_and_layout(shape, layout)
    for d in dims:
        if check_int64(d, "dimension size") < 0:
            raise InvalidArgumentError(f"dimension size {d} is negative (shape {list(dims)})")
    if sorted(layout.minor_to_major) != list(range(len(dims))):
        raise InvalidArgumentError(
            f"minor_to_major {list(layout.minor_to_major)} is not a permutation of the {len(dims)} dims"
        )
    current = tuple(dims[p] for p in reversed(layout.minor_to_major))
    steps = []
    for tile in layout.tiles:
        if any(t != COMBINE and t < 1 for t in tile) or tile[-1] == COMBINE:
            raise InvalidArgumentError(f"invalid tile {tile}: sizes must be positive and '*' not last")
        ones = max(0, len(tile) - len(current))
        expanded = (1,) * ones + current
        base = len(expanded) - len(tile)
        groups: list[tuple[int, ...]] = [(i,) for i in range(base)]
        sizes: list[int] = []
        run: list[int] = []
        for j, t in enumerate(tile):
            run.append(base + j)
            if t != COMBINE:
                groups.append(tuple(run))
                sizes.append(t)
                run = []
        combined = tuple(math.prod(expanded[i] for i in g) for g in groups)
        k = len(sizes)
        head, covered = combined[: len(combined) - k], combined[len(combined) - k :]
        output = head + tuple(-(-d // t) for d, t in zip(covered, sizes)) + tuple(sizes)
        steps.append(TileStep(current, ones, tuple(groups), combined, tuple(sizes), output))
        current = output
    return TilingPlan(tuple(dims), layout, tuple(reversed(layout.minor_to_major)), tuple(steps))


def _dims_and_layout(shape: TiledShape | Sequence[int], layout: TiledLayout | None) -> tuple[tuple[int, ...], TiledLayout]:
    if type(shape) not in (tuple, list) and isinstance(shape, TiledShape):  # (the Protocol check is slow)
        return shape.dims, layout or shape.layout
    dims = tuple(int(d) for d in cast("Sequence[int]", shape))
    return dims, layout or _RowMajor(tuple(range(len(dims) - 1, -1, -1)))


def check_padded_size(dims: Sequence[int], layout: TiledLayout) -> None:
    """Raise :class:`IntegerOverflowError` (an ``OverflowError``) when the padded buffer
    size exceeds int64."""
    size = plan(dims, layout).padded_size
    if size > INT64_MAX:
        raise IntegerOverflowError(f"padded size {size} elements overflows int64", limit="INT64_MAX", value=size)


def physical_shape(shape: TiledShape | Sequence[int], layout: TiledLayout | None = None) -> tuple[int, ...]:
    """The padded, tiled shape, major to minor (``(2, 3, 2, 2)`` for ``f32[3,5]{1,0:T(2,2)}``)."""
    return plan(shape, layout).tiled_shape


def padded_size(shape: TiledShape | Sequence[int], layout: TiledLayout | None = None) -> int:
    """Element slots of the buffer: data, tile padding and ``L(n)`` tail padding."""
    return plan(shape, layout).padded_size


#: The value type an :class:`Arith` computes on.
_N = TypeVar("_N")
#: :class:`IntArith`'s values: ints, or numpy integer arrays (elementwise).
Integers = int | np.ndarray


class Arith(Protocol[_N]):
    """The operations the placement formulas need, on some value type."""

    def zero(self) -> _N:
        """The value 0."""
        ...

    def combine(self, major: _N, minor: _N, minor_extent: int) -> _N:
        """``major * minor_extent + minor``."""
        ...

    def div(self, value: _N, divisor: int) -> _N:
        """``value`` divided by ``divisor``, rounded down."""
        ...

    def mod(self, value: _N, divisor: int) -> _N:
        """``value mod divisor`` (floor semantics)."""
        ...


class IntArith:
    """:class:`Arith` on Python ints or numpy integer arrays (elementwise)."""

    def zero(self) -> Integers:
        """The int 0."""
        return 0

    def combine(self, major: Integers, minor: Integers, minor_extent: int) -> Integers:
        """``major * minor_extent + minor``."""
        return major * minor_extent + minor

    def div(self, value: Integers, divisor: int) -> Integers:
        """``value // divisor``."""
        return value // divisor

    def mod(self, value: Integers, divisor: int) -> Integers:
        """``value % divisor``."""
        return value % divisor


def tiled_coordinates(p: TilingPlan, index: Sequence[_N], arith: Arith[_N]) -> list[_N]:
    """The coordinates of logical ``index`` in :attr:`TilingPlan.tiled_shape`."""
    coords = [index[q] for q in p.permutation]
    for step in p.steps:
        coords = [arith.zero()] * step.ones + coords
        merged = []
        for group in step.groups:
            value = coords[group[0]]
            for i in group[1:]:
                value = arith.combine(value, coords[i], step.expanded[i])
            merged.append(value)
        k = len(step.tile)
        head, covered = merged[: len(merged) - k], merged[len(merged) - k :]
        coords = (
            head
            + [arith.div(c, t) for c, t in zip(covered, step.tile)]
            + [arith.mod(c, t) for c, t in zip(covered, step.tile)]
        )
    return coords or [arith.zero()]


def linear_from_coordinates(p: TilingPlan, coords: Sequence[_N], arith: Arith[_N]) -> _N:
    """The row-major offset of tiled coordinates."""
    value = arith.zero()
    for coord, extent in zip(coords, p.tiled_shape):
        value = arith.combine(value, coord, extent)
    return value


def logical_from_offset(p: TilingPlan, offset: _N, arith: Arith[_N]) -> tuple[list[_N], list[tuple[_N, int]]]:
    """Invert the placement of a buffer ``offset``: returns the logical index and the
    checks ``(value, extent)`` that hold (``0 <= value < extent``) exactly when the
    offset holds an element rather than padding."""
    checks: list[tuple[_N, int]] = []
    shape = p.tiled_shape
    coords = []
    for j, extent in enumerate(shape):
        stride = math.prod(shape[j + 1 :])
        value = arith.div(offset, stride) if stride != 1 else offset
        coords.append(arith.mod(value, extent) if j else value)
    checks.append((coords[0], shape[0]))
    for step in reversed(p.steps):
        k = len(step.tile)
        n = len(step.combined) - k
        merged = coords[:n] + [arith.combine(q, r, t) for q, r, t in zip(coords[n : n + k], coords[n + k :], step.tile)]
        for value, extent in zip(merged[n:], step.combined[n:]):
            checks.append((value, extent))
        coords = []
        for group, value in zip(step.groups, merged):
            parts = []
            for i in reversed(group[1:]):
                parts.append(arith.mod(value, step.expanded[i]))
                value = arith.div(value, step.expanded[i])
            coords.extend([value] + parts[::-1])
        for value in coords[: step.ones]:
            checks.append((value, 1))
        coords = coords[step.ones :]
    position = {q: j for j, q in enumerate(p.permutation)}
    return [coords[position[q]] for q in range(len(p.dims))], checks


def linear_index(shape: TiledShape | Sequence[int], index: Sequence[int], layout: TiledLayout | None = None) -> int:
    """The buffer offset (in elements) of logical ``index`` (dim 0 first).
    :class:`IndexOutOfRangeError` (an ``IndexError``) outside the shape."""
    p = plan(shape, layout)
    if len(index) != len(p.dims) or any(not 0 <= i < d for i, d in zip(index, p.dims)):
        raise IndexOutOfRangeError(f"index {tuple(index)} is out of bounds for shape {list(p.dims)}")
    arith = IntArith()
    return cast(int, linear_from_coordinates(p, tiled_coordinates(p, list(index), arith), arith))


def logical_index(shape: TiledShape | Sequence[int], offset: int, layout: TiledLayout | None = None) -> tuple[int, ...] | None:
    """The logical index stored at buffer ``offset``, or :data:`PADDING` (None) when the
    slot is padding. :class:`IndexOutOfRangeError` (an ``IndexError``) outside the buffer."""
    p = plan(shape, layout)
    if not 0 <= offset < p.padded_size:
        raise IndexOutOfRangeError(f"offset {offset} is outside the buffer of {p.padded_size} elements")
    index, checks = logical_from_offset(p, offset, IntArith())
    if all(0 <= value < extent for value, extent in checks):
        return tuple(int(i) for i in index)
    return PADDING


def offsets_array(p: TilingPlan) -> np.ndarray:
    """The buffer offset of every element, as an int64 array of the logical shape."""
    grids: np.ndarray | list[np.ndarray] = np.indices(p.dims, dtype=np.int64) if p.dims else []
    arith = IntArith()
    result = linear_from_coordinates(p, tiled_coordinates(p, list(grids), arith), arith)
    return np.broadcast_to(np.asarray(result, dtype=np.int64), p.dims)
