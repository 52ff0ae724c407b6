"""An operand's block index map as :class:`~hlo_indexing.maps.indexing_map.IndexingMap` s:
grid indices -> block indices, and grid indices -> elements.

The block index map of a Pallas operand is piecewise affine (:mod:`~hlo_indexing.maps.piecewise`): each
*piece* is one ``IndexingMap`` whose domain is a region of the grid (narrowed ranges of
the grid indices ``i, j, ...`` and constraints, from the comparisons the map makes) and
whose results are the block indices there; its runtime variables are the unknowns the
index map reads (a prefetched scalar, named by where it is read). The pieces are
simplified (:meth:`IndexingMap.simplify`), those proven empty dropped; together they
cover the grid exactly once. The *element map* of a piece adds one range variable per
blocked dimension, the position inside the block: ``(i, j)[t0, t1] -> (i * 8 + t0, j *
128 + t1)`` for a ``(8, 128)`` block at ``(i, j)``; a squeezed dimension's index is the
element itself, an element dimension's index is the block's first element.

:func:`grid_table` evaluates all pieces at every grid point (numpy, bounded by
:data:`~hlo_indexing.limits.MAX_PALLAS_GRID_POINTS`): the block index of every grid
point, in the grid's iteration order, for the checks that enumerate.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import remove_unused_symbols
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.pallas.calls import BLOCKED, ELEMENT, SQUEEZED, Operand, PallasCall
from hlo_indexing.maps.piecewise import INT32_RANGE, Cases, Region, Space, TooManyCases
from hlo_indexing.pallas.index_maps import block_index_cases
from hlo_indexing.symbolic_tiling.pallas import grid_index_name


@dataclass(frozen=True)
class OperandMaps:
    """One operand's maps: ``pieces`` (grid -> block indices, see the module docstring)
    and their ``element_maps``; ``problem`` says why there are none (an unsupported
    block dimension, too many pieces), else ''."""

    operand: Operand
    pieces: tuple[IndexingMap, ...]
    element_maps: tuple[IndexingMap, ...]
    problem: str = ""

    @property
    def runtime_origins(self) -> tuple[str, ...]:
        """What the block indices depend on that the analysis cannot follow (the
        unknowns' origins), in order, without repeats."""
        seen: dict[str, None] = {}
        for piece in self.pieces:
            used_dims: set[int] = set()
            used_symbols: set[int] = set()
            for expr in piece.results:
                ax.used_variables(expr, used_dims, used_symbols)
            for expr in piece.constraints:
                ax.used_variables(expr, used_dims, used_symbols)
            offset = len(piece.range_vars)
            for position in sorted(used_symbols):
                if position >= offset:
                    seen.setdefault(piece.runtime_vars[position - offset].origin, None)
        return tuple(seen)

    def components_with_unknowns(self) -> set[int]:
        """The block dimensions whose index depends on an unknown in some piece (through
        its result or the piece's constraints)."""
        found = set()
        for piece in self.pieces:
            constrained = bool(piece.runtime_vars) and any(_uses_symbols(e) for e in piece.constraints)
            for position, expr in enumerate(piece.results):
                if constrained or _uses_symbols(expr):
                    found.add(position)
        return found


def _uses_symbols(expr: ir.AffineExpr) -> bool:
    dims: set[int] = set()
    symbols: set[int] = set()
    ax.used_variables(expr, dims, symbols)
    return bool(symbols)


def operand_maps(call: PallasCall, operand: Operand, context: ir.Context) -> OperandMaps:
    """The maps of one operand of ``call`` (whose grid is static)."""
    assert call.grid is not None
    unsupported = [f"dimension {k}: {d.note or d.kind}" for k, d in enumerate(operand.block) if d.kind not in (BLOCKED, SQUEEZED, ELEMENT)]
    if unsupported:
        return OperandMaps(operand, (), (), f"block dimensions the analysis does not model ({'; '.join(unsupported)})")
    space = Space(call.grid, context)
    components = block_index_cases(operand.index_map, space, len(call.prefetch_shapes), call.prefetch_shapes)
    if len(components) != len(operand.block):
        return OperandMaps(operand, (), (), f"the index map returns {len(components)} indices for a rank-{len(operand.block)} block")
    try:
        joint = _joint(space, components)
    except TooManyCases:
        return OperandMaps(operand, (), (), "its block indices split the grid into more pieces than limits.MAX_INDEX_MAP_CASES")
    pieces = []
    for region, exprs in joint:
        piece = _piece(space, region, exprs).simplify()
        if not piece.is_known_empty():
            piece = remove_unused_symbols(piece)
            pieces.append(piece)
    for piece in pieces:
        for position, expr in enumerate(piece.results):
            if not _uses_symbols(expr) and not INT32_RANGE.contains(piece.expr_bounds(expr)):
                return OperandMaps(operand, (), (), f"block index {position} ({expr}) may leave the int32 range, where it wraps around: not modelled")
    return OperandMaps(operand, tuple(pieces), tuple(element_map(p, operand).simplify() for p in pieces))


def _joint(space: Space, components: Sequence[Cases]) -> list[tuple[Region, tuple[ir.AffineExpr, ...]]]:
    """The product of the components' cases: regions where every block index is one
    expression."""
    cases = space.apply(list(components), lambda region, *values: [(region, tuple(values))])
    return [(region, value) for region, value in cases]  # type: ignore[misc]  # tuples of exprs


def _piece(space: Space, region: Region, exprs: tuple[ir.AffineExpr, ...]) -> IndexingMap:
    dims = [Variable(bounds, grid_index_name(k)) for k, bounds in enumerate(region.dims)]
    runtime = [Variable(bounds, f"rt{k}", space.unknowns[k].origin) for k, bounds in enumerate(space.symbol_ranges(region))]
    return IndexingMap.from_exprs(dims, list(exprs), runtime_vars=runtime, constraints=dict(region.constraints), context=space.context)


def element_map(piece: IndexingMap, operand: Operand) -> IndexingMap:
    """Grid -> elements of a piece (see the module docstring)."""
    context = piece.context
    range_vars: list[Variable] = []
    results = []
    n_dims = piece.num_dims
    offsets = [ax.symbol(k, context) for k in range(sum(1 for d in operand.block if d.kind != SQUEEZED))]
    runtime_shift = len(offsets)
    # The piece's runtime variables move after the new range variables.
    shifted = [
        ax.substitute(e, ax.dim_list(n_dims, context), ax.symbol_list(piece.num_symbols, context, runtime_shift))
        for e in piece.results
    ]
    position = 0
    for dim, expr in zip(operand.block, shifted):
        if dim.kind == SQUEEZED:
            results.append(expr)
            continue
        start = ax.mul(expr, dim.size) if dim.kind == BLOCKED else expr
        results.append(ax.add(start, offsets[position]))
        range_vars.append(Variable(Interval(0, dim.size - 1), f"t{position}"))
        position += 1
    constraints = {
        ax.substitute(e, ax.dim_list(n_dims, context), ax.symbol_list(piece.num_symbols, context, runtime_shift)): interval
        for e, interval in piece.constraints.items()
    }
    return IndexingMap.from_exprs(
        piece.dim_vars, results, range_vars=range_vars, runtime_vars=piece.runtime_vars, constraints=constraints, context=context
    )


@dataclass(frozen=True)
class GridTable:
    """Every grid point (rows of ``points``, in iteration order: the last grid index
    fastest) and the block index there (rows of ``blocks``)."""

    points: np.ndarray
    blocks: np.ndarray


def grid_table(maps: OperandMaps, grid: Sequence[int], limit: int) -> GridTable | None:
    """The block index at every grid point, or None when the grid has more than
    ``limit`` points or a piece depends on an unknown."""
    size = math.prod(grid)
    if size > limit or maps.problem or any(p.runtime_vars for p in maps.pieces):
        return None
    rank = len(grid)
    points = np.zeros((size, rank), np.int64)
    blocks = np.zeros((size, len(maps.operand.block)), np.int64)
    filled = np.zeros(size, bool)
    strides = np.asarray([math.prod(grid[k + 1 :]) for k in range(rank)], np.int64)
    for piece in maps.pieces:
        found, images = piece.enumerate(limit)
        rows = found[:, :rank] @ strides if rank else np.zeros(len(found), np.int64)
        points[rows] = found[:, :rank]
        blocks[rows] = images
        filled[rows] = True
    if not filled.all():  # the pieces always cover the grid: a gap is an analysis bug
        raise AssertionError(f"the pieces of {maps.operand.label} leave {int((~filled).sum())} grid points uncovered")
    return GridTable(points, blocks)


def corner_points(piece: IndexingMap, limit: int = 256) -> list[tuple[int, ...]]:
    """The corners of a piece's box of grid indices (at most ``limit``), for witnesses:
    an affine form of the grid indices takes its extremes there."""
    ranges = [v.bounds for v in piece.dim_vars]
    choices = [sorted({r.lower, r.upper}) for r in ranges]
    corners = []
    for corner in itertools.product(*choices):
        corners.append(tuple(corner))
        if len(corners) >= limit:
            break
    return corners
