"""A symbolic tiling at concrete tile sizes (XLA's ``ComputeTiledComputation``).

:func:`tiled_computation` instantiates every node of a :class:`~.tiled_fusion.TiledFusion`:
its tile sizes and strides (the symbolic tile evaluated) and the map from the program id
``pid_0`` to its tile's offsets: the root's tile offsets (tiles iterated major to minor)
composed with the node's indexing map, range variables at their lower bounds. Nodes in
a dot's operand region have programs for the dot's contracting tiles too (minor-most).
Nodes giving identical tiles are one tiled instruction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hlo_indexing.dialect_glue.bindings import SsaValue, ir
from hlo_indexing.dialect_glue.context import default_context
from hlo_indexing.errors import TilingError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import compose, remove_unused_symbols
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.linear_form import linearize
from hlo_indexing.maps.points import distinct_rows
from hlo_indexing.symbolic_tiling.symbolic_tile import SymbolicTile
from hlo_indexing.symbolic_tiling.tiled_fusion import (
    TiledFusion,
    TiledNode,
    TilingParameter,
    defining_op,
)


@dataclass(eq=False)
class TiledInstruction:
    """A node at concrete tile sizes: its ``tile_sizes``, ``tile_strides`` and
    ``tile_offsets_indexing`` (program id ``pid_0`` -> the tile's offsets)."""

    node: TiledNode
    tile_sizes: tuple[int, ...]
    tile_strides: tuple[int, ...]
    tile_offsets_indexing: IndexingMap
    operands: list["TiledInstruction"] = field(default_factory=list)
    #: Per runtime variable of :attr:`tile_offsets_indexing`, the tiled instruction of
    #: the value it reads (e.g. a dynamic slice's offset operand).
    runtime_variables: list["TiledInstruction"] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The HLO instruction name."""
        return self.node.name


@dataclass
class TiledComputation:
    """The tiled computation: ``roots`` (one per fusion output) and every instruction
    (operands before users), each node instantiated once; the flat ``tile_sizes`` and
    the ``schedule`` it was made with (see :func:`program_id_map`)."""

    roots: list[TiledInstruction]
    instructions: list[TiledInstruction]
    num_programs: int
    tile_sizes: tuple[int, ...] = ()
    schedule: str = "major_to_minor"

    def by_parameter(self) -> dict[int, list[TiledInstruction]]:
        """The tiled instructions of each fusion parameter, by parameter number."""
        found: dict[int, list[TiledInstruction]] = {}
        for inst in self.instructions:
            number = inst.node.parameter_number
            if number is not None:
                found.setdefault(number, []).append(inst)
        return found


#: Largest extra output whose partition by its tiles is checked by enumeration.
MAX_PARTITION_CHECK = 1 << 24
#: Output indices :func:`check_partition` computes in one numpy pass.
PARTITION_CHUNK = 1 << 20


def tiled_computation(
    fusion: TiledFusion,
    tile_sizes: Sequence[int],
    *,
    schedule: str = "major_to_minor",
    constraints_are_known_satisfied: bool = False,
) -> TiledComputation:
    """Every node at these flat tile sizes (see :class:`TiledInstruction`).

    ``schedule`` orders the root's tiles by program id: ``major_to_minor``, or
    ``transposed_dot`` (the two minor-most output dimensions swapped). Raises
    :class:`TilingError`: ``INVALID_ARGUMENT`` when the sizes violate the
    constraints (unless known satisfied), ``UNIMPLEMENTED`` for a negative stride,
    a concatenate operand whose size is not a multiple of the tile, or an extra
    output whose tiles do not partition it."""
    sizes = list(tile_sizes)
    if not constraints_are_known_satisfied and not fusion.satisfies_constraints(sizes):
        raise TilingError("INVALID_ARGUMENT", f"tile sizes {sizes} do not satisfy the constraints {fusion.constraints}")
    pid_maps: dict[tuple[int, ...], tuple[IndexingMap, int]] = {}
    # Most nodes share their tile and map with others (an elementwise chain reads the
    # root's tile through one map): each is evaluated once per distinct one.
    evaluated: dict[SymbolicTile, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    offsets_of: dict[tuple[tuple[int, ...], tuple[object, ...]], IndexingMap] = {}
    made: dict[int, TiledInstruction] = {}
    # Tiled instructions are deduplicated again at concrete sizes (two symbolic
    # nodes of one value may give the same tiles).
    unique: dict[tuple[SsaValue, tuple[int, ...], tuple[int, ...], IndexingMap], TiledInstruction] = {}
    ordered: list[TiledInstruction] = []
    for node in fusion.nodes:
        found = evaluated.get(node.tile)
        if found is None:
            _, tile_sizes_here, tile_strides = node.tile.evaluate(sizes)
            found = evaluated[node.tile] = (tile_sizes_here, tile_strides)
        node_sizes, strides = found
        if any(s < 0 for s in strides):
            raise TilingError("UNIMPLEMENTED", f"{node.name}: tiles with a negative stride {strides} are not supported")
        map_key = (node.hidden, node.indexing_map.memo_key())  # names too: the offsets map carries them
        offsets = offsets_of.get(map_key)
        if offsets is None:
            if node.hidden not in pid_maps:
                pid_maps[node.hidden] = program_id_map(fusion.parameters, sizes, schedule, node.hidden)
            offsets = offsets_of[map_key] = _offsets_map(pid_maps[node.hidden][0], node.indexing_map, sizes, fusion)
        key = (node.value, node_sizes, strides, offsets)
        inst = unique.get(key)
        if inst is None:
            inst = TiledInstruction(node, node_sizes, strides, offsets, [made[id(o)] for o in node.operands])
            unique[key] = inst
            ordered.append(inst)
        made[id(node)] = inst
    for inst in ordered:
        _check_concatenate(inst)
    by_value: dict[SsaValue, TiledInstruction] = {}
    for inst in ordered:
        by_value.setdefault(inst.node.value, inst)
    for inst in ordered:
        inst.runtime_variables = _runtime_variables(inst, fusion, by_value)
    count = program_id_map(fusion.parameters, sizes, schedule, ())[1]
    first = made[id(fusion.root_candidates[0][0])]
    roots = [first] + [_partitioning(candidates, made, count, first) for candidates in fusion.root_candidates[1:]]
    return TiledComputation(roots, ordered, count, tuple(sizes), schedule)


def _runtime_variables(
    inst: TiledInstruction, fusion: TiledFusion, by_value: dict[SsaValue, TiledInstruction]
) -> list[TiledInstruction]:
    """The tiled instructions of the values the runtime variables of ``inst`` read."""
    out = []
    for variable in inst.tile_offsets_indexing.runtime_vars:
        source = fusion.runtime_sources.get(variable.origin)
        found = by_value.get(source) if source is not None else None
        if found is None:
            raise TilingError("UNIMPLEMENTED", f"{inst.name}: no tiled instruction for runtime variable '{variable.origin}'")
        out.append(found)
    return out


def program_id_map(
    parameters: Sequence[TilingParameter], sizes: Sequence[int], schedule: str, hidden: tuple[int, ...]
) -> tuple[IndexingMap, int]:
    """``(pid_0) -> (offset of each parameter)`` for program ``pid_0``, and the number
    of programs: the root's tiles (major to minor, or the two minor-most output
    dimensions swapped for ``transposed_dot``), then, minor-most, the tiles of the
    ``hidden`` contracting parameters; other contracting parameters stay at 0."""
    ctx = default_context()
    output = [i for i, p in enumerate(parameters) if not p.contracting]
    order = list(output)
    if schedule == "transposed_dot" and len(order) >= 2:
        order[-1], order[-2] = order[-2], order[-1]
    elif schedule != "major_to_minor":
        raise TilingError("INVALID_ARGUMENT", f"unknown schedule '{schedule}'")
    order += list(hidden)
    counts = {i: -(-parameters[i].size // sizes[i]) for i in order}
    total = 1
    for i in order:
        total *= counts[i]
    pid = ax.dim(0, ctx)
    offsets: dict[int, ir.AffineExpr] = {}
    inner = 1
    for position, i in enumerate(reversed(order)):
        index = ax.floordiv(pid, inner) if inner > 1 else pid
        if position < len(order) - 1:
            index = ax.mod(index, counts[i])
        offsets[i] = ax.mul(index, sizes[i])
        inner *= counts[i]
    results = [offsets.get(i, ax.constant(0, ctx)) for i in range(len(parameters))]
    pid_var = Variable(Interval(0, total - 1), "pid_0")
    return IndexingMap.from_exprs([pid_var], results, context=ctx).simplify(), total


def _offsets_map(pid_map: IndexingMap, indexing: IndexingMap, sizes: Sequence[int], fusion: TiledFusion) -> IndexingMap:
    """``pid -> offsets`` of a node's tile: the root tile's offsets through the node's
    map, with every range variable at its lower bound (tiles start there).

    A program has the tile when its box of tiling parameters meets the map's domain:
    each parameter's range ``[lo, hi]`` is widened to ``[lo - size + 1, hi]`` before
    composing (the box starts at the offset), so a tile that starts in a pad's
    padding, or before a dynamic update, still exists; a concatenate operand's
    programs stay those of its region (its offsets are multiples of the tile). A
    constraint on the dimensions (a convolution's padded window ``d0 + d4 in [1, 32]``,
    an update placed at a runtime offset) is widened the same way (:func:`_box_meets`):
    the box meets it somewhere, not necessarily at its first element. Runtime variables
    that are one value (:func:`_one_runtime_value`) become one variable."""
    widened = [
        Variable(Interval(v.bounds.lower - size + 1, v.bounds.upper), v.name, v.origin)
        for v, size in zip(indexing.dim_vars, sizes)
    ]
    constraints = {}
    for expr, interval in indexing.constraints.items():
        constrained_dims: set[int] = set()
        ax.used_variables(expr, constrained_dims, set())
        if not constrained_dims:
            constraints[expr] = interval
            continue
        met = _box_meets(expr, interval, sizes)
        if met is not None:
            constraints[expr] = met
    composed = compose(pid_map, indexing.replace(dims=widened, constraints=constraints))
    ctx = composed.context
    n_range = len(composed.range_vars)
    symbols = [ax.constant(v.bounds.lower, ctx) for v in composed.range_vars] + [
        ax.symbol(j, ctx) for j in range(len(composed.runtime_vars))
    ]
    dims = [ax.dim(i, ctx) for i in range(composed.num_dims)]
    results = [ax.substitute(e, dims, symbols) for e in composed.results]
    constraints = {}
    for expr, interval in composed.constraints.items():
        used_dims: set[int] = set()
        used_symbols: set[int] = set()
        ax.used_variables(expr, used_dims, used_symbols)
        if not any(s < n_range for s in used_symbols):
            constraints[ax.substitute(expr, dims, symbols)] = interval
    runtime_vars: Sequence[Variable] = composed.runtime_vars
    merged = _one_runtime_value(runtime_vars, fusion, ctx)
    if merged is not None:
        runtime_symbols, runtime_vars = merged
        results = [ax.substitute(e, dims, runtime_symbols) for e in results]
        constraints = {ax.substitute(e, dims, runtime_symbols): interval for e, interval in constraints.items()}
    affine = ir.AffineMap.get(composed.num_dims, len(runtime_vars), results, ctx)
    out = IndexingMap._make(affine, composed.dim_vars, (), runtime_vars, constraints)
    return remove_unused_symbols(out.simplify())


def runtime_value(variable: Variable, fusion: TiledFusion) -> object:
    """What a runtime variable stands for: a scalar it reads and the range its op gives
    it (two dynamic slices at one index both read it clamped to that range: one value,
    not two independent ones, whatever a composed map narrowed each to), else its own
    origin."""
    source = fusion.runtime_sources.get(variable.origin)
    if source is None or ir.ShapedType(source.type).rank != 0:
        return variable.origin
    return (source, fusion.runtime_ranges.get(variable.origin, variable.bounds))


def runtime_value_count(fusion: TiledFusion) -> int:
    """How many combinations of runtime values the fusion's tiles are counted over:
    the product of the ranges of the distinct :func:`runtime_value` s its maps read."""
    ranges: dict[object, int] = {}
    for node in fusion.nodes:
        for variable in node.indexing_map.runtime_vars:
            ranges[runtime_value(variable, fusion)] = fusion.runtime_ranges.get(variable.origin, variable.bounds).size
    return math.prod(ranges.values())


def _one_runtime_value(
    variables: Sequence[Variable], fusion: TiledFusion, ctx: ir.Context
) -> tuple[list[ir.AffineExpr], list[Variable]] | None:
    """Per runtime variable, the symbol that stands for it (the first of the variables
    of one :func:`runtime_value`), and the variables with the first of each over the
    intersection of their ranges (the map's domain holds a point where the value is
    in each's). None when no two are one value."""
    first: dict[object, int] = {}
    symbols = []
    merged = list(variables)
    for j, variable in enumerate(variables):
        k = first.setdefault(runtime_value(variable, fusion), j)
        if k != j:
            kept = merged[k]
            merged[k] = Variable(kept.bounds.intersect(variable.bounds), kept.name, kept.origin)
        symbols.append(ax.symbol(k, ctx))
    return (symbols, merged) if len(first) < len(variables) else None


def _box_meets(expr: ir.AffineExpr, interval: Interval, sizes: Sequence[int]) -> Interval | None:
    """The values of ``expr`` at a box's first element (dimension ``i`` spanning
    ``sizes[i]`` values from there) for which some element of the box has ``expr`` in
    ``interval``: ``interval`` widened by what the box adds to ``expr`` when ``expr`` is
    linear in the dimensions; None (no constraint: a superset) when it is not."""
    form = linearize(expr)
    low, high = interval.lower, interval.upper
    for atom, coeff in form.terms.items():
        typed = ax.typed(atom)
        if isinstance(typed, ax.Dim):
            span = coeff * (sizes[typed.position] - 1)
            low, high = low - max(span, 0), high - min(span, 0)
            continue
        used_dims: set[int] = set()
        ax.used_variables(atom, used_dims, set())
        if used_dims:  # a dimension under a division or a product: not linear
            return None
    return Interval(low, high)


def _check_concatenate(inst: TiledInstruction) -> None:
    if inst.node.opcode != "concatenate":
        return
    op = defining_op(inst.node.value)
    assert op is not None, "a concatenate node is an op result"
    axis = ir.IntegerAttr(op.attributes["dimension"]).value
    tile = inst.tile_sizes[axis]
    start = 0
    for operand in op.operands:
        # A tile must not straddle two operands: each operand starts at a multiple of it.
        if start % tile:
            raise TilingError(
                "UNIMPLEMENTED", f"{inst.name}: operand offset {start} along dimension {axis} is not divisible by tile size {tile}"
            )
        start += ir.RankedTensorType(operand.type).shape[axis]


def _partitioning(
    candidates: list[TiledNode], made: dict[int, TiledInstruction], programs: int, first: TiledInstruction
) -> TiledInstruction:
    """The first tiled instruction of an extra output whose tiles partition it."""
    error = None
    for node in candidates:
        try:
            check_partition(made[id(node)], programs, first)
            return made[id(node)]
        except TilingError as exc:
            error = exc
    assert error is not None
    raise error


def _tile_steps(linear: np.ndarray, tile_sizes: Sequence[int]) -> np.ndarray:
    """The row-major positions ``linear`` inside a tile of ``tile_sizes``, one row of
    ``len(tile_sizes)`` indices each (rows of no index for a scalar's empty tile)."""
    if not tile_sizes:
        return np.zeros((len(linear), 0), np.int64)
    return np.stack(np.unravel_index(linear, tuple(tile_sizes)), axis=1)


def check_partition(root: TiledInstruction, programs: int, first: TiledInstruction) -> None:
    """An extra output must be written exactly once: its tiles, over all programs,
    partition its index space. An output tiled exactly as the first root (same shape,
    tiles and offsets) does, as the first root's tiles partition it; any other is
    checked by enumeration up to :data:`MAX_PARTITION_CHECK` elements (every program's
    tile at once, :data:`PARTITION_CHUNK` indices per numpy pass: the passes grow with
    the output, not with a tile's elements), and refused above."""
    shape = list(ir.RankedTensorType(root.node.value.type).shape)
    offsets_map = root.tile_offsets_indexing
    if offsets_map.runtime_vars:
        raise TilingError("UNIMPLEMENTED", "Unsupported case of multi-output fusion: runtime offsets")
    if (shape == list(ir.RankedTensorType(first.node.value.type).shape)
            and (root.tile_sizes, root.tile_strides, offsets_map) == (first.tile_sizes, first.tile_strides, first.tile_offsets_indexing)):
        return
    total = int(np.prod(shape, dtype=np.int64))
    if total > MAX_PARTITION_CHECK:
        raise TilingError("UNIMPLEMENTED", f"Unsupported case of multi-output fusion: {root.name} too large to check")
    _, offsets = offsets_map.enumerate(max_points=programs + 1)
    extents = np.array(shape, np.int64)
    origins = offsets[((offsets >= 0) & (offsets < extents)).all(axis=1)]  # a tile's first element, when inside
    if len(distinct_rows(origins)[0]) < len(origins):  # written by two programs: no enumeration needed
        raise TilingError("UNIMPLEMENTED", f"Unsupported case of multi-output fusion: the tiles of {root.name} do not partition it")
    linear = np.array([int(np.prod(shape[k + 1 :], dtype=np.int64)) for k in range(len(shape))], np.int64)
    counts = np.zeros(total, np.int64)
    strides = np.array(root.tile_strides, np.int64)
    tile_elements = int(np.prod(root.tile_sizes, dtype=np.int64))
    chunk = max(1, PARTITION_CHUNK // max(len(offsets), 1))  # tile elements per pass
    for begin in range(0, tile_elements, chunk):
        steps = _tile_steps(np.arange(begin, min(begin + chunk, tile_elements)), root.tile_sizes)
        index = (offsets[:, None, :] + steps[None, :, :] * strides).reshape(len(offsets) * len(steps), len(shape))
        inside = ((index >= 0) & (index < extents)).all(axis=1)
        counts += np.bincount(index[inside] @ linear, minlength=total)
    if not (counts == 1).all():
        raise TilingError("UNIMPLEMENTED", f"Unsupported case of multi-output fusion: the tiles of {root.name} do not partition it")
