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

Tuples are followed element by element, as the fused walk follows them: the walk keeps
maps per tensor of a tuple value, ``get_tuple_element`` and ``tuple`` pass them on, and
a custom call whose result is a tuple (XLA's ``TopK``, LAPACK calls) reads through its
rule's maps of the element asked for. An element the walk cannot follow gets an unknown
map naming the op and the element.

Example: the body of ``lax.scan(lambda c, x: (c, x * 2), c0, xs)`` with ``xs`` of
``4x3`` gives, from the stacked output carry to the ``xs`` carry,
``(d0, d1, d2) -> (d2, d1)`` with ``d0 - d2 in [0, 0]`` (row ``d0`` written at
iteration ``d2 = d0`` reads row ``d2`` of ``xs``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from hlo_indexing.analysis.fused_maps import (
    Path,
    path_text,
    static_shape,
    tensor_elements,
    untracked_element,
    whole_value_map,
)
from hlo_indexing.analysis.runtime_folding import Known, Scope, fold_runtime_variables
from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.call_like import block_of, call_operands, callee_block, operand_values
from hlo_indexing.direction import Direction
from hlo_indexing.errors import UnsupportedError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps import algebra
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.ops.dispatch import result_indexing, tuple_elements_indexing
from hlo_indexing.ops.map_builders import dims, make_map
from hlo_indexing.ops.regions import ArgumentReached, MapSets, RegionIndexing
from hlo_indexing.ops.result import InstructionIndexing, RuntimeSource
from hlo_indexing.ops.rule import value_shape

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


def _key(value: ir.Value, path: Path) -> object:
    """The walks' table key of element ``path`` of ``value``: the value itself for a
    tensor (``()``), ``(value, path)`` for a tensor inside a tuple."""
    return (value, path) if path else value


class _BodyOp(NamedTuple):
    """One op of a block as the walks read it: its results, the values its per-op maps
    are indexed by (:func:`operand_values`), and whether a tuple is among them (the op
    is then read element by element, :meth:`_Walk.tuple_op`)."""

    op: ir.OpView
    results: tuple[ir.Value, ...]
    operands: tuple[ir.Value, ...]
    has_tuples: bool


@dataclass(frozen=True)
class _BlockParts:
    """A block's ops from the last before the terminator to the first, its arguments,
    the paths of each argument's tensors (``[()]`` for a tensor) and its results (the
    terminator's operands)."""

    backwards: tuple[_BodyOp, ...]
    arguments: tuple[ir.Value, ...]
    argument_elements: tuple[list[Path], ...]
    results: tuple[ir.Value, ...]

    @staticmethod
    def of(block: ir.Block) -> _BlockParts:
        operations = list(block.operations)
        backwards = []
        for op in reversed(operations[:-1]):
            results = tuple(op.results)
            operands = tuple(operand_values(op))
            has_tuples = any(isinstance(value.type, ir.TupleType) for value in results + operands)
            backwards.append(_BodyOp(op, results, operands, has_tuples))
        arguments = tuple(block.arguments)
        elements = tuple(tensor_elements(argument.type) for argument in arguments)
        return _BlockParts(tuple(backwards), arguments, elements, tuple(operations[-1].operands))


class _Walk:
    """One backward walk of a block: ``table`` maps each value (each tensor element of a
    tuple value, :func:`_key`) to the set of maps from the walk's domain to it."""

    def __init__(self, regions: RegionIndexing, domain: IndexingMap, stop: frozenset[ir.Value] = frozenset()):
        self.regions = regions
        self.domain = domain
        self.stop = stop  # values whose first map not known empty ends the walk (ArgumentReached)
        # the compositions of every walk of the analysis: walks from the results of one
        # body (and copies of a body) meet the same pairs of maps again and again
        self.composed: dict[tuple, list[IndexingMap]] = regions.memo(("loop body compositions",), dict)
        # a source fold skips (its map is not over the walk's dimensions)
        self.none = RuntimeSource(0, make_map(domain.context, [1] * (domain.num_dims + 1), []))

    def add(self, table: dict, value: ir.Value, maps: set, path: Path = ()) -> None:
        """Adds ``maps`` to those of element ``path`` of ``value``."""
        if value in self.stop and any(not m.is_known_empty() for m in maps):
            raise ArgumentReached
        key = _key(value, path)
        current = table.setdefault(key, set())
        current.update(maps)
        if len(current) > MAX_MAPS:
            table[key] = {whole_value_map(static_shape(value, path), self.domain)}

    def parts(self, block: ir.Block) -> _BlockParts:
        """The ops of ``block`` (with their results), its arguments and results, listed
        once per analysis: walks from every result of a body, and of the callees in it
        per result of each call, go over the same blocks."""
        return self.regions.memo(("loop body block", block), lambda: _BlockParts.of(block))

    def block(self, block: ir.Block, table: dict, scope: Scope) -> None:
        """Walks ``block`` backwards from the maps in ``table`` (of values of ``block``),
        leaving there the maps of the block's arguments (and of the values it reads from
        outside)."""
        for body_op in self.parts(block).backwards:
            if body_op.has_tuples:
                self.tuple_op(body_op, table, scope)
                continue
            for r, result in enumerate(body_op.results):
                consumer_maps = table.pop(result, None)
                if consumer_maps:
                    self.op(body_op, r, consumer_maps, table, scope)

    def op(self, body_op: _BodyOp, r: int, consumer_maps: set, table: dict, scope: Scope) -> None:
        """What ``consumer_maps`` of tensor result ``r`` read through the op."""
        callee = callee_block(body_op.op)
        if callee is not None:
            self.call(body_op, callee, r, (), consumer_maps, table, scope)
            return
        # the walks from every carry of a body ask for the same op's maps: read once per
        # analysis, without building the per-op cache key again
        operation = body_op.op.operation
        indexing = self.regions.memo(
            ("loop body op maps", operation, r), lambda: result_indexing(operation, r, regions=self.regions)
        )
        self.read(body_op, indexing, consumer_maps, table, scope)

    def tuple_op(self, body_op: _BodyOp, table: dict, scope: Scope) -> None:
        """What the maps of each tensor of the op's results read, for an op with a tuple
        among its results or operands, as :mod:`hlo_indexing.analysis.fusion` follows
        them: ``get_tuple_element`` and ``tuple`` pass an element's maps on unchanged, a
        call enters its callee from the element, a custom call with a tuple result reads
        through its rule's maps of that element (:func:`tuple_elements_indexing`); any
        other element is unknown, named after the op and the element."""
        operation = body_op.op.operation
        kind = op_attrs.op_kind(operation)[1]
        callee = callee_block(body_op.op)
        for r, result in enumerate(body_op.results):
            for path in tensor_elements(result.type):
                maps = table.pop(_key(result, path), None)
                if not maps:
                    continue
                if kind == "get_tuple_element":
                    self.add(table, body_op.operands[0], maps, (op_attrs.int_attr(operation, "index"),) + path)
                elif kind == "tuple":
                    self.add(table, body_op.operands[path[0]], maps, path[1:])
                elif callee is not None:
                    self.call(body_op, callee, r, path, maps, table, scope)
                elif len(path) == 1 and (by_element := self._element_indexing(operation, path[0])) is not None:
                    self.read(body_op, by_element, maps, table, scope)
                elif path:
                    unknown = {untracked_element(operation, "result", r, path)}
                    for operand in body_op.operands:
                        for operand_path in tensor_elements(operand.type):
                            self.add(table, operand, unknown, operand_path)
                else:
                    self.op(body_op, r, maps, table, scope)

    def _element_indexing(self, operation: ir.Operation, element: int) -> InstructionIndexing | None:
        """The maps of tensor ``element`` of a custom call's tuple result, once per analysis."""
        return self.regions.memo(
            ("loop body element maps", operation, element),
            lambda: tuple_elements_indexing(operation, Direction.OUTPUT_TO_INPUT, element),
        )

    def read(
        self, body_op: _BodyOp, indexing: InstructionIndexing, consumer_maps: set, table: dict, scope: Scope
    ) -> None:
        """Adds to ``table`` what ``consumer_maps`` (of one result, or one tensor of a
        tuple result) read through the op's maps ``indexing``. A tuple operand read by
        such maps (not through its elements) gets unknown maps."""
        op = body_op.op
        runtime = indexing.runtime or ((),) * len(indexing.maps)
        for k, (operand, producer_maps, sources) in enumerate(
            zip(body_op.operands, indexing.maps, runtime, strict=True)
        ):
            composed: set = set()
            for consumer in consumer_maps:
                for producer in producer_maps:
                    composed.update(self.compose(consumer, producer, sources, op, scope))
            if not composed:
                continue
            if body_op.has_tuples and isinstance(operand.type, ir.TupleType):
                unknown = {untracked_element(op.operation, "operand", k, ())}
                for path in tensor_elements(operand.type):
                    self.add(table, operand, unknown, path)
            else:
                self.add(table, operand, composed)

    def call(
        self, body_op: _BodyOp, callee: ir.Block, r: int, path: Path, consumer_maps: set, table: dict, scope: Scope
    ) -> None:
        """What ``consumer_maps`` of element ``path`` of result ``r`` of a call read,
        through the callee's block with its arguments bound to the call's operands."""
        parts = self.parts(callee)
        inner: dict = {_key(parts.results[r], path): set(consumer_maps)}
        operands = call_operands(body_op.op)
        self.block(callee, inner, Scope(dict(zip(parts.arguments, operands, strict=True)), scope))
        for argument, elements, operand in zip(parts.arguments, parts.argument_elements, operands, strict=True):
            for element in elements:
                found = inner.get(_key(argument, element))
                if found:
                    self.add(table, operand, found, element)

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
    table: dict = {root: {domain}}
    walk.block(block, table, Scope(known, None))
    parts = walk.parts(block)
    return tuple(
        _value_maps(table, argument, elements, f"body argument #{k}")
        for k, (argument, elements) in enumerate(zip(parts.arguments, parts.argument_elements, strict=True))
    )


def outer_value_maps(regions: RegionIndexing, region: ir.Region, result_index: int, values: list) -> MapSets:
    """For region result ``result_index``, one map set per value of ``values`` (values
    defined outside the region that it reads: a ``case`` branch's captures)."""
    block = block_of(region)
    root = block.operations[-1].operands[result_index]
    domain = IndexingMap.identity(_shape(root), context=root.context)
    table: dict = {root: {domain}}
    _Walk(regions, domain).block(block, table, Scope({}, None))
    return tuple(
        _value_maps(table, value, tensor_elements(value.type), f"captured value #{k}") for k, value in enumerate(values)
    )


def _value_maps(table: dict, value: ir.Value, elements: list[Path], what: str) -> frozenset[IndexingMap]:
    """The maps a walk left in ``table`` for ``value`` (``what`` it is to the caller),
    whose tensors are at ``elements`` (:func:`tensor_elements`). A tuple has no index
    space of its own (the loop and branch rules map tensors): one unknown map naming
    the elements read."""
    if elements == [()]:
        return frozenset(table.get(value, ()))
    read = [path_text(path) for path in elements if table.get(_key(value, path))]
    if not read:
        return frozenset()
    reason = f"the {what} is a {value.type}: cannot follow its element(s) {', '.join(read)}"
    return frozenset({IndexingMap.undefined(reason)})

