"""Tile soundness one runtime value at a time (``benchmarks/tile_soundness.py``'s check of
the tiles read at runtime offsets).

A tile whose offsets are runtime values (a gather's indices, a dynamic slice's start)
has one box per value it may read at: a gather from a 30522-row table has 30522 boxes
for one output tile. Comparing the elements the fused maps need at *every* value with
the union of *every* box is nearly vacuous (the union is the whole table) and is refused
past :data:`~hlo_indexing.symbolic_tiling.tile_picture.MAX_BOXES`. This check fixes the
runtime values instead: for each fused output -> parameter map and each sampled
assignment ``w`` of its runtime variables (all of them when at most ``samples``, else
the first, the last and evenly spaced between, like the tile ids), the elements the map
needs for the output tile at ``w`` must lie in the boxes read at no runtime value plus
the boxes of **one** runtime value of **one** tiled instruction (all its contracting
steps). The program reads one runtime value per tile (the analysis makes a tile size 1
along any dimension whose offset is read per element), so whatever value it reads at
``w``, a ``w`` whose needed elements no single value's boxes hold is a tile that misses
elements: a failure is real whenever the maps are exact and ``w`` can occur. The check
is stronger than the union one (it implies it at the checked values); it is bounded by
``samples`` assignments per map, one enumeration of the needed elements at each, and
for the boxes, only those holding the first element not read at every value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.symbolic_tiling.time_budget import check_time
from hlo_indexing.symbolic_tiling.tile_picture import ParameterReads, TileReads, ValueBoxes, needed_array

#: Runtime-variable assignments checked per fused map (all when at most this many).
VALUE_SAMPLES = 16


@dataclass(frozen=True)
class ValueMiss:
    """Needed elements of one parameter that the boxes of no single runtime value hold:
    the map's runtime variables at ``value``, ``needed`` elements needed there, the
    ``missing`` ones (outside the boxes of the value that holds the most)."""

    value: tuple[int, ...]
    needed: int
    missing: tuple[tuple[int, ...], ...]


def evenly_spaced(count: int, samples: int) -> list[int]:
    """At most ``samples`` (>= 2) of ``[0, count)``: all when at most ``samples``, else
    the first, the last and evenly spaced between."""
    if count <= samples:
        return list(range(count))
    return sorted({round(k * (count - 1) / (samples - 1)) for k in range(samples)})


def sample_values(m: IndexingMap, samples: int = VALUE_SAMPLES) -> list[tuple[int, ...]]:
    """Assignments of ``m``'s runtime variables within their ranges: the flat indices of
    :func:`evenly_spaced` over the box of ranges, major to minor (``[()]`` without
    runtime variables, ``[]`` when a range is empty)."""
    bounds = [v.bounds for v in m.runtime_vars]
    extents = [b.upper - b.lower + 1 for b in bounds]
    if any(e <= 0 for e in extents):
        return []
    total = int(np.prod(extents, dtype=object)) if extents else 1
    picked = []
    for flat in evenly_spaced(total, samples):
        digits = []
        for extent in reversed(extents):
            flat, digit = divmod(flat, extent)
            digits.append(digit)
        picked.append(tuple(b.lower + d for b, d in zip(bounds, reversed(digits))))
    return picked


def pinned(m: IndexingMap, value: tuple[int, ...]) -> IndexingMap:
    """``m`` with its runtime variables fixed to ``value``."""
    fixed = [Variable(Interval(x, x), v.name, v.origin) for v, x in zip(m.runtime_vars, value, strict=True)]
    return m.replace(runtimes=fixed)


def _inside(delta: np.ndarray, boxes: ValueBoxes) -> np.ndarray:
    """Per row of ``delta`` (an element minus a box's offsets), whether the element lies
    in that box (``boxes``' sizes and strides; a stride of 0 repeats the offset)."""
    inside = np.ones(len(delta), dtype=bool)
    for d, (size, stride) in enumerate(zip(boxes.sizes, boxes.strides)):
        column = delta[:, d]
        if size <= 0:
            return np.zeros(len(delta), dtype=bool)
        if stride == 0 or size == 1:
            inside &= column == 0
        else:
            inside &= (column >= 0) & (column % stride == 0) & (column // stride < size)
    return inside


def _covered(elements: np.ndarray, boxes: ValueBoxes, rows: np.ndarray) -> np.ndarray:
    """Per element, whether one of the boxes ``rows`` of ``boxes`` holds it: the boxes
    painted on a grid over the elements' bounding box (each box's part inside it is a
    strided slice), then read at the elements."""
    low, high = elements.min(axis=0), elements.max(axis=0)
    grid = np.zeros(tuple(high - low + 1), dtype=bool)
    for row in rows:
        window = []
        for d, (size, stride) in enumerate(zip(boxes.sizes, boxes.strides)):
            offset = int(boxes.offsets[row, d])
            size = min(size, 1) if stride == 0 else size  # a stride of 0 repeats the offset
            step = max(stride, 1)
            last = offset + step * (size - 1)
            first_k = max(0, -((offset - int(low[d])) // step))  # ceil((low - offset) / step), at least 0
            start = offset + step * first_k
            stop = min(last, offset + step * ((int(high[d]) - offset) // step))
            if size <= 0 or start > stop:
                break
            window.append(slice(start - int(low[d]), stop - int(low[d]) + 1, step))
        else:
            grid[tuple(window)] = True
    return grid[tuple((elements - low).T)]


def value_misses(reads: TileReads, parameter: ParameterReads, samples: int = VALUE_SAMPLES) -> tuple[int, int, list[ValueMiss]]:
    """Check ``parameter`` of the tile ``reads`` one runtime value at a time (module
    docstring). Returns the assignments checked, the needed elements compared and the
    misses."""
    static = [(b, np.arange(len(b.offsets))) for b in parameter.boxes if b.values.shape[1] == 0]
    keyed = [b for b in parameter.boxes if b.values.shape[1] > 0]
    what = f"{reads.label}: parameter {parameter.index}"
    checked, compared, misses = 0, 0, []
    for m in sorted(parameter.maps, key=str):
        if m.is_known_empty():
            continue
        for value in sample_values(m, samples):
            check_time("checking the tiles one runtime value at a time")
            elements = needed_array(frozenset({pinned(m, value)}), reads.output, what, None)
            checked += 1
            compared += len(elements)
            if not len(elements) or not elements.shape[1]:
                continue  # nothing needed, or a scalar parameter (every box holds its one element)
            rest = elements[~np.any([_covered(elements, b, rows) for b, rows in static], axis=0)] if static else elements
            missing = rest
            for boxes in keyed:
                if not len(missing):
                    break
                for key in {tuple(v) for v in boxes.values[_inside(rest[0] - boxes.offsets, boxes)].tolist()}:
                    rows = np.flatnonzero((boxes.values == np.array(key)).all(axis=1))
                    left = rest[~_covered(rest, boxes, rows)]
                    if len(left) < len(missing):
                        missing = left
            if len(missing):
                misses.append(ValueMiss(value, len(elements), tuple(tuple(e) for e in missing.tolist())))
    return checked, compared, misses
