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
the boxes (all contracting steps) of one runtime value of one tiled instruction:

- *paired*: when the map's runtime variables are an instruction's (:func:`paired`: the
  same operand number of the op that reads them, the same range, one to one), the
  value ``w`` itself. Both read the same scalar for the tile (the analysis makes a tile size
  1 along any dimension whose offset is read per element), so a miss is a tile that
  reads the wrong elements at ``w``: a box at the wrong value is caught even when the
  union of all boxes holds everything.
- otherwise, any one value: whatever value the program reads at ``w``, a ``w`` whose
  needed elements no single value's boxes hold is a tile that misses elements.

A miss is real whenever the maps are exact, ``w`` can occur and a pairing is right (the
fused maps name an operand number, not the op: two ops reading runtime offsets at the
same operand number over the same range pair with either; two variables the fused map
keeps apart that read one scalar are the known inexactness ``tile_soundness`` reports
apart). The check implies the union one at the values checked; it is bounded by
``samples`` assignments per map, one numpy enumeration of the needed elements at each,
and for the boxes, only those of ``w`` (paired) or holding the first element not read
at every value (unpaired), painted on a grid over the needed elements' bounding box.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.symbolic_tiling.time_budget import check_time
from hlo_indexing.symbolic_tiling.tile_picture import ParameterReads, TileReads, ValueBoxes, needed_array

#: Runtime-variable assignments checked per fused map (all when at most this many).
VALUE_SAMPLES = 16


@dataclass(frozen=True)
class ValueMiss:
    """Needed elements of one parameter that the boxes of no runtime value compared hold:
    the map's runtime variables at ``value``, ``needed`` elements needed there, the
    ``missing`` ones (outside the boxes of the value compared that holds the most)."""

    value: tuple[int, ...]
    needed: int
    missing: tuple[tuple[int, ...], ...]
    #: Whether the boxes compared were those of ``value`` itself (:func:`paired`).
    paired: bool = False


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


def paired(variables: Sequence[Variable], boxes: ValueBoxes) -> bool:
    """Whether a fused map's runtime ``variables`` are those of the instruction of
    ``boxes``, one to one in order: each reads the same operand (the map's ``operand k``
    is the instruction's ``operand k of node n``, with ``, element j`` for an index
    vector) over the same range."""
    return len(variables) == len(boxes.variables) > 0 and all(
        tiled.origin.startswith(f"{fused.origin} of node ") and tiled.bounds == fused.bounds
        for fused, tiled in zip(variables, boxes.variables)
    )


@dataclass
class ValueCheck:
    """What :func:`value_misses` compared: runtime-value assignments ``checked`` (of them
    ``paired``: against the boxes of the same value), needed elements ``compared``, and
    the ``misses``."""

    checked: int = 0
    paired: int = 0
    compared: int = 0
    misses: list[ValueMiss] = field(default_factory=list)


def _candidates(rest: np.ndarray, boxes: ValueBoxes, value: tuple[int, ...] | None) -> list[np.ndarray]:
    """The box rows of each runtime value of ``boxes`` that may hold ``rest``: those of
    ``value`` when given (the map's variables are the instruction's), else of each value
    whose boxes hold ``rest[0]``."""
    if value is not None:
        keys = {value}
    else:
        keys = {tuple(v) for v in boxes.values[_inside(rest[0] - boxes.offsets, boxes)].tolist()}
    return [np.flatnonzero((boxes.values == np.array(key)).all(axis=1)) for key in keys]


def value_misses(reads: TileReads, parameter: ParameterReads, samples: int = VALUE_SAMPLES) -> ValueCheck:
    """Check ``parameter`` of the tile ``reads`` one runtime value at a time (module
    docstring)."""
    static = [(b, np.arange(len(b.offsets))) for b in parameter.boxes if b.values.shape[1] == 0]
    keyed = [b for b in parameter.boxes if b.values.shape[1] > 0]
    what = f"{reads.label}: parameter {parameter.index}"
    found = ValueCheck()
    for m in sorted(parameter.maps, key=str):
        if m.is_known_empty():
            continue
        same = [b for b in keyed if paired(m.runtime_vars, b)]
        for value in sample_values(m, samples):
            check_time("checking the tiles one runtime value at a time")
            elements = needed_array(frozenset({pinned(m, value)}), reads.output, what, None)
            found.checked += 1
            found.paired += bool(same)
            found.compared += len(elements)
            if not len(elements) or not elements.shape[1]:
                continue  # nothing needed, or a scalar parameter (every box holds its one element)
            rest = elements
            if static:
                rest = elements[~np.any([_covered(elements, b, rows) for b, rows in static], axis=0)]
            missing = rest
            for boxes in same or keyed:
                for rows in _candidates(rest, boxes, value if same else None) if len(missing) else []:
                    left = rest[~_covered(rest, boxes, rows)] if len(rows) else rest
                    if len(left) < len(missing):
                        missing = left
            if len(missing):
                found.misses.append(ValueMiss(value, len(elements), tuple(map(tuple, missing.tolist())), bool(same)))
    return found
