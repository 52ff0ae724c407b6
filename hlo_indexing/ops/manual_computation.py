"""``sdy.manual_computation`` (JAX's ``shard_map``): global maps from the body's
per-device maps.

Every device runs the body on its shards: dimension ``k`` of an operand split over mesh
axes ``A`` (major first) is cut into blocks of the body argument's size ``L``; the
device at mesh coordinates ``c`` holds block ``lin_A(c)`` (``c`` row-major over ``A``),
so its local element ``a`` is global element ``a + lin_A(c) * L``. Results are put
together the same way from the body's results. Output -> input, global result element
``d`` is computed by a device whose coordinates along the result's axes satisfy
``d floordiv L == lin_A(c)``, at local index ``d mod L``; the body's fused maps (region
hook) give the local elements it reads, which the same device holds. The coordinates
are range variables (one per mesh axis, so devices along an axis the result is not
split over are all covered). A body with a collective (in its regions or in a function
it calls) reads other devices' shards: its operands' coordinates are then fresh range
variables (any device), a sound over-approximation. A dimension whose split does not match the mesh (axes that are
not manual) is read from any block.

Example: ``shard_map(lambda a: a * 2, in_specs=P("x"), out_specs=P("x"))`` on 2
devices gives ``(d0, d1) -> (d0, d1)``.
"""

from __future__ import annotations

import math

from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.call_like import CALL_LIKE_OPS, callee_region
from hlo_indexing.dialect_glue.shardy import ManualComputation, manual_computation
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import eliminate_equal_symbols, remove_unused_symbols
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.interval import Interval
from hlo_indexing.ops.inversion import invert_direct
from hlo_indexing.ops.map_builders import dims, make_map
from hlo_indexing.ops.rule import OpInfo, RuleResult, UnknownIndexing, entry_maps, value_shape

#: Collectives: a body holding one reads other devices' shards.
CROSS_DEVICE_KINDS = frozenset(
    {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "collective_permute", "collective_broadcast"}
)


def _cross_device(op: OpLike) -> bool:
    """True when ``op``'s body holds a collective, in its regions or in a computation it
    calls (JAX puts a ``fori_loop``'s body, with its ``ppermute``, in a ``func.call``'d
    ``@closed_call``); each callee is walked once."""
    found: list[str] = []
    pending: list[ir.Operation] = [op.operation]
    walked: set[str] = set()

    def visit(inner: ir.Operation) -> ir.WalkResult:
        if inner.operation.name.partition(".")[2] in CROSS_DEVICE_KINDS:
            found.append(inner.operation.name)
            return ir.WalkResult.INTERRUPT
        symbol = CALL_LIKE_OPS.get(inner.operation.name)
        if symbol is not None and symbol in inner.operation.attributes:
            name = ir.FlatSymbolRefAttr(inner.operation.attributes[symbol]).value
            region = callee_region(inner)
            if name not in walked and region is not None:
                walked.add(name)
                pending.append(region.owner.operation)
        return ir.WalkResult.ADVANCE

    while pending and not found:
        pending.pop().walk(visit)
    return bool(found)


class _Coordinates:
    """The device coordinates as range variables: one per mesh axis, then fresh ones."""

    def __init__(self, manual: ManualComputation, context: ir.Context):
        self.context = context
        self.axes = list(manual.axis_sizes)
        self.sizes = manual.axis_sizes
        self.ranges: list[int] = [self.sizes[a] for a in self.axes]

    def fresh(self, size: int) -> ir.AffineExpr:
        self.ranges.append(size)
        return ax.symbol(len(self.ranges) - 1, self.context)

    def block(self, axes: tuple[str, ...], count: int, shared: bool) -> ir.AffineExpr | None:
        """The block index ``lin_axes(c)`` of ``count`` blocks (shared coordinates, or
        fresh ones), or None when ``axes`` do not split into ``count`` blocks."""
        if not axes or any(a not in self.sizes for a in axes) or math.prod(self.sizes[a] for a in axes) != count:
            return None
        index = ax.constant(0, self.context)
        for a in axes:
            coordinate = ax.symbol(self.axes.index(a), self.context) if shared else self.fresh(self.sizes[a])
            index = index * self.sizes[a] + coordinate
        return index


def _local(value_type: ir.Type, what: str) -> tuple[int, ...]:
    shape = value_shape(value_type)
    if shape is None:
        raise UnknownIndexing(f"{what} is not a statically shaped tensor")
    return shape


def _result_side(manual: ManualComputation, result_index: int, space: tuple, local_result: tuple,
                 coordinates: _Coordinates) -> tuple[list, dict]:
    """The local index of global result element ``d`` and the constraints tying the
    device coordinates to the block holding it."""
    d = dims(len(space), coordinates.context)
    local, constraints = [], {}
    for k, (n, size) in enumerate(zip(space, local_result, strict=True)):
        if n == size:
            local.append(d[k])
            continue
        block_index = coordinates.block(manual.results[result_index][k], n // size, True)
        if block_index is not None:
            constraints[ax.floordiv(d[k], size) - block_index] = Interval(0, 0)
        local.append(ax.mod(d[k], size))
    return local, constraints


def manual_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Global result ``result_index`` -> each global operand (module docstring)."""
    op = info.op.operation
    manual = manual_computation(op)
    if manual is None:
        raise UnknownIndexing("the shardings of the manual computation cannot be read")
    if info.regions is None:
        raise UnknownIndexing("the maps of a manual computation are its body's: ask hlo_indexing.analysis.per_op")
    body = op.regions[0]
    block = body.blocks[0]
    local_result = _local(block.operations[-1].operands[result_index].type, f"body result {result_index}")
    space = info.result(result_index)
    shared = not _cross_device(op)
    out = []
    for j, maps in enumerate(info.regions.output_to_input(body, result_index)):
        argument = _local(block.arguments[j].type, f"body argument {j}")
        per_operand = []
        for m in maps:
            if m.is_undefined:
                raise UnknownIndexing("the body's maps are unknown")
            if not m.is_known_empty():
                coordinates = _Coordinates(manual, info.context)
                local, constraints = _result_side(manual, result_index, space, local_result, coordinates)
                sides = (local, constraints, coordinates, local_result)
                per_operand.append(_lifted(m, sides, manual.operands[j], argument, info.operand(j), shared, space))
        out.append(per_operand)
    return out


def _lifted(m: IndexingMap, sides: tuple, axes: tuple, argument: tuple, global_shape: tuple, shared: bool,
            space: tuple) -> IndexingMap:
    """Body map ``m`` (local result -> local argument) as a global map; ``sides`` is the
    result side (local index, constraints, coordinates, local result shape). The body
    map's dimension bounds, where narrower than the local result, become constraints on
    the local index."""
    local, constraints, coordinates, local_result = sides
    variables = list(m.range_vars) + list(m.runtime_vars)  # runtime offsets: every value they may take
    base = len(coordinates.ranges)
    coordinates.ranges += [v.bounds.upper - v.bounds.lower + 1 for v in variables]
    symbols = [ax.symbol(base + i, coordinates.context) + v.bounds.lower for i, v in enumerate(variables)]
    results, all_constraints = [], dict(constraints)
    for e, c in m.constraints.items():
        all_constraints[ax.substitute(e, local, symbols)] = c
    for index, variable, size in zip(local, m.dim_vars, local_result, strict=True):
        if variable.bounds != Interval(0, size - 1):  # the body map covers part of the result (a concatenate's operand)
            all_constraints[index] = all_constraints.get(index, variable.bounds).intersect(variable.bounds)
    for k, e in enumerate(m.results):
        a = ax.substitute(e, local, symbols)
        count = global_shape[k] // argument[k] if argument[k] else 1
        if count > 1:
            block_index = coordinates.block(axes[k] if k < len(axes) else (), count, shared)
            a = a + (block_index if block_index is not None else coordinates.fresh(count)) * argument[k]
        results.append(a)
    lifted = make_map(coordinates.context, space, results, list(coordinates.ranges), (), all_constraints)
    return eliminate_equal_symbols(remove_unused_symbols(lifted.simplify()))


def manual_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Global operand -> each global result: the inverses of the output -> input maps."""
    target = info.operand(operand_index)
    return [
        [invert_direct(m, target) for m in entry_maps(manual_output_to_input(info, r)[operand_index])]
        for r in range(info.num_results)
    ]
