"""What the tiles of one operand (or the output) touch, for every candidate tiling at once:
the tables behind :func:`~.ranking.rank_tilings`.

A :class:`Grid` holds the candidate tilings (per tiling parameter, its candidate sizes).
A :class:`Reader` is one fusion parameter (or the output) and the tiled node(s) it is read
through. :meth:`ReaderCounts.of` counts, per candidate, the layout tiles one tile touches
(most over programs) and the layout tiles and elements touched summed over programs:

* read through one tile, the tile's dimensions fall into *components* (the dimensions
  whose offset, size and stride expressions share tiling parameters); a component's
  counts at each tile index depend only on its parameters' sizes, so they are computed
  once per choice of those sizes (all choices in one numpy pass over their concatenated
  tile indices) and a candidate's maximum and sum are products over the components;
* read through several tiles (a softmax reads its input through the reduction and
  directly): when one tile's box holds every other's at every tile index (checked one
  dimension at a time: the reduction's whole rows hold the direct tile's), the union is
  that box, counted as a single tile; otherwise the union of the boxes at each program
  is counted by inclusion-exclusion over the boxes' intersections, jointly over every
  parameter the tiles use: boxes of stride 0 or 1 only, at most
  :data:`~hlo_indexing.limits.MAX_UNION_POINTS` tile indices, else :class:`NotSeparable`.

Tile indices are evaluated in batches of at most
:data:`~hlo_indexing.limits.MAX_TILE_INDICES_PER_BATCH` (a choice with more is split
over several), so that the memory of a ranking is bounded whatever its program limit.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

import numpy as np

from hlo_indexing.layout.attributes import LayoutLike, as_layout
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.layout.types import Layout
from hlo_indexing.limits import MAX_TILE_INDICES_PER_BATCH, MAX_TILING_CANDIDATES, MAX_UNION_POINTS
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.symbolic_tiling.footprint import (
    box_interval,
    dim_counts,
    element_bytes,
    layout_divisors,
    layout_unit_elements,
    union_of_boxes,
)
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion, TiledNode, tile_size_choices

#: Shape, layout, layout tile elements (None: not blocks of the logical dims), layout
#: tile size per dimension and element bytes of a stored tensor (:meth:`CountsCache.storage`).
Storage = tuple[tuple[int, ...], Layout, "int | None", tuple[int, ...], int]


class NotSeparable(Exception):
    """The counts cannot be tabled (the ranking then goes tiling by tiling)."""


@dataclass
class Grid:
    """The candidate tilings: per parameter its ``choices`` (sizes), and flattened over
    the grid (C order: the lexicographic order of ``valid_tilings``) each parameter's
    size and number of tiles."""

    sizes: list[int]
    choices: list[list[int]]
    capped: int
    #: Choices per parameter.
    shape: tuple[int, ...]
    #: Candidates in the grid.
    total: int
    flat_sizes: list[np.ndarray] = field(default_factory=list)
    flat_tiles: list[np.ndarray] = field(default_factory=list)
    _tile_products: dict[tuple[bool, ...], np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def programs(self) -> np.ndarray:
        """Per candidate, its programs: the product of every parameter's tiles
        (read-only, computed once)."""
        return self.output_tiles((False,) * len(self.flat_tiles))

    def output_tiles(self, contracting: tuple[bool, ...]) -> np.ndarray:
        """Per candidate, the product of the tiles of the parameters not ``contracting``
        (one flag per parameter): the output tiles (read-only, once per flags)."""
        found = self._tile_products.get(contracting)
        if found is None:
            found = np.ones(self.total, np.int64)
            for tiles, flag in zip(self.flat_tiles, contracting):
                if not flag:
                    found = found * tiles
            found.flags.writeable = False
            self._tile_products[contracting] = found
        return found

    @staticmethod
    def over(parameter_sizes: tuple[int, ...]) -> "Grid":
        """The candidates for tiling parameters of these sizes, at most
        ``MAX_TILING_CANDIDATES``: the smallest size of the parameter with the most
        choices goes first (``capped`` counts the candidates dropped). Its arrays are
        read-only, so that rankings may share it."""
        sizes = list(parameter_sizes)
        choices = [tile_size_choices(n) for n in sizes]
        full = math.prod(len(c) for c in choices)
        while math.prod(len(c) for c in choices) > MAX_TILING_CANDIDATES:
            widest = max(range(len(choices)), key=lambda p: len(choices[p]))
            choices[widest] = choices[widest][1:]
        shape = tuple(len(c) for c in choices)
        grid = Grid(sizes, choices, full - math.prod(shape), shape, math.prod(shape))
        for p, values in enumerate(choices):
            along = np.asarray(values, np.int64).reshape([-1 if q == p else 1 for q in range(len(choices))])
            flat = np.broadcast_to(along, grid.shape).reshape(-1)
            tiles = -(-sizes[p] // flat)
            flat.flags.writeable = tiles.flags.writeable = False
            grid.flat_sizes.append(flat)
            grid.flat_tiles.append(tiles)
        return grid


@dataclass(frozen=True)
class Reader:
    """One operand (``kind == "operand"``, parameter ``index``) or the output, read
    through the tiles of ``nodes`` (distinct maps; the first names it)."""

    kind: str
    index: int
    nodes: tuple[TiledNode, ...]
    shape: tuple[int, ...]
    layout: Layout
    unit_elements: int
    divisors: tuple[int, ...]
    element_bytes: int

    @property
    def node(self) -> TiledNode:
        """The first node it is read through."""
        return self.nodes[0]

    def key(self) -> tuple[object, ...]:
        """What its counts depend on (not the element type: counts are in layout tiles)."""
        return (
            tuple(
                (tuple(n.indexing_map.results), tuple(v.bounds for v in n.indexing_map.dim_vars),
                 tuple(v.bounds.lower for v in n.indexing_map.range_vars), n.tile.sizes, n.tile.strides, n.hidden)
                for n in self.nodes
            ),
            self.shape,
            self.divisors,
        )


class CountsCache:
    """:class:`ReaderCounts` by everything they depend on (the reader's maps, tiles,
    shape and layout divisors, the tiling parameters, the program limit), and what they
    are made of: grids (:meth:`grid`), tile indices (:meth:`points`), per-component
    tables (:meth:`tables`) and how tensors are stored (:meth:`storage`). One ranking
    keeps its own (an elementwise fusion's operands and output count alike); rankings
    of one run may share one (:class:`~.shared_bodies.TilingMemo`). Everything it hands
    out is shared: its arrays are read-only."""

    def __init__(self) -> None:
        self._counts: dict[tuple[object, ...], ReaderCounts] = {}
        self._grids: dict[tuple[int, ...], Grid] = {}
        self._points: dict[tuple[object, ...], list[_Points]] = {}
        self._tables: dict[tuple[object, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._storage: dict[tuple[object, object], Storage] = {}
        self._memo: dict[object, np.ndarray] = {}

    def memo(self, key: object, compute: Callable[[], np.ndarray]) -> np.ndarray:
        """``compute()`` (an array, made read-only), once per ``key``: what rankings
        derive from a grid and facts of a fusion that recur (its constraints)."""
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = compute()
            found.flags.writeable = False
        return found

    def storage(self, value_type: ir.Type, layout_like: LayoutLike) -> Storage:
        """How a tensor of ``value_type`` is stored in ``layout_like``: its shape, layout,
        elements of one layout tile (None when layout tiles are not blocks of the
        logical dims), layout tile size per dimension and element bytes; once per type
        and layout. ``ValueError`` (not remembered) for a layout of another rank."""
        key = (value_type, layout_like if layout_like is None or isinstance(layout_like, str) else str(layout_like))
        found = self._storage.get(key)
        if found is None:
            shape = tuple(ir.RankedTensorType(value_type).shape)
            layout = as_layout(layout_like, len(shape))
            found = self._storage[key] = (
                shape,
                layout,
                layout_unit_elements(layout, len(shape)),
                tuple(layout_divisors(layout, len(shape))),
                element_bytes(value_type),
            )
        return found

    def grid(self, fusion: TiledFusion) -> Grid:
        """:meth:`Grid.over` the sizes of ``fusion``'s parameters, one per tuple of sizes."""
        sizes = tuple(p.size for p in fusion.parameters)
        found = self._grids.get(sizes)
        if found is None:
            found = self._grids[sizes] = Grid.over(sizes)
        return found

    def counts(self, reader: Reader, fusion: TiledFusion, grid: Grid, max_programs: int) -> "ReaderCounts":
        """:meth:`ReaderCounts.of`, computed once per key; :class:`NotSeparable` as it."""
        parameters = tuple((p.size, p.contracting) for p in fusion.parameters)
        key = (reader.key(), parameters, max_programs)
        found = self._counts.get(key)
        if found is None:
            found = self._counts[key] = ReaderCounts.of(reader, fusion, grid, max_programs, self)
            for array in (found.units_max, found.units_sum, found.elements_sum, found.steps):
                array.flags.writeable = False
        return found

    def tables(
        self, reader: Reader, grid: Grid, parameters: tuple[int, ...], dims: list[int], programs_of: set[int],
        max_programs: int,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:func:`_component_tables` of one component of a reader, computed once per
        what they depend on (readers of different fusions share them: a dimension of
        one size read through the same tile recurs): the reader's tiles, extents and
        layout divisors along ``dims``, the sizes, choices and iteration of
        ``parameters``, the program limit. A union of tiles is computed each time."""
        if len(reader.nodes) > 1:
            return _component_tables(reader, grid, parameters, dims, self.points(grid, parameters, programs_of, max_programs))
        node = reader.node
        results = node.indexing_map.results
        key = (
            parameters,
            tuple((grid.sizes[p], tuple(grid.choices[p]), p in programs_of) for p in parameters),
            max_programs,
            tuple((results[k], node.tile.sizes[k], node.tile.strides[k], reader.shape[k], reader.divisors[k]) for k in dims),
            tuple(v.bounds.lower for v in node.indexing_map.range_vars),
        )
        found = self._tables.get(key)
        if found is None:
            points = self.points(grid, parameters, programs_of, max_programs)
            found = self._tables[key] = _component_tables(reader, grid, parameters, dims, points)
            for table in found:
                table.flags.writeable = False
        return found

    def points(self, grid: Grid, parameters: tuple[int, ...], programs_of: set[int], max_programs: int) -> "_Batches":
        """:func:`_batches` of the tile indices, kept once per grid and arguments (the
        operands of one fusion often have the same components) when they fit in one
        batch; more are made again at each use (bounded memory)."""
        key = (tuple(grid.sizes), tuple(map(len, grid.choices)), parameters, frozenset(programs_of), max_programs)
        found = self._points.get(key)
        if found is not None:
            return _Batches(found, sum(b.total for b in found))
        plan = _plan(grid, parameters, programs_of, max_programs)
        total = sum(points for _, _, _, points in plan)
        if total > MAX_TILE_INDICES_PER_BATCH:
            return _Batches(_batches(grid, parameters, plan), total)
        batches = self._points[key] = list(_batches(grid, parameters, plan))
        return _Batches(batches, total)


def origins_in_domain(node: TiledNode, fusion: TiledFusion) -> bool:
    """Every tile origin (0 .. size - 1 along the node's programs, 0 elsewhere) lies in
    the domain of the node's map, so no program is cut out by it."""
    hidden = node.hidden
    for p, (variable, parameter) in enumerate(zip(node.indexing_map.dim_vars, fusion.parameters)):
        upper = parameter.size - 1 if not parameter.contracting or p in hidden else 0  # p in grid_parameters(node, fusion)
        if variable.bounds.lower > 0 or variable.bounds.upper < upper:
            return False
    return True


def grid_parameters(node: TiledNode, fusion: TiledFusion) -> set[int]:
    """The parameters the node's programs iterate over: the output's, then the
    contracting parameters of the dots it feeds."""
    return {p for p, parameter in enumerate(fusion.parameters) if not parameter.contracting} | set(node.hidden)


@dataclass
class ReaderCounts:
    """Per candidate: layout tiles one tile touches (most over programs), layout tiles
    and elements touched summed over programs, and contracting steps."""

    units_max: np.ndarray
    units_sum: np.ndarray
    elements_sum: np.ndarray
    steps: np.ndarray

    @staticmethod
    def of(
        reader: Reader, fusion: TiledFusion, grid: Grid, max_programs: int, cache: "CountsCache | None" = None
    ) -> "ReaderCounts":
        """The counts of ``reader`` (see the module docstring); :class:`NotSeparable`
        when a union cannot be tabled. ``cache``: where the tables of its components
        are kept (see :meth:`CountsCache.tables`)."""
        cache = cache or CountsCache()
        node = reader.node
        programs_of = grid_parameters(node, fusion)
        if len(reader.nodes) > 1:
            if any(grid_parameters(n, fusion) != programs_of for n in reader.nodes):
                raise NotSeparable(f"{node.name} is read by programs of different grids")
            dominant = _dominant(reader, grid, programs_of, max_programs, cache)
            if dominant is not None:  # the union is its tile: counted alone
                reader, node = replace(reader, nodes=(dominant,)), dominant
        if len(reader.nodes) > 1:
            joint = sorted({p for n in reader.nodes for parameters, _ in _components(n) for p in parameters})
            components = [(tuple(joint), list(range(len(reader.shape))))]
        else:
            components = _components(node)
        products: list[np.ndarray] | None = None  # units max, units sum, elements sum over the grid's axes
        used: set[int] = set()
        for parameters, dims in components:
            used.update(parameters)
            tables = cache.tables(reader, grid, parameters, dims, programs_of, max_programs)
            shape = [len(grid.choices[p]) if p in parameters else 1 for p in range(len(grid.choices))]
            shaped = [table.reshape(shape) for table in tables]
            products = shaped if products is None else [product * table for product, table in zip(products, shaped)]
        if products is None:
            units_max, units_sum, elements_sum = (np.ones(grid.total, np.int64) for _ in range(3))
        else:
            units_max, units_sum, elements_sum = (
                (np.broadcast_to(product, grid.shape) if product.shape != grid.shape else product).reshape(-1)
                for product in products)
        steps = np.ones(grid.total, np.int64)
        for p in sorted(programs_of):
            if p not in used:
                units_sum = units_sum * grid.flat_tiles[p]
                elements_sum = elements_sum * grid.flat_tiles[p]
        for p in node.hidden:
            steps = steps * grid.flat_tiles[p]
        return ReaderCounts(units_max, units_sum, elements_sum, steps)


def _components(node: TiledNode) -> list[tuple[tuple[int, ...], list[int]]]:
    """The node's tile dimensions grouped by the parameters their offset, size and
    stride expressions use: ``(parameters, dimensions)``, dimensions using none last."""
    uses: list[set[int]] = []
    for result, size, stride in zip(node.indexing_map.results, node.tile.sizes, node.tile.strides):
        found: set[int] = set()
        for expr in (result, size, stride):
            symbols: set[int] = set()
            ax.used_variables(expr, found, symbols)
        uses.append(found)
    groups: list[tuple[set[int], list[int]]] = []
    for k, params in enumerate(uses):
        merged = (set(params), [k])
        for group in [g for g in groups if g[0] & params]:
            groups.remove(group)
            merged[0].update(group[0])
            merged[1].extend(group[1])
        if params:
            groups.append(merged)
        else:
            groups.append((set(), [k]))
    return [(tuple(sorted(params)), sorted(dims)) for params, dims in groups]


def _component_tables(
    reader: Reader, grid: Grid, parameters: tuple[int, ...], dims: list[int], batches: "_Batches"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per choice of the sizes of ``parameters``: the most layout tiles the component's
    dimensions touch at one tile index, and layout tiles and elements summed over the
    tile indices. The choices' tile indices are evaluated in numpy passes of at most
    ``MAX_TILE_INDICES_PER_BATCH`` (``batches``). A choice with more than the program
    limit of tile indices (its candidates are all skipped) gets zeros."""
    shape = [len(grid.choices[p]) for p in parameters]
    tables = [np.zeros(shape, np.int64) for _ in range(3)]
    if len(reader.nodes) > 1 and batches.total > MAX_UNION_POINTS:
        raise NotSeparable(f"{batches.total} tile indices for the union of the tiles of {reader.node.name}")
    for points in batches:
        if len(reader.nodes) > 1:
            units, elements = _union_counts(reader, points)
        else:
            units, elements = np.ones(points.total, np.int64), np.ones(points.total, np.int64)
            for k in dims:
                offsets, sizes, strides = points.tile(reader.node, k)
                dim_units, dim_elements = dim_counts(offsets, sizes, strides, reader.shape[k], reader.divisors[k])
                units *= dim_units
                elements *= dim_elements
        starts = np.concatenate([[0], np.cumsum(points.segments)[:-1]])
        flat = np.ravel_multi_index(tuple(np.array(points.positions, np.int64).T), shape) if shape else np.zeros(len(starts), np.int64)
        np.maximum.at(tables[0].reshape(-1), flat, np.maximum.reduceat(units, starts))
        np.add.at(tables[1].reshape(-1), flat, np.add.reduceat(units, starts))
        np.add.at(tables[2].reshape(-1), flat, np.add.reduceat(elements, starts))
    return tables[0], tables[1], tables[2]


#: One choice of the sizes of some parameters: its position among their choices, the
#: sizes, the tile count along each (1 for a parameter its programs do not iterate) and
#: their product.
_Choice = tuple[tuple[int, ...], list[int], list[int], int]


def _plan(grid: Grid, parameters: tuple[int, ...], programs_of: set[int], max_programs: int) -> list[_Choice]:
    """The choices of the sizes of ``parameters`` with at most ``max_programs`` tile
    indices (nothing is enumerated: at most ``MAX_TILING_CANDIDATES`` choices)."""
    plan: list[_Choice] = []
    for position in itertools.product(*(range(len(grid.choices[p])) for p in parameters)):
        chosen = [grid.choices[p][i] for p, i in zip(parameters, position)]
        counts = [-(-grid.sizes[p] // s) if p in programs_of else 1 for p, s in zip(parameters, chosen)]
        points = math.prod(counts)
        if points <= max_programs:
            plan.append((position, chosen, counts, points))
    return plan


def _batches(grid: Grid, parameters: tuple[int, ...], plan: list[_Choice]) -> Iterator["_Points"]:
    """The tile indices of the choices of ``plan`` in batches of at most
    ``MAX_TILE_INDICES_PER_BATCH`` (a choice with more is cut into consecutive ranges of
    its tile indices, each a segment of its own)."""
    pending: list[tuple[_Choice, int, int]] = []
    room = MAX_TILE_INDICES_PER_BATCH
    for choice in plan:
        start = 0
        while start < choice[3]:
            stop = min(choice[3], start + room)
            pending.append((choice, start, stop))
            room -= stop - start
            start = stop
            if room == 0:
                yield _Points.of(grid, parameters, pending)
                pending, room = [], MAX_TILE_INDICES_PER_BATCH
    if pending or not plan:
        yield _Points.of(grid, parameters, pending)


@dataclass
class _Batches(Iterable["_Points"]):
    """Batches of tile indices (a list, or made on the fly) and how many indices in all."""

    batches: Iterable["_Points"]
    total: int

    def __iter__(self) -> Iterator["_Points"]:
        return iter(self.batches)


@dataclass
class _Points:
    """A batch of tile indices of choices of the sizes of some parameters: per segment
    (one choice, or a range of its tile indices) its position among the choices
    (``positions``) and its number of tile indices (``segments``); per tiling parameter,
    the tile origin and the tile size at each index."""

    positions: list[tuple[int, ...]]
    segments: list[int]
    origins: list[np.ndarray]
    sizes: list[np.ndarray]

    @property
    def total(self) -> int:
        return sum(self.segments)

    @staticmethod
    def of(grid: Grid, parameters: tuple[int, ...], ranges: list[tuple[_Choice, int, int]]) -> "_Points":
        """The points of tile indices ``start .. stop - 1`` (row-major over the tile
        counts) of each choice of the sizes of ``parameters`` in ``ranges``."""
        n_params = len(grid.sizes)
        origins: dict[int, list[np.ndarray]] = {}
        chosen_sizes: dict[int, list[int]] = {}
        positions: list[tuple[int, ...]] = []
        segments: list[int] = []
        for (position, chosen, counts, _), start, stop in ranges:
            positions.append(position)
            segments.append(stop - start)
            indices = np.unravel_index(np.arange(start, stop, dtype=np.int64), counts) if counts else ()
            for p, tile_index, size in zip(parameters, indices, chosen):
                origins.setdefault(p, []).append(tile_index * size)
                chosen_sizes.setdefault(p, []).append(size)
        total = sum(segments)
        zeros, ones = np.zeros(total, np.int64), np.ones(total, np.int64)
        found = _Points(
            positions,
            segments,
            [np.concatenate(origins[p]) if p in origins and total else zeros for p in range(n_params)],
            [np.repeat(np.asarray(chosen_sizes[p], np.int64), segments) if p in chosen_sizes and total else ones
             for p in range(n_params)],
        )
        for array in itertools.chain(found.origins, found.sizes):
            array.flags.writeable = False  # shared by the readers of a grid (CountsCache)
        return found

    def tile(self, node: TiledNode, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Offset, size and stride of ``node``'s tile along its dimension ``k`` at every
        point (range variables at their lower bounds: tiles start there)."""
        m = node.indexing_map
        symbols = [np.full(self.total, v.bounds.lower, np.int64) for v in m.range_vars]
        clamped = [np.minimum(s, b.upper) for s, b in zip(self.sizes, node.tile.tile_size_bounds)]  # see SymbolicTile.clamped
        return (_values(m.results[k], self.origins, symbols, self.total),
                _values(node.tile.sizes[k], self.sizes, [], self.total),
                _values(node.tile.strides[k], clamped, [], self.total))


def _union_counts(reader: Reader, points: _Points) -> tuple[np.ndarray, np.ndarray]:
    """Layout tiles and elements of the union of the boxes of ``reader``'s tiles at
    every point (:func:`~.footprint.union_of_boxes`; tiles of stride 0 or 1 only)."""
    boxes = []  # per node, per dimension: its first and last index
    for node in reader.nodes:
        box = []
        for k, extent in enumerate(reader.shape):
            interval = _interval(node, k, points, extent)
            if interval is None:
                raise NotSeparable(f"{node.name} has a strided tile along dimension {k}")
            box.append(interval)
        boxes.append(box)
    return union_of_boxes(boxes, reader.divisors, points.total)


def _interval(node: TiledNode, k: int, points: _Points, extent: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The first and last index (clipped to ``0 .. extent - 1``; last < first when
    empty) of ``node``'s tile along dimension ``k`` at every point; None when the tile
    has a stride other than 0 or 1 there (it is not an interval)."""
    return box_interval(*points.tile(node, k), extent)


def _dominant(reader: Reader, grid: Grid, programs_of: set[int], max_programs: int, cache: "CountsCache") -> TiledNode | None:
    """The first of ``reader``'s nodes whose tile holds every other's at every tile
    index of every choice (then the union of the tiles is that tile), checked one
    dimension at a time over the parameters that dimension's tiles use; None if none
    does, or a tile is strided."""
    alive = list(range(len(reader.nodes)))
    for k, extent in enumerate(reader.shape):
        used: set[int] = set()
        for node in reader.nodes:
            for expr in (node.indexing_map.results[k], node.tile.sizes[k], node.tile.strides[k]):
                ax.used_variables(expr, used, set())
        for points in cache.points(grid, tuple(sorted(used)), programs_of, max_programs):
            intervals = [_interval(node, k, points, extent) for node in reader.nodes]
            if any(interval is None for interval in intervals):
                return None
            boxes = [interval for interval in intervals if interval is not None]
            alive = [
                c for c in alive
                if all(np.all((last < first) | ((boxes[c][0] <= first) & (last <= boxes[c][1]))) for first, last in boxes)
            ]
            if not alive:
                return None
    return reader.nodes[alive[0]]


def _values(expr: ir.AffineExpr, dims: list[np.ndarray], symbols: list[np.ndarray], total: int) -> np.ndarray:
    """``expr`` at ``total`` points (a constant or a variable read directly)."""
    expr = ax.typed(expr)
    if isinstance(expr, ax.Dim):
        return dims[expr.position]
    if isinstance(expr, ax.Const):
        return np.full(total, expr.value, np.int64)
    return np.broadcast_to(ax.evaluate_array(expr, dims, symbols), (total,))
