"""Walks of loop and branch bodies beyond what a fused map of a block gives: a counted
loop's body with the iteration number as a dimension (:func:`iteration_maps`), and a
region's maps to the values it reads from outside (:func:`outer_value_maps`).

A counted ``while`` (:mod:`hlo_indexing.ops.loops`) runs its body for ``t`` in
``[0, count - 1]`` with each induction carry equal to its ``start + step * t``. The body's
maps depend on ``t`` wherever that carry is used as an index (JAX's scan reads slice
``t`` of its inputs with ``dynamic_slice`` and writes slice ``t`` of its stacked outputs
with ``dynamic_update_slice``). :func:`iteration_maps` composes the body backwards from
one result, like :mod:`hlo_indexing.analysis.fusion`, over the result's index space
plus a trailing dimension ``t``, entering called computations with their arguments
bound to the caller's values, and folds every runtime variable whose value is an affine
expression of ``t`` (and constants) where the op's clamp is a no-op
(:func:`~hlo_indexing.analysis.runtime_folding.fold_runtime_variables` with the
induction carries bound to their ``start + step * t``). Runtime variables it cannot
fold stay.

Example: the body of ``lax.scan(lambda c, x: (c, x * 2), c0, xs)`` with ``xs`` of
``4x3`` gives, from the stacked output carry to the ``xs`` carry,
``(d0, d1, d2) -> (d2, d1)`` with ``d0 - d2 in [0, 0]`` (row ``d0`` written at
iteration ``d2 = d0`` reads row ``d2`` of ``xs``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from hlo_indexing.analysis.runtime_folding import Known, Scope, fold_runtime_variables
from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.call_like import block_of, call_operands, callee_block, operand_values
from hlo_indexing.errors import UnsupportedError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps import algebra
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.ops.dispatch import result_indexing
from hlo_indexing.ops.map_builders import dims, make_map, syms
from hlo_indexing.ops.rule import value_shape
from hlo_indexing.ops.regions import ArgumentReached, MapSets, RegionIndexing
from hlo_indexing.ops.result import RuntimeSource

#: Cap on the maps kept per value (then: the whole value, for every point).
MAX_MAPS = 16


def _has_elements(value: ir.Value) -> bool:
    """Whether ``value`` is a statically shaped tensor with no zero extent."""
    shape = value_shape(value.type)
    return shape is not None and 0 not in shape


def _shape(value: ir.Value) -> tuple[int, ...]:
    shape = value_shape(value.type)
    if shape is None:
        raise UnsupportedError(f"loop bodies need statically shaped tensors, got {value.type}")
    return shape


class _BodyOp(NamedTuple):
    """One op of a block as the walks read it: its results, whether each is a tuple, and
    the values its per-op maps are indexed by (:func:`operand_values`)."""

    op: ir.OpView
    results: tuple[ir.Value, ...]
    tuples: tuple[bool, ...]
    operands: tuple[ir.Value, ...]


@dataclass(frozen=True)
class _BlockParts:
    """A block's ops from the last before the terminator to the first, its arguments and
    its results (the terminator's operands)."""

    backwards: tuple[_BodyOp, ...]
    arguments: tuple[ir.Value, ...]
    results: tuple[ir.Value, ...]

    @staticmethod
    def of(block: ir.Block) -> _BlockParts:
        operations = list(block.operations)
        backwards = []
        for op in reversed(operations[:-1]):
            results = tuple(op.results)
            tuples = tuple(isinstance(result.type, ir.TupleType) for result in results)
            backwards.append(_BodyOp(op, results, tuples, tuple(operand_values(op))))
        return _BlockParts(tuple(backwards), tuple(block.arguments), tuple(operations[-1].operands))


class _Walk:
    def __init__(self, regions: RegionIndexing, domain: IndexingMap, stop: frozenset[ir.Value] = frozenset()):
        self.regions = regions
        self.domain = domain
        self.stop = stop  # values whose first map not known empty ends the walk (ArgumentReached)
        # the compositions of every walk of the analysis: walks from the results of one
        # body (and copies of a body) meet the same pairs of maps again and again
        self.composed: dict[tuple, list[IndexingMap]] = regions.memo(("loop body compositions",), dict)
        # a source fold skips (its map is not over the walk's dimensions)
        self.none = RuntimeSource(0, make_map(domain.context, [1] * (domain.num_dims + 1), []))

    def whole(self, value: ir.Value) -> IndexingMap:
        shape = _shape(value)
        context = self.domain.context
        affine_map = ir.AffineMap.get(self.domain.num_dims, len(shape), syms(len(shape), context), context)
        return IndexingMap(affine_map, self.domain.dim_vars, [(0, n - 1) for n in shape])

    def add(self, table: dict, value: ir.Value, maps: set) -> None:
        if value in self.stop and any(not m.is_known_empty() for m in maps):
            raise ArgumentReached
        current = table.setdefault(value, set())
        current.update(maps)
        if len(current) > MAX_MAPS:
            table[value] = {self.whole(value)}

    def parts(self, block: ir.Block) -> _BlockParts:
        """The ops of ``block`` (with their results), its arguments and results, listed
        once per analysis: walks from every result of a body, and of the callees in it
        per result of each call, go over the same blocks."""
        return self.regions.memo(("loop body block", block), lambda: _BlockParts.of(block))

    def block(self, block: ir.Block, table: dict, scope: Scope) -> list[set]:
        """Maps of each block argument, from the maps in ``table`` (of values of ``block``)."""
        parts = self.parts(block)
        for body_op in parts.backwards:
            for r, result in enumerate(body_op.results):
                consumer_maps = table.pop(result, None)
                if consumer_maps:
                    self.op(body_op, r, consumer_maps, table, scope)
        return [table.get(argument, set()) for argument in parts.arguments]

    def op(self, body_op: _BodyOp, r: int, consumer_maps: set, table: dict, scope: Scope) -> None:
        op = body_op.op
        callee = callee_block(op)
        if callee is not None:
            parts = self.parts(callee)
            inner = {parts.results[r]: set(consumer_maps)}
            operands = call_operands(op)
            arguments = self.block(callee, inner, Scope(dict(zip(parts.arguments, operands, strict=True)), scope))
            for operand, maps in zip(operands, arguments, strict=True):
                if maps:
                    self.add(table, operand, maps)
            return
        if body_op.tuples[r]:
            raise UnsupportedError(f"{op.name}: tuples in loop bodies are not followed")
        # the walks from every carry of a body ask for the same op's maps: read once per
        # analysis, without building the per-op cache key again
        operation = op.operation
        indexing = self.regions.memo(
            ("loop body op maps", operation, r), lambda: result_indexing(operation, r, regions=self.regions)
        )
        runtime = indexing.runtime or ((),) * len(indexing.maps)
        for operand, producer_maps, sources in zip(body_op.operands, indexing.maps, runtime, strict=True):
            composed: set = set()
            for consumer in consumer_maps:
                for producer in producer_maps:
                    composed.update(self.compose(consumer, producer, sources, op, scope))
            if composed:
                self.add(table, operand, composed)

    def compose(self, consumer: IndexingMap, producer: IndexingMap, sources: tuple, op: OpLike, scope: Scope) -> list:
        """``consumer`` then ``producer`` (an operand's map of ``op``, whose runtime
        variables ``sources`` describe), runtime variables folded where ``scope`` gives
        their value, simplified: one computation per distinct question in the analysis."""
        if producer.is_undefined:
            return [producer]
        folds = bool(producer.runtime_vars) and len(sources) == len(producer.runtime_vars)
        key: tuple = (consumer.memo_key(), producer.memo_key())
        if folds:
            key += (tuple((s.operand, s.index_map.memo_key()) for s in sources), op.operation, scope.key)
        found = self.composed.get(key)
        if found is None:
            found = self.composed[key] = self._compose(consumer, producer, sources, op, scope, folds)
        return found

    def _compose(self, consumer: IndexingMap, producer: IndexingMap, sources: tuple, op: OpLike, scope: Scope, folds: bool) -> list:
        m = algebra.compose(consumer, producer)
        if folds:
            # the sources over the consumer's space, then the consumer's own (not foldable here)
            over = [RuntimeSource(s.operand, algebra.compose(consumer, s.index_map)) for s in sources]
            pieces = fold_runtime_variables(m, over + [self.none] * len(consumer.runtime_vars), op, scope)
        else:
            pieces = [m]
        return [algebra.remove_unused_symbols(p.simplify()) for p in pieces if not p.is_known_empty()]


def iteration_maps(
    regions: RegionIndexing,
    region: ir.Region,
    result_index: int,
    inductions: tuple[tuple[int, int, int], ...],
    count: int,
    stop: frozenset[int] = frozenset(),
) -> MapSets:
    """For body result ``result_index``, one map set per body argument, over the
    result's index space plus a trailing iteration dimension ``t`` in ``[0, count -
    1]``, with body argument ``k`` equal to ``start + step * t`` for each ``(k, start,
    step)`` of ``inductions`` (module docstring). Raises
    :class:`~hlo_indexing.ops.regions.ArgumentReached` when it meets a map not known
    empty to a body argument of ``stop`` whose shape has no zero extent (its set then
    holds a map not known empty, even when capped to the whole argument)."""
    block = block_of(region)
    root = block.operations[-1].operands[result_index]
    space = _shape(root)
    context = root.context
    d = dims(len(space) + 1, context)
    domain = make_map(context, list(space) + [count], d[: len(space)])
    stopping = frozenset(a for k, a in enumerate(block.arguments) if k in stop and _has_elements(a))
    walk = _Walk(regions, domain, stopping)
    known = {block.arguments[k]: Known(ax.add(ax.mul(d[-1], step), start)) for k, start, step in inductions}
    scope = Scope(known, None)
    per_argument = walk.block(block, {root: {domain}}, scope)
    return tuple(frozenset(maps) for maps in per_argument)


def outer_value_maps(regions: RegionIndexing, region: ir.Region, result_index: int, values: list) -> MapSets:
    """For region result ``result_index``, one map set per value of ``values`` (values
    defined outside the region that it reads: a ``case`` branch's captures)."""
    block = block_of(region)
    root = block.operations[-1].operands[result_index]
    domain = IndexingMap.identity(_shape(root), context=root.context)
    table: dict = {root: {domain}}
    _Walk(regions, domain).block(block, table, Scope({}, None))
    return tuple(frozenset(table.get(value, ())) for value in values)

