"""Every valid tiling of a fusion ranked under a byte budget, at a bounded cost per fusion.

The footprint of one tiling (:func:`~.footprint.tiling_footprint`) instantiates the
tiled computation and enumerates its programs: right for one tiling, but ranking every
candidate that way costs candidates x (analysis + programs), and the candidates are a
product over the tiling parameters (per parameter of size ``n``: the powers of two below
``n``, then ``n``) that explodes with the rank. :func:`rank_tilings` instead evaluates,
once per fusion, what the tiles read as functions of the tile sizes:

* the candidates form a grid (one axis per parameter); the constraints, the program
  counts, negative strides and concatenate alignment are evaluated over the whole grid
  at once (numpy);
* footprints are tabled (:mod:`.tile_counts`): the dimensions of an operand's tile
  fall into *components* (the dimensions whose offset, size and stride expressions share
  tiling parameters, usually one parameter per dimension), whose counts at each tile
  index depend only on their own parameters' sizes: they are computed once per choice
  of those sizes, not once per candidate, and a candidate's bytes per tile (the most
  over programs) and bytes moved (the sum over programs) are products of the
  components' maxima and sums. The work per fusion is the sum over components of
  (choices x tiles) instead of the product over parameters. An operand read through
  several tiles (a softmax's input) is counted jointly over their parameters, the union
  of the tiles by inclusion-exclusion;
* the ranked :class:`~.footprint.Footprint` objects are built on access, best first,
  from those tables (:class:`RankedTilings`: printing the best five builds five, without
  instantiating a tiled computation).

This *symbolic* path applies when the fusion has one output, no node has runtime
variables, the maps operands and output are read through carry no constraints and their
domains hold every tile origin, layout tiles are blocks of the logical dimensions
(untiled, or ``T(8,128)``-like tiles), and an operand read through several tiles has
tiles of stride 0 or 1 (at most ``MAX_UNION_POINTS`` tile indices to count). Any other
fusion (a concatenate, a dynamic slice, a multi-output fusion) takes the *per-tiling*
path: :func:`~.footprint.tiling_footprint` per valid candidate, the fewest programs
first, at most :data:`~hlo_indexing.limits.MAX_FOOTPRINTS_PER_FUSION`, and while their
programs times the runtime values their tiles are counted over (a scan's step: every
start of its dynamic slices) add up to at most
:data:`~hlo_indexing.limits.MAX_PER_TILING_ROWS`.

Bounds (:mod:`hlo_indexing.limits`): at most ``MAX_TILING_CANDIDATES`` candidates are
considered per fusion; above, the smallest size of the parameter with the most choices
is dropped until the grid fits (small tiles: the most programs). Candidates left out by
these limits are counted in :attr:`Ranking.capped`; ``hlo-print-tilings`` says so.
Candidates with more than ``max_programs`` programs are counted in
:attr:`Ranking.skipped`, not evaluated; those the tiled computation cannot build in
:attr:`Ranking.unbuildable`.

Example::

    ranking = rank_tilings(fusion, 48 * 1024)
    ranking.tilings[0]            # the best Footprint
    ranking.valid, ranking.capped # valid candidates considered, candidates not considered
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import overload

import numpy as np

from hlo_indexing.layout.attributes import LayoutLike
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import TilingError
from hlo_indexing.limits import MAX_FOOTPRINTS_PER_FUSION, MAX_PER_TILING_ROWS, MAX_PROGRAMS
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.symbolic_tiling.constraints import ConstraintExpression
from hlo_indexing.symbolic_tiling.footprint import (
    Footprint,
    FootprintError,
    FootprintLimitError,
    OperandFootprint,
    tiling_footprint,
)
from hlo_indexing.symbolic_tiling.tile_counts import (
    CountsCache,
    Grid,
    NotSeparable,
    Reader,
    ReaderCounts,
    origins_in_domain,
)
from hlo_indexing.symbolic_tiling.tiled_computation import runtime_value_count
from hlo_indexing.symbolic_tiling.time_budget import check_time
from hlo_indexing.symbolic_tiling.tiled_fusion import (
    TiledFusion,
    TiledNode,
    defining_op,
)


@dataclass(frozen=True)
class Ranking:
    """The ranked footprints (best first) and what was left out: ``skipped`` valid
    candidates with more than ``max_programs`` programs (not evaluated), ``capped``
    candidates not considered at all (the limits of the module docstring), ``unbuildable``
    valid candidates the tiled computation refuses to build (``UNIMPLEMENTED``: a negative
    stride, a concatenate tile across two operands). ``valid`` counts the valid candidates
    considered; ``method`` is ``symbolic`` or ``per-tiling``."""

    tilings: Sequence[Footprint]
    skipped: int
    valid: int = 0
    capped: int = 0
    method: str = "symbolic"
    #: The program limit the ranking ran with (``skipped`` counts the tilings above it).
    max_programs: int = MAX_PROGRAMS
    unbuildable: int = 0

    def rebound(self, nodes: Mapping[TiledNode, TiledNode]) -> "Ranking":
        """This ranking for another fusion with the same body (see
        :mod:`~.shared_bodies`): ``nodes`` maps each node of the ranked fusion to the
        other's (:meth:`~.tiled_fusion.TiledFusion.rebound`); the figures are shared, the
        names the footprints give are the other's."""
        tilings: Sequence[Footprint]
        if isinstance(self.tilings, RankedTilings):
            tilings = self.tilings.rebound(nodes)
        else:
            names = {node.name: other.name for node, other in nodes.items()}
            tilings = [footprint.renamed(names) for footprint in self.tilings]
        return replace(self, tilings=tilings)

    @property
    def note(self) -> str:
        """What was left out, in words ('' when nothing)."""
        parts = []
        if self.skipped:
            parts.append(f"{self.skipped} tilings with more than {self.max_programs} programs not evaluated (max-programs)")
        if self.unbuildable:
            parts.append(f"{self.unbuildable} valid tilings the tiled computation cannot build (UNIMPLEMENTED: a negative "
                         "stride, a concatenate tile across operands or an extra output its tiles do not partition)")
        if self.capped:
            limit = ("limits.MAX_TILING_CANDIDATES" if self.method == "symbolic"
                     else "limits.MAX_TILING_CANDIDATES/MAX_FOOTPRINTS_PER_FUSION/MAX_PER_TILING_ROWS, "
                          "or a footprint too large to count")
            parts.append(f"{self.capped} candidate tilings not considered ({limit})")
        return "; ".join(parts)


class RankedTilings(Sequence[Footprint]):
    """Ranked tile sizes (``sizes``: one row per tiling, best first) whose
    :class:`Footprint` is built, and kept, when read; ``figures`` holds what the ranking
    computed for each row (see :meth:`summary`)."""

    def __init__(self, sizes: np.ndarray, build: "_FromTables", figures: dict[str, np.ndarray]):
        self._sizes = sizes
        self._build = build
        self._figures = figures
        self._built: dict[int, Footprint] = {}

    def __len__(self) -> int:
        return len(self._sizes)

    @overload
    def __getitem__(self, index: int) -> Footprint: ...

    @overload
    def __getitem__(self, index: slice) -> list[Footprint]: ...

    def __getitem__(self, index: int | slice) -> Footprint | list[Footprint]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        position = range(len(self))[index]
        if position not in self._built:
            self._built[position] = self._build(position, tuple(int(s) for s in self._sizes[position]))
        return self._built[position]

    def __iter__(self) -> Iterator[Footprint]:
        return (self[i] for i in range(len(self)))

    def rebound(self, nodes: Mapping[TiledNode, TiledNode]) -> "RankedTilings":
        """The same ranking naming its footprints after the nodes ``nodes`` maps to
        (see :meth:`Ranking.rebound`; the tables are shared)."""
        own = self._build.nodes
        renamed = nodes if own is None else {node: nodes[other] for node, other in own.items()}
        return RankedTilings(self._sizes, replace(self._build, nodes=renamed), self._figures)

    @property
    def tile_sizes(self) -> list[tuple[int, ...]]:
        """The ranked tile sizes, best first (nothing built)."""
        return [tuple(row) for row in self._sizes.tolist()]

    def summary(self, index: int) -> dict[str, int]:
        """What the ranking computed for entry ``index`` without building it:
        ``bytes_per_tile``, ``bytes_moved``, ``num_tiles``, ``num_programs``."""
        return {name: int(values[index]) for name, values in self._figures.items()}


@dataclass
class _FromTables:
    """Builds the :class:`Footprint` of ranked entry ``position`` from the readers'
    counts (what :func:`tiling_footprint` would count, without instantiating the tiled
    computation)."""

    readers: list[tuple["Reader", "ReaderCounts"]]
    order: np.ndarray
    num_tiles: np.ndarray
    output_elements: int
    #: The nodes the footprints are named after, by the ranked fusion's (those of
    #: another fusion with the same body, :meth:`RankedTilings.rebound`); None: its own.
    nodes: Mapping[TiledNode, TiledNode] | None = None

    def __call__(self, position: int, sizes: tuple[int, ...]) -> Footprint:
        i = int(self.order[position])
        operands: list[OperandFootprint] = []
        outputs: list[OperandFootprint] = []
        for reader, counts in self.readers:
            tile = reader.node.tile  # shared by the nodes of every fusion with this body
            name = reader.node.name if self.nodes is None else self.nodes[reader.node].name
            unit_bytes = reader.unit_elements * reader.element_bytes
            footprint = OperandFootprint(
                kind=reader.kind,
                index=reader.index,
                name=name,
                shape=reader.shape,
                layout=reader.layout,
                element_bytes=reader.element_bytes,
                unit_bytes=unit_bytes,
                tile_sizes=tuple(ax.evaluate(e, list(sizes), []) for e in tile.sizes),
                tile_strides=tuple(ax.evaluate(e, tile.clamped(sizes), []) for e in tile.strides),
                bytes_per_tile=int(counts.units_max[i]) * unit_bytes,
                bytes_moved=int(counts.units_sum[i]) * unit_bytes,
                useful_bytes=int(counts.elements_sum[i]) * reader.element_bytes,
                steps=int(counts.steps[i]),
            )
            (operands if reader.kind == "operand" else outputs).append(footprint)
        return Footprint(sizes, int(self.num_tiles[i]), self.output_elements, tuple(operands), tuple(outputs))


def rank_tilings(
    fusion: TiledFusion,
    budget_bytes: int,
    *,
    layouts: Mapping[int, LayoutLike] | None = None,
    output_layouts: Mapping[int, LayoutLike] | None = None,
    max_programs: int = MAX_PROGRAMS,
    counts_cache: CountsCache | None = None,
) -> Ranking:
    """The footprints of the valid tilings whose :attr:`Footprint.bytes_per_tile` is at
    most ``budget_bytes``, by bytes moved per output element, then number of tiles, then
    number of programs (fewer contracting steps first), then tile sizes. Tilings the
    tiled computation rejects (``UNIMPLEMENTED``: negative strides, a concatenate tile
    across operands, extra outputs not partitioned) are left out; so are (counted in
    :attr:`Ranking.skipped`) those with more than ``max_programs`` programs, counting
    contracting steps. Bounded per fusion (module docstring): :attr:`Ranking.capped`
    counts the candidates not considered. ``counts_cache``: shared with other rankings
    (see :class:`~.tile_counts.CountsCache`). Raises :class:`~.footprint.FootprintError`
    when a footprint cannot be counted."""
    cache = counts_cache or CountsCache()
    grid = cache.grid(fusion)
    valid = cache.memo(("constraints", tuple(grid.sizes), fusion.constraints),
                       lambda: constraint_mask(fusion.constraints, grid.flat_sizes, grid.total))
    programs = grid.programs
    skipped_mask = valid & (programs > max_programs)
    candidates = valid & ~skipped_mask
    readers = _symbolic_readers(fusion, layouts, output_layouts, cache)
    if readers is None:
        return _rank_per_tiling(fusion, grid, valid, skipped_mask, programs, budget_bytes, layouts, output_layouts, max_programs)
    unbuildable = candidates & ~_implemented_mask(fusion, grid, cache)
    candidates &= ~unbuildable
    counted = []
    # Readers with the same counts and bytes per layout tile (the operands of an
    # elementwise fusion) are added once, times their number.
    alike: dict[tuple[int, int, str], tuple[ReaderCounts, int]] = {}
    try:
        for reader in readers:
            check_time("ranking the tilings")
            counts = cache.counts(reader, fusion, grid, max_programs)
            key = (id(counts), reader.unit_elements * reader.element_bytes, reader.kind)
            alike[key] = (counts, alike[key][1] + 1 if key in alike else 1)
            counted.append((reader, counts))
    except NotSeparable:
        return _rank_per_tiling(fusion, grid, valid, skipped_mask, programs, budget_bytes, layouts, output_layouts, max_programs)
    totals = _Totals.of(alike.items(), grid.total)
    output_elements = math.prod(readers[-1].shape)  # the output's reader comes last
    num_tiles = grid.output_tiles(tuple(parameter.contracting for parameter in fusion.parameters))
    num_programs = num_tiles * totals.steps
    per_element = totals.bytes_moved / max(output_elements, 1)
    fits = (candidates & (totals.bytes_per_tile <= budget_bytes)).nonzero()[0]
    keys = [grid.flat_sizes[p][fits] for p in reversed(range(len(fusion.parameters)))]
    order = fits[np.lexsort(keys + [num_programs[fits], num_tiles[fits], per_element[fits]])]
    sizes = (np.array([flat[order] for flat in grid.flat_sizes]).T if grid.flat_sizes
             else np.zeros((len(order), 0), np.int64))
    figures = {"bytes_per_tile": totals.bytes_per_tile[order], "bytes_moved": totals.bytes_moved[order],
               "num_tiles": num_tiles[order], "num_programs": num_programs[order]}
    build = _FromTables(counted, order, num_tiles, output_elements)
    return Ranking(RankedTilings(sizes, build, figures), int(np.count_nonzero(skipped_mask)),
                   int(np.count_nonzero(valid)), grid.capped, max_programs=max_programs,
                   unbuildable=int(np.count_nonzero(unbuildable)))


def constraint_mask(constraints: ConstraintExpression, flat_sizes: list[np.ndarray], total: int) -> np.ndarray:
    """``constraints.is_satisfied_by`` at every candidate (a division by zero fails)."""
    mask = np.full(total, constraints.satisfiable)
    for factor in constraints.factors:
        either = np.zeros(total, bool)
        for conjunction in factor:
            holds = np.ones(total, bool)
            for expr, interval in conjunction:
                defined = np.ones(total, bool)
                values = ax.evaluate_array(expr, flat_sizes, [], defined)
                holds &= defined & (values >= interval.lower) & (values <= interval.upper)
            either |= holds
        mask &= either
    return mask


def _evaluate_over(expr: ir.AffineExpr, flat_sizes: list[np.ndarray], total: int) -> np.ndarray:
    value = ax.constant_value(expr)
    if value is not None:
        return np.full(total, value, np.int64)
    return np.broadcast_to(ax.evaluate_array(expr, flat_sizes, []), (total,))


def _implemented_mask(fusion: TiledFusion, grid: Grid, cache: CountsCache) -> np.ndarray:
    """The candidates the tiled computation accepts: no negative stride, and a
    concatenate's tile never straddles two of its operands. A stride that is not a
    constant is evaluated once per grid (``cache``: fusions share their strides)."""
    ok = np.ones(grid.total, bool)
    seen: set[ir.AffineExpr] = set()
    tiles_seen: set[int] = set()  # by id: nodes read through one map share its tile
    for node in fusion.nodes:
        if id(node.tile) not in tiles_seen:
            tiles_seen.add(id(node.tile))
            for stride in node.tile.strides:
                if stride not in seen:
                    seen.add(stride)
                    value = ax.constant_value(stride)
                    if value is None:
                        ok &= cache.memo(("stride >= 0", tuple(grid.sizes), stride),
                                         lambda: _evaluate_over(stride, grid.flat_sizes, grid.total) >= 0)
                    elif value < 0:
                        ok[:] = False
        if node.opcode == "concatenate":
            op = defining_op(node.value)
            assert op is not None, "a concatenate node is an op result"
            axis = ir.IntegerAttr(op.attributes["dimension"]).value
            tile = _evaluate_over(node.tile.sizes[axis], grid.flat_sizes, grid.total)
            start = 0
            for operand in op.operands:
                ok &= (tile > 0) & (start % np.maximum(tile, 1) == 0)
                start += ir.RankedTensorType(operand.type).shape[axis]
    return ok


def _symbolic_readers(
    fusion: TiledFusion,
    layouts: Mapping[int, LayoutLike] | None,
    output_layouts: Mapping[int, LayoutLike] | None,
    cache: CountsCache,
) -> list[Reader] | None:
    """The readers of the symbolic path, or None when it does not apply (see the module
    docstring)."""
    if len(fusion.root_candidates) != 1:
        return None
    by_parameter: dict[int, dict[tuple[object, ...], TiledNode]] = {}
    for node in fusion.nodes:
        if node.indexing_map.runtime_vars:
            return None
        number = node.parameter_number
        if number is not None:
            by_parameter.setdefault(number, {}).setdefault((node.indexing_map, node.hidden), node)
    readers = [
        _reader("operand", number, tuple(nodes.values()), (layouts or {}).get(number), cache)
        for number, nodes in sorted(by_parameter.items())
    ]
    readers.append(_reader("output", 0, (fusion.root_candidates[0][0],), (output_layouts or {}).get(0), cache))
    if any(r is None or not all(origins_in_domain(n, fusion) for n in r.nodes) for r in readers):
        return None
    return [r for r in readers if r is not None]


def _reader(
    kind: str, index: int, nodes: tuple[TiledNode, ...], layout_like: LayoutLike, cache: CountsCache
) -> Reader | None:
    node = nodes[0]
    try:
        shape, layout, unit, divisors, width = cache.storage(node.value.type, layout_like)
    except ValueError as exc:
        raise FootprintError(f"{kind} {index} ({node.name}): {exc}") from exc
    if unit is None or any(n.indexing_map.constraints for n in nodes):
        return None
    return Reader(kind, index, nodes, shape, layout, unit, divisors, width)


@dataclass
class _Totals:
    """Per candidate, summed over the readers: bytes per tile, bytes moved, and the
    most contracting steps of an operand."""

    bytes_per_tile: np.ndarray
    bytes_moved: np.ndarray
    steps: np.ndarray

    @staticmethod
    def of(readers: Iterable[tuple[tuple[int, int, str], tuple[ReaderCounts, int]]], total: int) -> "_Totals":
        """The sums over ``readers``: per key ``(_, unit_bytes, kind)``, counts and how
        many readers have them (``unit_bytes`` bytes per layout tile each)."""
        bytes_per_tile: np.ndarray | int = 0
        bytes_moved: np.ndarray | int = 0
        steps: np.ndarray | None = None
        for (_, unit_bytes, kind), (counts, times) in readers:
            bytes_per_tile = bytes_per_tile + counts.units_max * (unit_bytes * times)
            bytes_moved = bytes_moved + counts.units_sum * (unit_bytes * times)
            if kind == "operand":
                steps = counts.steps if steps is None else np.maximum(steps, counts.steps)
        zeros = np.zeros(total, np.int64)
        return _Totals(bytes_per_tile if isinstance(bytes_per_tile, np.ndarray) else zeros,
                       bytes_moved if isinstance(bytes_moved, np.ndarray) else zeros,
                       np.maximum(steps, 1) if steps is not None else np.ones(total, np.int64))


def _written_bytes_at_least(fusion: TiledFusion, grid: Grid) -> np.ndarray:
    """Per candidate, a lower bound of its :attr:`Footprint.bytes_per_tile`: the bytes
    of the root's output tile at program 0 (its sizes clipped to the output's shape, at
    the element type's bits; the footprint counts whole elements, or whole layout tiles,
    so never fewer). 0 for an element type of no known width."""
    root = fusion.root_candidates[0][0]
    element = ir.ShapedType(root.value.type).element_type
    part = ir.ComplexType(element).element_type if isinstance(element, ir.ComplexType) else element
    bits = getattr(part, "width", 0) * (2 if isinstance(element, ir.ComplexType) else 1)
    elements = np.ones(grid.total, np.int64)
    for parameter, flat in zip(fusion.parameters, grid.flat_sizes):
        if not parameter.contracting:
            elements = elements * np.minimum(flat, parameter.size)
    return elements * bits // 8


def _rank_per_tiling(
    fusion: TiledFusion, grid: Grid, valid: np.ndarray, skipped: np.ndarray, programs: np.ndarray, budget_bytes: int,
    layouts: Mapping[int, LayoutLike] | None, output_layouts: Mapping[int, LayoutLike] | None, max_programs: int,
) -> Ranking:
    """The per-tiling path: :func:`tiling_footprint` of each valid candidate with at
    most ``max_programs`` programs whose output tile alone fits ``budget_bytes``
    (:func:`_written_bytes_at_least`: the others cannot fit), the fewest programs first,
    at most ``MAX_FOOTPRINTS_PER_FUSION`` of them and while their programs times the
    runtime values they are counted over add up to at most ``MAX_PER_TILING_ROWS``; a
    tiling whose footprint is too large to count (:class:`FootprintLimitError`) is counted
    in :attr:`Ranking.capped` with them."""
    candidates = np.flatnonzero(valid & ~skipped & (_written_bytes_at_least(fusion, grid) <= budget_bytes))
    order = candidates[np.argsort(programs[candidates], kind="stable")]
    # Each footprint counts its tiles at every program and runtime value.
    rows = np.cumsum(programs[order] * runtime_value_count(fusion))
    kept = min(MAX_FOOTPRINTS_PER_FUSION, max(1, int(np.searchsorted(rows, MAX_PER_TILING_ROWS, side="right"))))
    capped = grid.capped + max(0, len(order) - kept)
    found = []
    unbuildable = 0
    for i in order[:kept].tolist():
        check_time("ranking the tilings")
        sizes = tuple(int(grid.flat_sizes[p][i]) for p in range(len(fusion.parameters)))
        try:
            footprint = tiling_footprint(fusion, sizes, layouts=layouts, output_layouts=output_layouts)
        except TilingError as exc:
            if exc.status == "UNIMPLEMENTED":
                unbuildable += 1
                continue
            raise
        except FootprintLimitError:  # too many rows or elements to count: not considered, as past the caps
            capped += 1
            continue
        if footprint.bytes_per_tile <= budget_bytes:
            found.append(footprint)
    found.sort(key=lambda f: (f.bytes_per_output_element, f.num_tiles, f.num_programs, f.tile_sizes))
    return Ranking(found, int(skipped.sum()), int(valid.sum()), capped, "per-tiling", max_programs, unbuildable)
