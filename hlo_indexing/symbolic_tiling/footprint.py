"""What a tiling moves: bytes per tile and per output element, and tilings ranked.

For concrete tile sizes, :func:`tiling_footprint` instantiates the tiled computation
(:func:`~.tiled_computation.tiled_computation`) and, per fusion parameter and per output,
counts what one tile touches at every program id:

* the tile *box* is ``offset + stride * iota(size)`` per dimension; only the indices
  inside the array are read (a box hanging over the edge reads fewer elements, the
  rest are masked lanes);
* with a row-major (untiled) layout, one tile reads its distinct in-bounds elements;
  with an XLA tiled layout (``{1,0:T(8,128)}``, :mod:`hlo_indexing.layout.tiling`) it
  reads every *layout tile* (the first tile level, a contiguous block of the buffer)
  that holds one of them, padding included;
* a parameter read by the programs of a dot's operand region is read once per
  contracting step: its bytes per tile are one step's block, its bytes moved are
  summed over the steps.

The per-tile footprint (what must be resident at once) is the maximum over program ids
of the sum over operands and outputs; bytes moved are summed over all programs. A
parameter read through several different tiles counts the union of their elements.
:func:`~.ranking.rank_tilings` ranks every valid tiling by these figures, without
building each one (:mod:`.ranking`).

A footprint may carry the tiling's exactness (:mod:`~.exactness`: per operand, the
fraction of its tile elements the fused maps read): ``tiling_footprint(...,
exactness=True)`` or :func:`with_exactness` on a ranked footprint.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import cast

import numpy as np

from hlo_indexing.layout.attributes import LayoutLike, as_layout, declared_layouts
from hlo_indexing.dialect_glue.bindings import SsaValue, ir
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.layout.tiling import offsets_array, plan
from hlo_indexing.layout.types import COMBINE, Layout
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import remove_unused_symbols
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.points import distinct, distinct_rows, numbered_rows
from hlo_indexing.symbolic_tiling.exactness import TilingExactness, computation_exactness, tiling_exactness
from hlo_indexing.symbolic_tiling.tiled_computation import TiledInstruction, tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion

#: Largest number of tile elements enumerated for a parameter read through several tiles
#: or a layout whose layout tiles are not a product of per-dimension blocks.
MAX_ENUMERATED = 1 << 24
#: Tile elements of a union of tiles counted at once (bounds the memory of one count).
UNION_CHUNK = 1 << 20
#: Most tiles of one parameter counted by inclusion-exclusion (2**n - 1 intersections).
MAX_UNION_BOXES = 6


class FootprintError(HloIndexingError):
    """A footprint cannot be computed (unknown element type, layout of the wrong rank,
    an operand read by the programs of different dots, or :class:`FootprintLimitError`)."""


class FootprintLimitError(FootprintError):
    """A footprint is too large to count: too many tile elements, rows or box
    intersections (the limits of this module). A ranking leaves such a tiling out as
    capped; the structural failures of :class:`FootprintError` stop it. ``subject``: the
    instruction whose tiles are too many, ``detail``: the count (the message is both)."""

    def __init__(self, subject: str, detail: str):
        super().__init__(f"{subject}: {detail}")
        self.subject = subject
        self.detail = detail


@dataclass(frozen=True)
class OperandFootprint:
    """What the tiles of one fusion parameter (``kind == "operand"``) or output
    (``kind == "output"``) touch. ``unit_bytes`` is the byte size of what is moved at
    once: an element, or a whole layout tile."""

    kind: str
    index: int
    name: str
    shape: tuple[int, ...]
    layout: Layout
    element_bytes: int
    unit_bytes: int
    tile_sizes: tuple[int, ...]
    tile_strides: tuple[int, ...]
    #: Bytes one tile touches (maximum over program ids and contracting steps).
    bytes_per_tile: int
    #: Bytes touched summed over every program (and contracting step); where tiles move
    #: with runtime values (a dynamic slice's start), their average, rounded down.
    bytes_moved: int
    #: Bytes of in-bounds tile elements summed over every program (``bytes_moved`` minus
    #: the padding of layout tiles), averaged as ``bytes_moved``.
    useful_bytes: int
    #: Contracting steps per output tile (1 outside a dot's operand region).
    steps: int


@dataclass(frozen=True)
class Footprint:
    """The footprint of one tiling (flat ``tile_sizes``, one per tiling parameter)."""

    tile_sizes: tuple[int, ...]
    num_tiles: int
    output_elements: int
    operands: tuple[OperandFootprint, ...]
    outputs: tuple[OperandFootprint, ...]
    #: The exactness of the operand tiles, when computed (see :func:`with_exactness`).
    exactness: TilingExactness | None = None

    @property
    def num_programs(self) -> int:
        """Programs including contracting steps: :attr:`num_tiles` times the most steps."""
        return self.num_tiles * max((o.steps for o in self.operands), default=1)

    @property
    def bytes_read_per_tile(self) -> int:
        """Bytes one tile reads, all operands (one contracting step)."""
        return sum(o.bytes_per_tile for o in self.operands)

    @property
    def bytes_written_per_tile(self) -> int:
        """Bytes one tile writes, all outputs."""
        return sum(o.bytes_per_tile for o in self.outputs)

    @property
    def bytes_per_tile(self) -> int:
        """The per-tile footprint: bytes read plus bytes written by one tile."""
        return self.bytes_read_per_tile + self.bytes_written_per_tile

    @property
    def bytes_moved(self) -> int:
        """Bytes read and written by all tiles."""
        return sum(o.bytes_moved for o in self.operands + self.outputs)

    @property
    def bytes_per_output_element(self) -> float:
        """:attr:`bytes_moved` divided by the number of output elements."""
        return self.bytes_moved / max(self.output_elements, 1)

    @property
    def padding_waste(self) -> float:
        """The fraction of bytes moved that is layout-tile padding (0.0 when none)."""
        moved = self.bytes_moved
        return 0.0 if moved == 0 else 1.0 - sum(o.useful_bytes for o in self.operands + self.outputs) / moved

    def to_json(self) -> dict[str, object]:
        """A JSON-ready summary (sizes, counts, per operand and output; ``exactness``,
        one entry per parameter, when computed)."""
        out: dict[str, object] = {
            "tile_sizes": list(self.tile_sizes),
            "num_tiles": self.num_tiles,
            "bytes_per_tile": self.bytes_per_tile,
            "bytes_read_per_tile": self.bytes_read_per_tile,
            "bytes_written_per_tile": self.bytes_written_per_tile,
            "bytes_moved": self.bytes_moved,
            "bytes_per_output_element": self.bytes_per_output_element,
            "padding_waste": self.padding_waste,
            "operands": [_operand_json(o) for o in self.operands + self.outputs],
        }
        if self.exactness is not None:
            out["exactness"] = self.exactness.to_json()
        return out

    def renamed(self, names: Mapping[str, str]) -> "Footprint":
        """The same footprint with each operand's, output's and exactness parameter's name
        replaced through ``names`` (those it lacks kept): for another fusion with the same
        body. Unchanged parts are shared (``self`` when no name changes); :meth:`__str__`
        names only the exactness parameters, so it changes only when :attr:`exactness`
        is replaced."""
        operands, outputs = _renamed_operands(self.operands, names), _renamed_operands(self.outputs, names)
        exactness = self.exactness.renamed(names) if self.exactness is not None else None
        if operands is self.operands and outputs is self.outputs and exactness is self.exactness:
            return self
        return replace(self, operands=operands, outputs=outputs, exactness=exactness)

    def __str__(self) -> str:
        text = (
            f"tile sizes {list(self.tile_sizes)}: {self.num_tiles} tiles, {self.bytes_per_tile} B per tile "
            f"(read {self.bytes_read_per_tile}, write {self.bytes_written_per_tile}), "
            f"{self.bytes_per_output_element:.3g} B per output element, padding waste {self.padding_waste:.1%}"
        )
        return text if self.exactness is None else f"{text}, {self.exactness}"


def _renamed_operands(footprints: tuple[OperandFootprint, ...], names: Mapping[str, str]) -> tuple[OperandFootprint, ...]:
    """``footprints`` named through ``names`` (the same tuple when no name changes)."""
    if all(names.get(o.name, o.name) == o.name for o in footprints):
        return footprints
    return tuple(replace(o, name=names.get(o.name, o.name)) for o in footprints)


def renamed_json(fields: Mapping[str, object], names: Mapping[str, str]) -> dict[str, object]:
    """What :meth:`Footprint.to_json` gives for :meth:`Footprint.renamed`, from
    ``fields``, the footprint's own, without counting again: each operand's, output's
    and exactness parameter's ``name`` replaced through ``names``, in a new dict whose
    lists and dicts are new too."""
    out = _json_copy(fields)
    for key in ("operands", "exactness"):
        if key in out:
            out[key] = [{**_json_copy(entry), "name": names.get(str(entry["name"]), entry["name"])}
                        for entry in cast(list[dict[str, object]], out[key])]
    return out


def _json_copy(fields: Mapping[str, object]) -> dict[str, object]:
    """``fields`` with each list value copied (one level: the lists of a footprint's JSON
    hold numbers, or the entries :func:`renamed_json` copies)."""
    return {key: list(value) if isinstance(value, list) else value for key, value in fields.items()}


def _operand_json(o: OperandFootprint) -> dict[str, object]:
    return {
        "kind": o.kind,
        "index": o.index,
        "name": o.name,
        "layout": str(o.layout),
        "tile_sizes": list(o.tile_sizes),
        "tile_strides": list(o.tile_strides),
        "bytes_per_tile": o.bytes_per_tile,
        "bytes_moved": o.bytes_moved,
        "steps": o.steps,
    }


def element_bytes(value_type: ir.Type) -> int:
    """Bytes of one element of a ranked tensor type (sub-byte types and ``i1`` round up
    to 1). Raises :class:`FootprintError` for a type without a width (``index``)."""
    return _scalar_bytes(ir.ShapedType(value_type).element_type)


def _scalar_bytes(element: ir.Type) -> int:
    if isinstance(element, ir.ComplexType):
        return 2 * _scalar_bytes(element.element_type)
    if isinstance(element, (ir.IntegerType, ir.FloatType)):
        return max(1, -(-element.width // 8))
    raise FootprintError(f"element type {element} has no known width")


def declared_parameter_layouts(op: ir.Operation) -> tuple[dict[int, Layout | str], dict[int, Layout | str]]:
    """The ``hlo_indexing.layout`` attributes of a ``func.func``'s arguments and results
    (or of an ``mhlo.fusion``'s operands and results), by position; missing ones left out."""
    arguments, results = declared_layouts(op)
    return (
        {k: text for k, text in enumerate(arguments) if text is not None},
        {k: text for k, text in enumerate(results) if text is not None},
    )


def tiling_footprint(
    fusion: TiledFusion,
    tile_sizes: Sequence[int],
    *,
    layouts: Mapping[int, LayoutLike] | None = None,
    output_layouts: Mapping[int, LayoutLike] | None = None,
    exactness: bool = False,
) -> Footprint:
    """The :class:`Footprint` of flat ``tile_sizes`` (see the module docstring).
    ``layouts``/``output_layouts``: per parameter/output number, a Layout or its text
    (default row-major); ``exactness``: compute :attr:`Footprint.exactness` too.
    Raises :class:`~hlo_indexing.errors.TilingError` when the sizes are not a valid tiling,
    :class:`FootprintError` when counting is impossible."""
    computation = tiled_computation(fusion, list(tile_sizes))
    ranges = fusion.runtime_ranges
    operands = tuple(
        _footprint("operand", number, insts, (layouts or {}).get(number), computation.num_programs, ranges)
        for number, insts in sorted(computation.by_parameter().items())
    )
    outputs = tuple(
        _footprint("output", k, [root], (output_layouts or {}).get(k), computation.num_programs, ranges)
        for k, root in enumerate(computation.roots)
    )
    output_elements = math.prod(_shape(computation.roots[0]))
    exact = computation_exactness(fusion, computation) if exactness else None
    return Footprint(tuple(tile_sizes), computation.num_programs, output_elements, operands, outputs, exact)


def with_exactness(fusion: TiledFusion, footprint: Footprint, *, prove: bool = False) -> Footprint:
    """``footprint`` (a tiling of ``fusion``) with :attr:`Footprint.exactness` computed
    (e.g. for the best few of a ranking only), proven by isl too when ``prove``."""
    return replace(footprint, exactness=tiling_exactness(fusion, footprint.tile_sizes, prove=prove))


def _shape(inst: TiledInstruction) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(inst.node.value.type).shape)


def _footprint(
    kind: str, index: int, insts: list[TiledInstruction], layout_like: LayoutLike, num_programs: int,
    ranges: Mapping[str, Interval],
) -> OperandFootprint:
    first = insts[0]
    shape = _shape(first)
    try:
        layout = as_layout(layout_like, len(shape))
    except ValueError as exc:
        raise FootprintError(f"{kind} {index} ({first.name}): {exc}") from exc
    size = element_bytes(first.node.value.type)
    unit = layout_unit_elements(layout, len(shape))
    offsets_map = first.tile_offsets_indexing
    pid_range = offsets_map.dim_ranges[0]
    # Program ids past the root's are contracting steps (a concatenate operand's ids
    # are those of its region); runtime variables multiply the enumerated points.
    steps = max(1, -(-(pid_range.upper + 1) // max(num_programs, 1)))
    values = _runtime_values(insts, ranges)
    repeats = math.prod(len(v) for v in values.values())
    weight = 1
    if len(insts) == 1 and unit is not None:
        units, elements, weight = _separable_counts(first, shape, layout)
        unit_elements = unit
    else:
        units, elements, unit_elements = _enumerated_counts(insts, shape, layout, values)
    # Bytes moved average over the values of runtime variables.
    return OperandFootprint(
        kind=kind,
        index=index,
        name=first.name,
        shape=shape,
        layout=layout,
        element_bytes=size,
        unit_bytes=unit_elements * size,
        tile_sizes=first.tile_sizes,
        tile_strides=first.tile_strides,
        bytes_per_tile=int(units.max(initial=0)) * unit_elements * size,
        # averaged over the runtime values (a dynamic slice's start), in bytes, rounded down
        bytes_moved=int(units.sum()) * weight * unit_elements * size // repeats,
        useful_bytes=int(elements.sum()) * weight * size // repeats,
        steps=steps,
    )


def layout_unit_elements(layout: Layout, rank: int) -> int | None:
    """Elements of one layout tile when layout tiles are blocks of the logical dims
    (first tile without ``*``, no longer than the rank); 1 untiled; None otherwise."""
    if not layout.tiles:
        return 1
    tile = layout.tiles[0]
    if COMBINE in tile or len(tile) > rank:
        return None
    return math.prod(tile)


def layout_divisors(layout: Layout, rank: int) -> list[int]:
    """Per logical dim, the size of a layout tile along it (1 when not tiled)."""
    divisors = [1] * rank
    if layout.tiles:
        permutation = list(reversed(layout.minor_to_major))
        tile = layout.tiles[0]
        for j, t in zip(permutation[rank - len(tile) :], tile):
            divisors[j] = t
    return divisors


def _runtime_values(insts: Sequence[TiledInstruction], ranges: Mapping[str, Interval]) -> dict[SsaValue, range]:
    """Every value of each runtime value ``insts``' tiles move with (by the value it
    reads): the range its op gives it (``ranges``, by origin). An offsets map's range
    may be narrower, where its constraints leave values out: the tile reads nothing at
    those, and they still count in the average over the values."""
    found: dict[SsaValue, range] = {}
    for inst in insts:
        for source, variable in zip(inst.runtime_variables, inst.tile_offsets_indexing.runtime_vars):
            bounds = ranges.get(variable.origin, variable.bounds)
            found[source.node.value] = range(bounds.lower, bounds.upper + 1)
    return found


def _offsets(inst: TiledInstruction) -> tuple[np.ndarray, np.ndarray]:
    """Tile offsets, one row per program id (and runtime value) in the domain of the
    offsets map, and each row's point (the program id, then the runtime values)."""
    points, images = inst.tile_offsets_indexing.enumerate(max_points=MAX_ENUMERATED)
    return images.reshape(len(images), len(inst.tile_sizes)), points


def _separable_counts(inst: TiledInstruction, shape: tuple[int, ...], layout: Layout) -> tuple[np.ndarray, np.ndarray, int]:
    """Per point of the tile offsets map: layout tiles touched and in-bounds elements,
    one tile whose layout tiles are blocks, as products over dimensions; and how many
    points of the map each stands for (its sums are that many times as large).

    A dimension whose tile lies inside the array at every offset the map's ranges allow
    (and is not split into layout tiles) counts the same everywhere: its offset is not
    evaluated, and the variables only such dimensions read are not enumerated when no
    constraint names them (a gather's runtime start over an operand of thousands of rows
    moves tiles that are always whole)."""
    m = inst.tile_offsets_indexing
    divisors = layout_divisors(layout, len(shape))
    fixed = 1
    varying: list[int] = []
    for d, (expr, extent, n, stride, divisor) in enumerate(zip(m.results, shape, inst.tile_sizes, inst.tile_strides, divisors)):
        if divisor == 1 and _always_inside(m, expr, n, stride, extent):
            fixed *= n if stride else min(n, 1)
        else:
            varying.append(d)
    enumerated, weight = _reading(m, [m.results[d] for d in varying])
    _, offsets = enumerated.enumerate(max_points=MAX_ENUMERATED)
    units = np.full(len(offsets), fixed, np.int64)
    elements = np.full(len(offsets), fixed, np.int64)
    for column, d in enumerate(varying):
        count = len(offsets)
        dim_units, dim_elements = dim_counts(
            offsets[:, column], np.full(count, inst.tile_sizes[d], np.int64), np.full(count, inst.tile_strides[d], np.int64),
            shape[d], divisors[d],
        )
        units *= dim_units
        elements *= dim_elements
    return units, elements, weight


def _always_inside(m: IndexingMap, offset: ir.AffineExpr, size: int, stride: int, extent: int) -> bool:
    """Whether ``offset + stride * iota(size)`` lies in ``0 .. extent - 1`` wherever the
    offset is defined over the map's ranges (interval bounds: sound, may say no)."""
    if ax.zero_divisors(offset, m.dim_ranges, m.symbol_ranges):
        return False
    bounds = m.expr_bounds(offset)
    span = stride * (size - 1)
    return bounds.lower + min(span, 0) >= 0 and bounds.upper + max(span, 0) <= extent - 1


def _reading(m: IndexingMap, results: list[ir.AffineExpr]) -> tuple[IndexingMap, int]:
    """``m`` with only ``results``, without the symbols that neither they nor a
    constraint read, and the number of points of ``m`` each of its points stands for
    (the dropped symbols' values)."""
    selected = m.replace(affine_map=ir.AffineMap.get(m.num_dims, m.num_symbols, results, m.context))
    reduced = remove_unused_symbols(selected, remember=False)
    if len(reduced.constraints) != len(selected.constraints) or reduced.is_known_empty() != selected.is_known_empty():
        return selected, 1  # a constraint over dropped symbols only: their values are not a box
    return reduced, selected.domain_size() // max(reduced.domain_size(), 1)


def dim_counts(
    offsets: np.ndarray, sizes: np.ndarray, strides: np.ndarray, extent: int, divisor: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per point: layout tiles (``divisor`` indices each) and in-bounds indices of
    ``offset + stride * iota(size)`` along one dimension of ``extent``."""
    # A negative stride reads the same indices as its mirror walked from the other end.
    offsets = np.where(strides < 0, offsets + strides * (sizes - 1), offsets)
    strides = np.abs(strides)
    step = np.maximum(strides, 1)
    first = np.maximum(0, -(offsets // step))
    last = np.minimum(sizes - 1, (extent - 1 - offsets) // step)
    inside = (offsets >= 0) & (offsets < extent)
    elements = np.where(strides == 0, inside, np.maximum(0, last - first + 1)) * (sizes > 0)
    if divisor == 1:
        return elements, elements
    # Unit strides touch an interval of indices, so an interval of layout tiles; stride 0
    # one index, strides of a layout tile or more one layout tile per index; other
    # strides are counted.
    interval = np.where(elements > 0, (offsets + last) // divisor - (offsets + first) // divisor + 1, 0)
    units = np.where(strides == 1, interval, elements)
    between = np.flatnonzero((strides > 1) & (strides < divisor) & (elements > 0))
    if len(between):
        triples = np.stack([offsets[between], sizes[between], strides[between]], axis=1)
        values, _, inverse = distinct_rows(triples)
        per_value = np.empty(len(values), np.int64)
        for j, (offset, size, stride) in enumerate(values.tolist()):
            indices = offset + stride * np.arange(size, dtype=np.int64)
            per_value[j] = len(distinct(indices[(indices >= 0) & (indices < extent)] // divisor))
        units[between] = per_value[inverse]
    return units, elements


def box_interval(
    offsets: np.ndarray, sizes: np.ndarray, strides: np.ndarray, extent: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """The first and last index (clipped to ``0 .. extent - 1``; last < first when
    empty) of ``offset + stride * iota(size)`` at every point; None when a stride other
    than 0 or 1 makes it no interval."""
    if np.any((np.abs(strides) > 1) & (sizes > 1)):
        return None
    span = np.where(sizes > 0, (sizes - 1) * np.abs(strides), -1)
    low = np.where(strides < 0, offsets - span, offsets)
    return np.maximum(low, 0), np.minimum(low + span, extent - 1)


def union_of_boxes(
    boxes: Sequence[Sequence[tuple[np.ndarray, np.ndarray]]], divisors: Sequence[int], total: int
) -> tuple[np.ndarray, np.ndarray]:
    """Layout tiles (blocks of ``divisors`` indices) and elements of the union of
    ``boxes`` at each of ``total`` points: each box is, per dimension, its first and
    last index at every point (:func:`box_interval`); inclusion-exclusion over the
    intersections of the boxes' elements and of their layout tiles (an interval of
    layout tiles per dimension too)."""
    tiled = [
        [(first, last, first // divisor, np.where(last >= first, last // divisor, first // divisor - 1))
         for (first, last), divisor in zip(box, divisors)]
        for box in boxes
    ]
    units = np.zeros(total, np.int64)
    elements = np.zeros(total, np.int64)
    for count in range(1, len(tiled) + 1):
        sign = 1 if count % 2 else -1
        for subset in itertools.combinations(tiled, count):
            subset_units = np.ones(total, np.int64)
            subset_elements = np.ones(total, np.int64)
            for k in range(len(divisors)):
                for (low_k, high_k), out in (((0, 1), subset_elements), ((2, 3), subset_units)):
                    first = np.max([box[k][low_k] for box in subset], axis=0)
                    last = np.min([box[k][high_k] for box in subset], axis=0)
                    out *= np.maximum(last - first + 1, 0)
            units += sign * subset_units
            elements += sign * subset_elements
    return units, elements


def _enumerated_counts(
    insts: list[TiledInstruction], shape: tuple[int, ...], layout: Layout, values: Mapping[SsaValue, range]
) -> tuple[np.ndarray, np.ndarray, int]:
    """Per row (a program id and the runtime values, each of ``values`` when the tiles
    read different ones: :func:`_joint_rows`): layout tiles touched and in-bounds
    elements of the union of ``insts``' tiles, and the elements of a layout tile: by
    inclusion-exclusion over their boxes (:func:`union_of_boxes`) when they are
    intervals along every dimension, there are at most :data:`MAX_UNION_BOXES` and
    layout tiles are blocks; else by enumerating every element (and, with layout tiles,
    its buffer offset), at most :data:`UNION_CHUNK` tile elements at a time."""
    unit = math.prod(t for t in layout.tiles[0] if t != COMBINE) if layout.tiles else 1
    if len({inst.node.hidden for inst in insts}) > 1:
        raise FootprintError(f"{insts[0].name} is read by the programs of different dots")
    # Rows are (program id, runtime values), the values named by what they read; a
    # tile whose offsets map leaves a program out (a concatenate operand at another
    # operand's programs) reads nothing there.
    sources = [list(dict.fromkeys(v.node.value for v in inst.runtime_variables)) for inst in insts]
    order = list(dict.fromkeys(v for names in sources for v in names))
    all_offsets = [_offsets(inst) for inst in insts]
    blocks = layout_unit_elements(layout, len(shape)) is not None
    by_boxes = blocks and len(insts) <= MAX_UNION_BOXES and all(
        abs(s) <= 1 or n <= 1 for i in insts for n, s in zip(i.tile_sizes, i.tile_strides))
    if by_boxes:  # rows multiply with the runtime values of the tiles, intersections with the tiles
        row_count = max(len(p) * math.prod(len(values[v]) for v in order if v not in names)
                        for names, (_, p) in zip(sources, all_offsets))
        intersections = row_count * (2 ** len(insts) - 1)
        if intersections > MAX_ENUMERATED:
            raise FootprintLimitError(insts[0].name, f"{row_count} rows (programs times runtime values) of "
                                      f"{len(insts)} tiles are {intersections} box intersections, too many to count")
    if any(len(names) != len(order) for names in sources):
        all_offsets = _joint_rows(insts[0].name, sources, order, all_offsets, values)
        sources = [order] * len(insts)
    points = np.concatenate([p[:, [0] + [1 + names.index(v) for v in order]] for names, (_, p) in zip(sources, all_offsets)])
    if not len(points):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), unit
    program, programs = numbered_rows(points)
    owner = np.concatenate([np.full(len(o), k, np.int64) for k, (o, _) in enumerate(all_offsets)])
    offsets = np.concatenate([o for o, _ in all_offsets])
    if by_boxes:
        boxes = []  # per tile, per dimension: its first and last index at each program (none: empty)
        for k, inst in enumerate(insts):
            mine = owner == k
            box = []
            for d, extent in enumerate(shape):
                first, last = np.zeros(programs, np.int64), np.full(programs, -1, np.int64)
                count = int(mine.sum())
                interval = box_interval(
                    offsets[mine, d], np.full(count, inst.tile_sizes[d], np.int64), np.full(count, inst.tile_strides[d], np.int64),
                    extent,
                )
                assert interval is not None, "strides of 0 or 1 make intervals"
                first[program[mine]], last[program[mine]] = interval
                box.append((first, last))
            if not shape:  # a scalar: its one element where the tile is, none at the other rows
                first, last = np.zeros(programs, np.int64), np.full(programs, -1, np.int64)
                last[program[mine]] = 0
                box.append((first, last))
            boxes.append(box)
        units, elements = union_of_boxes(boxes, layout_divisors(layout, len(shape)) or [1], programs)
        return units, elements, unit
    work = sum(len(o) * math.prod(inst.tile_sizes) for inst, (o, _) in zip(insts, all_offsets))
    if work > MAX_ENUMERATED:
        raise FootprintLimitError(insts[0].name, f"{work} tile elements are too many to enumerate")
    # Whole programs per chunk, about UNION_CHUNK tile elements each.
    cost = np.bincount(program, weights=np.array([math.prod(inst.tile_sizes) for inst in insts], np.float64)[owner],
                       minlength=programs)
    chunk_of_program = (np.cumsum(cost) - cost) // UNION_CHUNK
    buffer = offsets_array(plan(shape, layout)).reshape(-1) if layout.tiles else None
    units = np.zeros(programs, np.int64)
    elements = np.zeros(programs, np.int64)
    for chunk in distinct(chunk_of_program).tolist():
        begin = int(np.searchsorted(chunk_of_program, chunk))
        members = int(np.searchsorted(chunk_of_program, chunk, side="right")) - begin
        rows = np.flatnonzero(chunk_of_program[program] == chunk)
        element_keys, unit_keys = [], []
        for k, inst in enumerate(insts):
            mine = rows[owner[rows] == k]
            if len(mine):
                linear = _box_elements(offsets[mine], inst.tile_sizes, inst.tile_strides, shape)
                local = np.broadcast_to((program[mine] - begin).reshape((-1,) + (1,) * len(shape)), linear.shape)
                inside = linear >= 0
                element_keys.append(local[inside] * max(math.prod(shape), 1) + linear[inside])
                if buffer is not None:
                    unit_keys.append(local[inside] * (int(buffer.max()) // unit + 1) + buffer[linear[inside]] // unit)
        found = distinct(np.concatenate(element_keys)) // max(math.prod(shape), 1)
        elements[begin:begin + members] = np.bincount(found, minlength=members)
        if buffer is None:
            units[begin:begin + members] = elements[begin:begin + members]
        else:
            found = distinct(np.concatenate(unit_keys)) // (int(buffer.max()) // unit + 1)
            units[begin:begin + members] = np.bincount(found, minlength=members)
    return units, elements, unit


def _joint_rows(
    name: str, sources: Sequence[Sequence[SsaValue]], order: Sequence[SsaValue],
    all_offsets: list[tuple[np.ndarray, np.ndarray]], values: Mapping[SsaValue, range],
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Tiles that read different runtime values (a dynamic slice of an operand also
    read at a fixed offset): every tile's rows over all of them, in ``order``, each
    over its ``values`` (a tile is the same at every value of a variable it does not
    read). Raises :class:`FootprintError` past :data:`MAX_ENUMERATED` rows."""
    joint = []
    for names, (offsets, points) in zip(sources, all_offsets):
        missing = [v for v in order if v not in names]
        combinations = math.prod(len(values[v]) for v in missing)
        if len(points) * combinations > MAX_ENUMERATED:
            raise FootprintLimitError(name, f"{len(points) * combinations} rows of tiles over the runtime values of "
                                      "all its readers are too many to enumerate")
        grids = np.meshgrid(*(np.arange(values[v].start, values[v].stop, dtype=np.int64) for v in missing), indexing="ij")
        extra = np.stack([g.reshape(-1) for g in grids], axis=1) if missing else np.zeros((1, 0), np.int64)
        rows = np.concatenate([np.repeat(points, combinations, axis=0), np.tile(extra, (len(points), 1))], axis=1)
        own = [0] + [1 + names.index(v) if v in names else 1 + len(names) + missing.index(v) for v in order]
        joint.append((np.repeat(offsets, combinations, axis=0), rows[:, own]))
    return joint


def _box_elements(offsets: np.ndarray, sizes: Sequence[int], strides: Sequence[int], shape: Sequence[int]) -> np.ndarray:
    """Per row of ``offsets``, the row-major index of every element of the box
    ``offset + stride * iota(size)``, -1 where it lies outside ``shape``: an array of
    shape ``(rows, *sizes)``."""
    rank = len(shape)
    linear = np.zeros((len(offsets),) + (1,) * rank, np.int64)
    inside = np.ones((len(offsets),) + (1,) * rank, bool)
    for d, (n, stride, extent) in enumerate(zip(sizes, strides, shape)):
        along = [len(offsets)] + [1] * rank
        along[d + 1] = n
        index = offsets[:, d : d + 1] + stride * np.arange(n, dtype=np.int64)[None, :]
        ok = (index >= 0) & (index < extent)
        linear = linear * extent + np.where(ok, index, 0).reshape(along)
        inside = inside & ok.reshape(along)
    return np.where(inside, linear, -1)
