"""Indexing maps of whole computations: the composition of per-op maps through a
``func.func`` body, an ``mhlo.fusion`` region, or any single-block region with a
terminator.

``fusion_indexing(region, result_index)`` walks the block backwards from the
terminator operand ``result_index`` and gives, for every block argument, the set of
maps from that result's index space to the argument (simplified, de-duplicated). Each
value's map set is computed once (the walk visits every op once, in reverse program
order), so the cost is linear in the number of ops times the set sizes. A set larger
than ``max_maps``, or holding a map whose results exceed ``max_expr_nodes`` expression
nodes (irregular permutations such as alternating reshapes and transposes make exact
maps grow exponentially), is replaced by one over-approximating map that reads the
whole value (``(d...)[s...] -> (s...)``), and the result records that it happened.

``func.call`` of a function in the same module is followed into the callee (the
callee's own fused maps are composed in, in both directions, computed once per callee),
and so are ``stablehlo.composite`` (through its ``decomposition`` function) and a
nested ``mhlo.fusion`` (through its region).

Output -> input, runtime variables whose value the block computes from constants and
``iota`` (e.g. a ``dynamic_slice`` start index) are folded where the op's clamp is a
no-op (see :mod:`hlo_indexing.runtime_folding`). Example::

    fused = fusion_indexing(func_op)            # maps of result 0
    fused.argument_maps[0]                       # frozenset of IndexingMap for %arg0
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hlo_indexing import affine_expr as ax
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.indexing_map import IndexingMap
from hlo_indexing.op_indexing.analysis import input_to_output_indexing, output_to_input_indexing
from hlo_indexing.errors import UnsupportedError
from hlo_indexing.op_indexing.builders import value_shape
from hlo_indexing.nested_blocks import block_of, callee_block
from hlo_indexing.runtime_folding import fold_runtime_variables

#: Default cap on the number of distinct maps kept per value.
DEFAULT_MAX_MAPS = 16
#: Default cap on the expression size (nodes of all results) of one composed map.
DEFAULT_MAX_EXPR_NODES = 2000


@dataclass(frozen=True)
class FusionIndexing:
    """Fused maps: ``argument_maps[i]`` (output -> input) or ``result_maps[i]``
    (input -> output) is a frozenset of maps; ``over_approximated`` names the values
    whose sets were capped (see the module docstring)."""

    maps: tuple[frozenset[IndexingMap], ...]
    over_approximated: tuple[str, ...] = ()
    direction: str = field(default="output_to_input", compare=False)

    @property
    def argument_maps(self) -> tuple[frozenset[IndexingMap], ...]:
        return self.maps

    @property
    def is_unknown(self) -> bool:
        return any(m.is_undefined for maps in self.maps for m in maps)

    def __str__(self) -> str:
        label = "operand" if self.direction == "output_to_input" else "result"
        lines = []
        for k, maps in enumerate(self.maps):
            if not maps:
                lines.append(f"{label} id = {k} no dependence")
            for text in sorted("unknown indexing" if m.is_undefined else str(m) for m in maps):
                lines.append(f"{label} id = {k} {text}")
        return "\n".join(lines)


def _whole_value_map(shape: tuple[int, ...], domain: IndexingMap) -> IndexingMap:
    """``(d...)[s...] -> (s...)`` over ``domain``'s dimensions: every element of a value
    of ``shape`` (the documented over-approximation of a capped set)."""
    context = domain.context
    symbols = [ir.AffineSymbolExpr.get(i, context) for i in range(len(shape))]
    affine_map = ir.AffineMap.get(domain.num_dims, len(shape), symbols, context)
    return IndexingMap(affine_map, domain.dim_vars, [(0, n - 1) for n in shape])


def _static_shape(value: Any) -> tuple[int, ...]:
    shape = value_shape(value.type)
    if shape is None:
        raise UnsupportedError(f"fused indexing needs static tensor shapes, got {value.type}")
    return shape


def _too_large(m: IndexingMap, max_expr_nodes: int) -> bool:
    if m.is_undefined or m.is_known_empty():
        return False
    total = 0
    for expr in m.results:
        total += ax.node_count(expr)
        if total > max_expr_nodes:
            return True
    return False


class _Composer:
    def __init__(self, max_maps: int, max_expr_nodes: int = DEFAULT_MAX_EXPR_NODES):
        self.max_maps = max_maps
        self.max_expr_nodes = max_expr_nodes
        self.capped: list[str] = []
        self.callee_cache: dict = {}

    def add(self, table: dict, value: Any, maps: Iterable[IndexingMap], domain: IndexingMap) -> None:
        current = table.setdefault(value, set())
        current.update(maps)
        if any(m.is_undefined for m in current):
            return
        if len(current) > self.max_maps or any(_too_large(m, self.max_expr_nodes) for m in maps):
            table[value] = {_whole_value_map(_static_shape(value), domain)}
            self.capped.append(value.get_name() if hasattr(value, "get_name") else str(value.type))

    def backward(self, block: Any, result_index: int) -> list[set[IndexingMap]]:
        terminator = list(block.operations)[-1]
        root = terminator.operands[result_index]
        domain = IndexingMap.identity(_static_shape(root), context=root.context)
        table: dict = {root: {domain}}
        for op in reversed(list(block.operations)[:-1]):
            for r, result in enumerate(op.results):
                consumer_maps = table.pop(result, None)
                if not consumer_maps:
                    continue
                per_operand = self.op_maps(op, r)
                for k, operand in enumerate(op.operands):
                    producer_maps = per_operand[k] if k < len(per_operand) else frozenset()
                    composed = {_compose(c, p) for c in consumer_maps for p in producer_maps}
                    if composed:
                        self.add(table, operand, composed, domain)
        return [table.get(arg, set()) for arg in block.arguments]

    def op_maps(self, op: Any, result_index: int) -> tuple[frozenset[IndexingMap], ...]:
        """Output -> input maps of one op (through its callee or nested fusion), with
        runtime variables computed in the block folded in."""
        callee = callee_block(op)
        if callee is None:
            indexing = output_to_input_indexing(op, result_index)
            runtime = indexing.runtime or ((),) * len(indexing.maps)
            return tuple(
                frozenset(f for m in maps for f in fold_runtime_variables(m, sources, op))
                for maps, sources in zip(indexing.maps, runtime, strict=True)
            )
        key = (callee, "backward", result_index)
        if key not in self.callee_cache:
            self.callee_cache[key] = tuple(frozenset(s) for s in self.backward(callee, result_index))
        return self.callee_cache[key]

    def op_maps_forward(self, op: Any, operand_index: int) -> tuple[frozenset[IndexingMap], ...]:
        """Input -> output maps of one op from ``operand_index`` (through its callee or
        nested fusion)."""
        callee = callee_block(op)
        if callee is None:
            return input_to_output_indexing(op, operand_index).maps
        key = (callee, "forward", operand_index)
        if key not in self.callee_cache:
            self.callee_cache[key] = tuple(frozenset(s) for s in self.forward(callee, operand_index))
        return self.callee_cache[key]

    def forward(self, block: Any, argument_index: int) -> list[set[IndexingMap]]:
        argument = block.arguments[argument_index]
        domain = IndexingMap.identity(_static_shape(argument), context=argument.context)
        table: dict = {argument: {domain}}
        operations = list(block.operations)
        for op in operations[:-1]:
            for k, operand in enumerate(op.operands):
                consumer_maps = table.get(operand)
                if not consumer_maps:
                    continue
                per_result = self.op_maps_forward(op, k)
                for r, result in enumerate(op.results):
                    producer_maps = per_result[r] if r < len(per_result) else frozenset()
                    composed = {_compose(c, p) for c in consumer_maps for p in producer_maps}
                    if composed:
                        self.add(table, result, composed, domain)
        terminator = operations[-1]
        return [table.get(value, set()) for value in terminator.operands]


def _compose(consumer: IndexingMap, producer: IndexingMap) -> IndexingMap:
    return consumer.compose(producer).simplify().remove_unused_symbols()


def fusion_indexing(
    region_or_func: Any,
    result_index: int = 0,
    *,
    max_maps: int = DEFAULT_MAX_MAPS,
    max_expr_nodes: int = DEFAULT_MAX_EXPR_NODES,
) -> FusionIndexing:
    """Output -> input maps of a computation: one frozenset per block argument."""
    composer = _Composer(max_maps, max_expr_nodes)
    sets = composer.backward(block_of(region_or_func), result_index)
    return FusionIndexing(tuple(frozenset(s) for s in sets), tuple(composer.capped))


def fusion_input_to_output_indexing(
    region_or_func: Any, argument_index: int = 0, *, max_maps: int = DEFAULT_MAX_MAPS
) -> FusionIndexing:
    """Input -> output maps from block argument ``argument_index``: one frozenset per
    terminator operand (result)."""
    composer = _Composer(max_maps)
    sets = composer.forward(block_of(region_or_func), argument_index)
    return FusionIndexing(tuple(frozenset(s) for s in sets), tuple(composer.capped), direction="input_to_output")
