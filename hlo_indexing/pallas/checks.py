"""The questions a Pallas grid raises, decided on the operands' maps (:mod:`.operand_maps`).

Each question is first decided by reasoning on the maps, then, when that does not
settle it, by enumerating the grid (at most ``limit`` grid points: the caller passes
:data:`~hlo_indexing.limits.MAX_PALLAS_GRID_POINTS`), else reported as not decided:

* **block range** (``block-index-out-of-range``, ``partial-block``), per operand and
  block dimension: does some grid point give a block index in the bad interval? The
  constraint ``index in interval`` is added to each piece and the simplifier asked
  whether the piece becomes empty (no); else the corners of the piece's box are tried (an
  affine index takes its extremes there: a witness); else the piece is enumerated.
* **coverage** (``uncovered-output``): when the output's map is one piece whose block
  indices are each ``a * g + c`` of their own grid index (*separable*), the blocks
  visited along each dimension form an arithmetic progression and the first element
  none covers follows in closed form; otherwise the blocks of every grid point are
  marked.
* **race**: a parallel axis the output's block does not depend on gives a witness (two
  grid points that differ there only); a separable map that moves along every parallel
  axis with a step of at least one block proves there is none; otherwise the grid
  points writing each block are grouped.
* **revisit** (``non-consecutive-revisit``): for a separable map, a block is revisited
  exactly when a grid axis it does not depend on is outer to one it does (a witness of
  three grid points follows); otherwise the blocks are walked in the grid's order.

Block indices that depend on an unknown (a prefetched scalar, an operation the
analysis does not follow) leave the questions that need them not decided, naming the
unknown. Every witness grid point is checked against the index map's own jaxpr (jax
evaluates it) before it is reported.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.limits import INT64_MAX, INT64_MIN
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import remove_unused_symbols
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.linear_form import single_dimension_forms
from hlo_indexing.maps.points import distinct_rows
from hlo_indexing.pallas.calls import BLOCKED, ELEMENT, SQUEEZED, Operand, PallasCall
from hlo_indexing.pallas.operand_maps import OperandMaps, corner_points, grid_table
from hlo_indexing.pallas.report import (
    ENUMERATED,
    NOT_DECIDED,
    OUT_OF_RANGE,
    PARTIAL,
    RACE,
    REASONED,
    REVISIT,
    UNCOVERED,
    Finding,
)
from hlo_indexing.symbolic_tiling.pallas import grid_index_name

#: Evaluates an operand's index map (its jaxpr) at a grid point: the block indices.
Evaluator = Callable[[Operand, tuple[int, ...]], tuple[int, ...]]


@dataclass(frozen=True)
class Question:
    """The context every check shares: the call, the limit on enumerated points, the
    evaluator of witnesses, the parallel axes."""

    call: PallasCall
    limit: int
    evaluate: Evaluator
    parallel_axes: tuple[int, ...]

    @property
    def grid(self) -> tuple[int, ...]:
        """The call's grid (static: the checks run only then)."""
        assert self.call.grid is not None
        return self.call.grid

    def finding(self, kind: str, message: str, operand: Operand | None, **extra: object) -> Finding:
        """A finding of this call about ``operand``."""
        return Finding(kind, message, operand.label if operand is not None else None, self.call.name, **extra)  # type: ignore[arg-type]

    def point_text(self, point: Sequence[int]) -> str:
        """``(i=3, j=0)``."""
        return "(" + ", ".join(f"{grid_index_name(k)}={v}" for k, v in enumerate(point)) + ")"


# ---------------------------------------------------------------------------- queries


@dataclass(frozen=True)
class Outcome:
    """The answer to "is there a grid point where ...": ``point`` (a witness), else
    ``decided`` (proven none) or ``reason`` (not decided, why); ``method`` says how."""

    point: tuple[int, ...] | None = None
    decided: bool = True
    reason: str = ""
    method: str = REASONED


def find_point(piece: IndexingMap, expr: ir.AffineExpr, interval: Interval, limit: int) -> Outcome:
    """A grid point of ``piece``'s domain where ``expr`` (over its variables) lies in
    ``interval``; see the module docstring for the order of the methods."""
    bounds = piece.expr_bounds(expr)
    if bounds.intersect(interval).is_empty:
        return Outcome()
    if _uses_runtime(piece, expr) or (piece.runtime_vars and any(_uses_runtime(piece, e) for e in piece.constraints)):
        origins = sorted({v.origin for v in piece.runtime_vars})
        return Outcome(decided=False, reason=f"it depends on {', '.join(origins)}")
    if piece.num_symbols:  # unknowns that other block indices use: not this question's
        alone = ir.AffineMap.get(piece.num_dims, piece.num_symbols, [expr], piece.context)
        piece = remove_unused_symbols(IndexingMap(alone, piece.dim_vars, piece.range_vars, piece.runtime_vars, piece.constraints))
        expr = piece.results[0]
    restricted = piece.add_constraint(expr, interval)
    if restricted.is_known_empty():
        return Outcome()
    restricted = restricted.simplify()
    if restricted.is_known_empty():
        return Outcome()
    for corner in corner_points(restricted):
        if restricted.contains_point(corner, [0] * restricted.num_symbols):
            return Outcome(corner)
    if restricted.domain_size() <= limit:
        points, _ = restricted.enumerate(limit)
        if len(points):
            return Outcome(tuple(int(v) for v in points[0, : restricted.num_dims]), method=ENUMERATED)
        return Outcome(method=ENUMERATED)
    return Outcome(
        decided=False,
        reason=f"the ranges do not decide it and its {restricted.domain_size()} grid points exceed limits.MAX_PALLAS_GRID_POINTS ({limit})",
    )


def _uses_runtime(piece: IndexingMap, expr: ir.AffineExpr) -> bool:
    dims: set[int] = set()
    symbols: set[int] = set()
    ax.used_variables(expr, dims, symbols)
    return any(s >= len(piece.range_vars) for s in symbols)


# ---------------------------------------------------------------------------- block range


def range_findings(question: Question, maps: OperandMaps) -> list[Finding]:
    """``block-index-out-of-range`` and ``partial-block`` for one operand (one finding
    of each at most: the first witness), or ``not-decided``."""
    operand = maps.operand
    found: dict[str, Finding] = {}
    undecided: list[str] = []
    for piece in maps.pieces:
        for position, (dim, size) in enumerate(zip(operand.block, operand.array_shape)):
            expr = piece.results[position]
            for kind, interval in _bad_intervals(dim.kind, dim.size, size):
                if kind in found:
                    continue
                outcome = find_point(piece, expr, interval, question.limit)
                if outcome.point is not None:
                    finding = _range_finding(question, maps, kind, position, outcome)
                    if finding is not None:
                        found[kind] = finding
                elif not outcome.decided:
                    undecided.append(f"whether block dimension {position} stays in range ({outcome.reason})")
    findings = list(found.values())
    if undecided and OUT_OF_RANGE not in found:
        reasons = "; ".join(dict.fromkeys(undecided))
        findings.append(question.finding(NOT_DECIDED, f"{operand.label}: not decided {reasons}", operand))
    return findings


def _bad_intervals(kind: str, size: int, extent: int) -> list[tuple[str, Interval]]:
    """The block indices of one dimension that put the block wholly outside the array
    (``out``), or across its edge (``partial``). An element window (``pl.Element``) is
    not padded: one that crosses the edge reaches outside the array, so it is ``out``
    too (Pallas's TPU interpreter raises on it)."""
    if kind == BLOCKED:
        blocks = -(-extent // size)
        out = [(OUT_OF_RANGE, Interval(blocks, INT64_MAX)), (OUT_OF_RANGE, Interval(INT64_MIN, -1))]
        if extent % size:
            out.append((PARTIAL, Interval(blocks - 1, blocks - 1)))
        return out
    if kind == SQUEEZED:
        return [(OUT_OF_RANGE, Interval(extent, INT64_MAX)), (OUT_OF_RANGE, Interval(INT64_MIN, -1))]
    return [(OUT_OF_RANGE, Interval(extent - size + 1, INT64_MAX)), (OUT_OF_RANGE, Interval(INT64_MIN, -1))]


def _range_finding(question: Question, maps: OperandMaps, kind: str, position: int, outcome: Outcome) -> Finding | None:
    operand = maps.operand
    assert outcome.point is not None
    point = outcome.point
    blocks = question.evaluate(operand, point)
    if _index_at(maps, point, position) != blocks[position]:
        return None  # the maps disagree with jax: never report what jax does not confirm
    unknown = maps.components_with_unknowns()
    shown = "(" + ", ".join("?" if k in unknown else str(b) for k, b in enumerate(blocks)) + ("," if len(blocks) == 1 else "") + ")"
    starts = _starts(operand, blocks)
    dim = operand.block[position]
    first, last = starts[position], starts[position] + dim.size - 1
    extent = operand.array_shape[position]
    where = (
        f"at grid point {question.point_text(point)} the block index is {shown}: along dimension {position} "
        f"the block covers elements {first}..{last} of an extent of {extent}"
    )
    block = f"(block {_sizes(operand)}, array {tuple(operand.array_shape)})"
    if kind == OUT_OF_RANGE:
        access = "reads" if operand.role == "input" else "writes"
        outside = "past the array's edge (an element window is not padded)" if dim.kind == ELEMENT else "entirely outside the array"
        message = f"{operand.label}: {where}, {outside} {block}: it {access} memory that is not the operand's"
    else:
        effect = "it reads padding" if operand.role == "input" else "its writes past the edge are masked"
        message = f"{operand.label}: {where}, across the array's edge {block}: {effect}"
    element = tuple(max(0, min(s, n - 1)) if k != position else s for k, (s, n) in enumerate(zip(starts, operand.array_shape)))
    return question.finding(kind, message, operand, grid_point=point, element=element, method=outcome.method)


def _index_at(maps: OperandMaps, point: Sequence[int], position: int) -> int | None:
    """Block index ``position`` at a grid point, from the piece holding it, when it does
    not depend on an unknown (unknowns at 0, as the jaxpr is evaluated)."""
    for piece in maps.pieces:
        zeros = [0] * piece.num_symbols
        if piece.contains_point(point, zeros) and not _uses_runtime(piece, piece.results[position]):
            return piece.evaluate(point, zeros)[position]
    return None


def _blocks_at(maps: OperandMaps, point: Sequence[int]) -> tuple[int, ...] | None:
    for piece in maps.pieces:
        if piece.contains_point(point, [0] * piece.num_symbols) and not piece.runtime_vars:
            return piece.evaluate(point, [0] * piece.num_symbols)
    return None


def _starts(operand: Operand, blocks: Sequence[int]) -> list[int]:
    return [b * d.size if d.kind == BLOCKED else b for b, d in zip(blocks, operand.block)]


def _sizes(operand: Operand) -> tuple[int | None, ...]:
    return tuple(None if d.kind == SQUEEZED else d.size for d in operand.block)


# ---------------------------------------------------------------------------- separable maps


@dataclass(frozen=True)
class Step:
    """A block index ``coefficient * g<axis> + offset`` (``axis`` None: a constant)."""

    axis: int | None
    coefficient: int
    offset: int


def separable(maps: OperandMaps) -> list[Step] | None:
    """The steps of an operand's single-piece, constraint-free map whose block indices
    each depend on at most one grid index, no two on the same one; else None."""
    if len(maps.pieces) != 1:
        return None
    (piece,) = maps.pieces
    if piece.constraints or piece.runtime_vars:
        return None
    forms = single_dimension_forms(piece.results)
    return None if forms is None else [Step(axis, coefficient, offset) for axis, coefficient, offset in forms]


# ---------------------------------------------------------------------------- coverage


def coverage_findings(question: Question, maps: OperandMaps) -> list[Finding]:
    """``uncovered-output`` for one output, or ``not-decided``."""
    operand = maps.operand
    if any(p.runtime_vars for p in maps.pieces):
        return [_undecided(question, maps, "whether every element of the output is written")]
    steps = separable(maps)
    if steps is not None:
        missing = _first_missing_separable(question, operand, steps)
        method = REASONED
    else:
        table = grid_table(maps, question.grid, question.limit)
        units = _units(operand)
        if table is None or math.prod(t for t, _ in units) > question.limit or len(table.blocks) * math.prod(w for _, w in units) > question.limit:
            return [
                question.finding(
                    NOT_DECIDED,
                    f"{operand.label}: not decided whether every element is written: the map is not separable and "
                    f"the grid or the output is larger than limits.MAX_PALLAS_GRID_POINTS ({question.limit}) allows to enumerate",
                    operand,
                )
            ]
        missing = _first_missing_marked(operand, table.blocks, units)
        method = ENUMERATED
    if missing is None:
        return []
    element = missing
    message = (
        f"{operand.label}: element {element} is written by no grid point "
        f"(block {_sizes(operand)}, array {tuple(operand.array_shape)}): its value is whatever the output buffer held"
    )
    return [question.finding(UNCOVERED, message, operand, element=element, method=method)]


def _units(operand: Operand) -> list[tuple[int, int]]:
    """Per block dimension, the (count, width) of the units coverage is counted in:
    blocks for a blocked dimension (width 1), elements otherwise (width: the block size)."""
    units = []
    for dim, extent in zip(operand.block, operand.array_shape):
        if dim.kind == BLOCKED:
            units.append((-(-extent // dim.size), 1))
        else:
            units.append((extent, dim.size))
    return units


def _unit_to_element(operand: Operand, position: int, unit: int) -> int:
    dim = operand.block[position]
    return unit * dim.size if dim.kind == BLOCKED else unit


def _first_missing_separable(question: Question, operand: Operand, steps: list[Step]) -> tuple[int, ...] | None:
    for position, ((count, width), step) in enumerate(zip(_units(operand), steps)):
        if step.axis is None or step.coefficient == 0 or question.grid[step.axis] == 1:
            low = high = step.offset
            stride = 0
        else:
            ends = (step.offset, step.offset + step.coefficient * (question.grid[step.axis] - 1))
            low, high, stride = min(ends), max(ends), abs(step.coefficient)
        gap = first_gap(low, high, stride, width, count)
        if gap is not None:
            element = [0] * len(operand.block)
            element[position] = _unit_to_element(operand, position, gap)
            return tuple(element)
    return None


def first_gap(low: int, high: int, stride: int, width: int, count: int) -> int | None:
    """The first unit of ``[0, count)`` covered by no interval ``[p, p + width)``, ``p``
    in ``low, low + stride, ..., high`` (``stride`` 0: ``p = low`` only), else None."""
    if count <= 0:
        return None
    if low > 0:
        return 0
    # The last start at or before 0, and whether its interval reaches 0.
    last_before = low if stride == 0 else min(high, low + (-low // stride) * stride)
    if last_before + width <= 0:
        return 0
    if stride == 0 or stride > width:
        gap = last_before + width  # nothing starts before the next start, past this unit
    else:
        gap = high + width  # contiguous from here to the last interval
    return gap if gap < count else None


def _first_missing_marked(operand: Operand, blocks: np.ndarray, units: list[tuple[int, int]]) -> tuple[int, ...] | None:
    counts = [c for c, _ in units]
    marked = np.zeros(counts, bool)
    for offsets in itertools.product(*[range(w) for _, w in units]):
        coords = blocks + np.asarray(offsets, np.int64)
        inside = np.all((coords >= 0) & (coords < np.asarray(counts, np.int64)), axis=1)
        if inside.any():
            marked[tuple(coords[inside].T)] = True
    if marked.all():
        return None
    first = np.argwhere(~marked)[0]
    return tuple(_unit_to_element(operand, k, int(u)) for k, u in enumerate(first))


# ---------------------------------------------------------------------------- races


def race_findings(question: Question, maps: OperandMaps) -> list[Finding]:
    """``race`` for one output (two grid points that differ along a parallel axis and
    write overlapping blocks), or ``not-decided``."""
    operand = maps.operand
    axes = [a for a in question.parallel_axes if question.grid[a] > 1]
    if not axes:
        return []
    if any(p.runtime_vars for p in maps.pieces):
        return [_undecided(question, maps, "whether grid points on different cores write the same block")]
    witness = _unused_parallel_axis(question, maps, axes)
    if witness is not None:
        return [witness]
    steps = separable(maps)
    if steps is not None and all(_moves_a_block(operand, steps, axis) for axis in axes):
        return []
    table = grid_table(maps, question.grid, question.limit)
    units = _units(operand)
    if table is None or len(table.blocks) * math.prod(w for _, w in units) > question.limit:
        return [
            question.finding(
                NOT_DECIDED,
                f"{operand.label}: not decided whether grid points on different cores write the same block: the map is "
                f"not separable and the grid is larger than limits.MAX_PALLAS_GRID_POINTS ({question.limit}) allows to enumerate",
                operand,
            )
        ]
    pair = _overlapping_pair(table.points, table.blocks, units, axes)
    if pair is None:
        return []
    first, second = pair
    finding = _race_finding(question, maps, first, second, ENUMERATED)
    return [finding] if finding is not None else []


def _moves_a_block(operand: Operand, steps: list[Step], axis: int) -> bool:
    for dim, step in zip(operand.block, steps):
        if step.axis == axis and step.coefficient != 0:
            return dim.kind != ELEMENT or abs(step.coefficient) >= dim.size
    return False


def _unused_parallel_axis(question: Question, maps: OperandMaps, axes: list[int]) -> Finding | None:
    """A race witness when the block ignores a parallel axis: two grid points that
    differ only along it, in the first piece, write the same block."""
    for axis in axes:
        if any(_piece_uses_dim(p, axis, question.grid[axis]) for p in maps.pieces):
            continue
        piece = maps.pieces[0]
        point = tuple(v.bounds.lower for v in piece.dim_vars)
        other = list(point)
        other[axis] += 1
        if not piece.contains_point(point, []) or not piece.contains_point(other, []):
            continue
        finding = _race_finding(question, maps, point, tuple(other), REASONED)
        if finding is not None:
            return finding
    return None


def _piece_uses_dim(piece: IndexingMap, axis: int, extent: int) -> bool:
    bounds = piece.dim_vars[axis].bounds
    dims: set[int] = set()
    symbols: set[int] = set()
    for expr in list(piece.results) + list(piece.constraints):
        ax.used_variables(expr, dims, symbols)
    return axis in dims or bounds != Interval(0, extent - 1)  # a narrowed range: the region depends on it


def _overlapping_pair(points: np.ndarray, blocks: np.ndarray, units: list[tuple[int, int]], axes: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """Two grid points with different coordinates along ``axes`` whose blocks share a
    unit (the first such pair in the grid's order), else None."""
    widths = [w for _, w in units]
    rows = np.arange(len(points))
    keys, owners = [], []
    for offsets in itertools.product(*[range(w) for w in widths]):
        keys.append(blocks + np.asarray(offsets, np.int64))
        owners.append(rows)
    all_keys = np.concatenate(keys)
    all_rows = np.concatenate(owners)
    parallel = points[all_rows][:, axes]
    order = np.lexsort(tuple(parallel.T[::-1]) + tuple(all_keys.T[::-1]))
    sorted_keys, sorted_parallel, sorted_rows = all_keys[order], parallel[order], all_rows[order]
    same_key = np.all(sorted_keys[1:] == sorted_keys[:-1], axis=1)
    differ = np.any(sorted_parallel[1:] != sorted_parallel[:-1], axis=1)
    hits = np.nonzero(same_key & differ)[0]
    if not len(hits):
        return None
    pairs = sorted((min(sorted_rows[h], sorted_rows[h + 1]), max(sorted_rows[h], sorted_rows[h + 1])) for h in hits)
    first, second = pairs[0]
    return tuple(int(v) for v in points[first]), tuple(int(v) for v in points[second])


def _race_finding(question: Question, maps: OperandMaps, first: tuple[int, ...], second: tuple[int, ...], method: str) -> Finding | None:
    operand = maps.operand
    blocks_a = question.evaluate(operand, first)
    blocks_b = question.evaluate(operand, second)
    if _blocks_at(maps, first) != tuple(blocks_a) or _blocks_at(maps, second) != tuple(blocks_b):
        return None
    axes = [grid_index_name(a) for a in question.parallel_axes if first[a] != second[a]]
    starts = _starts(operand, blocks_a)
    element = tuple(max(s, t) for s, t in zip(starts, _starts(operand, blocks_b)))
    message = (
        f"{operand.label}: grid points {question.point_text(first)} and {question.point_text(second)} differ along the "
        f"parallel axis {', '.join(axes)} and write overlapping blocks {tuple(blocks_a)} and {tuple(blocks_b)} "
        f"(e.g. element {element}): on a chip that runs parallel axes on several cores (megacore: v4, v5p) "
        "they race"
    )
    return question.finding(RACE, message, operand, grid_point=first, element=element, method=method)


# ---------------------------------------------------------------------------- revisits


def revisit_findings(question: Question, maps: OperandMaps) -> list[Finding]:
    """``non-consecutive-revisit`` for one output, or ``not-decided``."""
    operand = maps.operand
    if math.prod(question.grid) <= 1:
        return []
    if any(p.runtime_vars for p in maps.pieces):
        return [_undecided(question, maps, "whether an output block is revisited after other blocks")]
    steps = separable(maps)
    if steps is not None:
        return _separable_revisit(question, maps, steps)
    table = grid_table(maps, question.grid, question.limit)
    if table is None:
        return [
            question.finding(
                NOT_DECIDED,
                f"{operand.label}: not decided whether a block is revisited: the map is not separable and the grid is "
                f"larger than limits.MAX_PALLAS_GRID_POINTS ({question.limit}) allows to enumerate",
                operand,
            )
        ]
    found = _walk_revisit(table.points, table.blocks)
    if found is None:
        return []
    return _revisit_finding(question, maps, *found, method=ENUMERATED)


def _separable_revisit(question: Question, maps: OperandMaps, steps: list[Step]) -> list[Finding]:
    grid = question.grid
    used = sorted({s.axis for s in steps if s.axis is not None and s.coefficient != 0 and grid[s.axis] > 1})
    unused = [a for a in range(len(grid)) if grid[a] > 1 and a not in used]
    if not used or not unused or min(unused) > max(used):
        return []
    outer, inner = min(unused), max(used)
    first = tuple(0 for _ in grid)
    middle = tuple(1 if a == inner else 0 for a in range(len(grid)))
    again = tuple(1 if a == outer else 0 for a in range(len(grid)))
    return _revisit_finding(question, maps, first, middle, again, method=REASONED)


def _walk_revisit(points: np.ndarray, blocks: np.ndarray) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None:
    """(a visit, a visit of another block after it, a later visit of the first block)
    when some block is visited in two separate runs of the grid's order."""
    changed = np.any(blocks[1:] != blocks[:-1], axis=1)
    starts = np.concatenate([[0], np.nonzero(changed)[0] + 1])
    run_keys = blocks[starts]
    _, first_run, inverse = distinct_rows(run_keys)
    repeated = np.nonzero(first_run[inverse] != np.arange(len(starts)))[0]
    if not len(repeated):
        return None
    run = int(repeated[0])
    earlier = int(first_run[inverse[run]])
    visit = int(starts[earlier + 1] - 1)
    between = int(starts[earlier + 1])
    again = int(starts[run])
    return tuple(int(v) for v in points[visit]), tuple(int(v) for v in points[between]), tuple(int(v) for v in points[again])


def _revisit_finding(question: Question, maps: OperandMaps, first: tuple[int, ...], middle: tuple[int, ...], again: tuple[int, ...], *, method: str) -> list[Finding]:
    operand = maps.operand
    block_first = question.evaluate(operand, first)
    block_middle = question.evaluate(operand, middle)
    block_again = question.evaluate(operand, again)
    if tuple(block_first) != tuple(block_again) or tuple(block_first) == tuple(block_middle):
        return []
    if _blocks_at(maps, first) != tuple(block_first) or _blocks_at(maps, again) != tuple(block_again):
        return []
    element = tuple(_starts(operand, block_first))
    message = (
        f"{operand.label}: block {tuple(block_first)} is written at grid point {question.point_text(first)}, then block "
        f"{tuple(block_middle)} at {question.point_text(middle)}, then block {tuple(block_first)} again at "
        f"{question.point_text(again)}: the pipeline has written it back and does not reload it, so what the first "
        f"visit wrote (e.g. element {element}) is lost or overwritten"
    )
    return [question.finding(REVISIT, message, operand, grid_point=again, element=element, method=method)]


def _undecided(question: Question, maps: OperandMaps, what: str) -> Finding:
    origins = ", ".join(maps.runtime_origins) or "values the analysis does not follow"
    return question.finding(NOT_DECIDED, f"{maps.operand.label}: not decided {what}: the block index depends on {origins}", maps.operand)
