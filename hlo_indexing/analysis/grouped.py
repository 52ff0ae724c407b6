"""XLA's remaining indexing entry points, on MLIR values: maps grouped by the producer
they read, from any value of a computation, and the epilogue's input -> output map.

=============================================  ==============================================
XLA (``xla/hlo/analysis/indexing_analysis.h``)  here
=============================================  ==============================================
``GroupIndexingMapsByProducers(indexing, i)``   :func:`group_indexing_maps_by_producers`
``ComputeGroupedOutputToInputIndexing(f, t)``   :func:`grouped_output_to_input_indexing`
``ComputeEpilogueInputToOutputIndexing(p, r)``  :func:`epilogue_input_to_output_indexing`
=============================================  ==============================================

XLA keys its groups by HLO instruction; an MLIR computation has values instead, so the
groups here are keyed by :class:`ir.Value`: an op result (one key per result of a
multi-result op, where XLA has one per instruction) or a block argument (XLA's fusion
parameter, which XLA reports as the fusion's operand: for an ``mhlo.fusion``, block
argument ``k`` stands for operand ``k`` of the fusion op).

:func:`grouped_output_to_input_indexing` starts at any value ``target`` of a
computation (its block: a ``func.func`` body, an ``mhlo.fusion`` region, ...): ``target`` gets the
identity map and every value it is computed from gets the maps from ``target``'s index
space to the elements of that value it reads, composed op by op from ``target`` up
(XLA's walk in reverse post order), simplified and without unused symbols. A target
that is a block argument reads only itself. Per-op maps are those of
:func:`hlo_indexing.output_to_input_indexing` (ops with a body through their body's
fused maps), with runtime variables that the block computes folded in, as the fused
maps of :mod:`hlo_indexing.analysis.fusion` have them. A set that grows beyond
``max_maps`` maps is replaced by one map reading the whole value (the value is named in
:attr:`GroupedIndexing.capped`). Unlike XLA, a chain of collectives is not undefined:
the maps describe the element read on the device that holds it, as every fused map of
this project does (XLA's ``replica id`` maps are not composed).

:func:`epilogue_input_to_output_indexing` composes input -> output maps along every
use chain from ``parent`` to ``root`` (XLA follows one chain; where there are several,
this is their union, so the elements of ``root`` each element of ``parent`` feeds).

Example::

    grouped = grouped_output_to_input_indexing(add_op)   # from the add's result
    grouped[func.arguments[0]]                            # frozenset of IndexingMap
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from hlo_indexing.analysis.fused_maps import DEFAULT_MAX_MAPS, static_shape, whole_value_map
from hlo_indexing.analysis.per_op import input_to_output_indexing, output_to_input_indexing
from hlo_indexing.analysis.runtime_folding import fold_runtime_variables
from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.call_like import operand_values
from hlo_indexing.errors import IndexOutOfRangeError, InvalidArgumentError
from hlo_indexing.maps.algebra import compose, remove_unused_symbols
from hlo_indexing.maps.indexing_map import IndexingMap, display_text
from hlo_indexing.ops.result import InstructionIndexing

__all__ = [
    "GroupedIndexing",
    "epilogue_input_to_output_indexing",
    "group_indexing_maps_by_producers",
    "grouped_output_to_input_indexing",
]

Maps = frozenset[IndexingMap]


@dataclass(frozen=True)
class GroupedIndexing(Mapping[ir.Value, Maps]):
    """Maps grouped by value: ``grouped[value]`` is the frozenset of maps from the
    start's index space to ``value``. ``capped`` names the values whose set was
    over-approximated by one whole-value map (see the module docstring)."""

    groups: Mapping[ir.Value, Maps]
    capped: tuple[str, ...] = field(default=())

    def __getitem__(self, value: ir.Value) -> Maps:
        return self.groups[value]

    def __iter__(self) -> Iterator[ir.Value]:
        return iter(self.groups)

    def __len__(self) -> int:
        return len(self.groups)

    def __str__(self) -> str:
        lines = []
        for value, maps in self.groups.items():
            lines += [f"{value.get_name()}: {text}" for text in sorted(display_text(m) for m in maps)]
        lines += [f"over-approximated: {name}" for name in self.capped]
        return "\n".join(lines)


def group_indexing_maps_by_producers(indexing: InstructionIndexing, op: OpLike) -> GroupedIndexing:
    """XLA's ``GroupIndexingMapsByProducers``: the output -> input maps ``indexing`` of
    ``op`` (one set per operand) regrouped by the value each operand is, so that an
    operand used twice (``add(x, x)``) gets the union of its maps. The operands are
    those the per-op maps index (:func:`~hlo_indexing.dialect_glue.call_like.operand_values`:
    with the values the branches of ``case``/``if`` capture)."""
    operands = operand_values(op)
    if len(indexing.maps) != len(operands):
        raise InvalidArgumentError(
            f"group_indexing_maps_by_producers: {len(indexing.maps)} map sets for the {len(operands)} operands of {op.operation.name}"
        )
    groups: dict[ir.Value, Maps] = {}
    for operand, maps in zip(operands, indexing.maps):
        groups[operand] = groups.get(operand, frozenset()) | maps
    return GroupedIndexing(groups)


def _target_value(target: ir.Value | OpLike, result_index: int) -> ir.Value:
    if isinstance(target, ir.Value):
        return target
    results = target.operation.results
    if not 0 <= result_index < len(results):
        raise IndexOutOfRangeError(f"{target.operation.name} has no result {result_index}; it has {len(results)}")
    return results[result_index]


def _block(value: ir.Value) -> ir.Block:
    """The block ``value`` is defined in."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return owner
    return owner.operation.block


def _position(block: ir.Block, value: ir.Value, what: str) -> int:
    """The index in ``block``'s op list of the op defining ``value`` (-1 for a block
    argument of ``block``); :class:`InvalidArgumentError` when ``value`` is not of the block."""
    if isinstance(value, ir.BlockArgument):
        if value.owner == block:
            return -1
    elif not isinstance(value.owner, ir.Block):
        owner = value.owner.operation
        for index, op in enumerate(block.operations):
            if op.operation == owner:
                return index
    raise InvalidArgumentError(f"the {what} is not a value of the computation's block (a nested region's value?)")


class _Groups:
    """Sets of maps per value under construction, capped at ``max_maps``."""

    def __init__(self, max_maps: int, simplify: bool):
        self.max_maps = max_maps
        self.simplify = simplify
        self.groups: dict[ir.Value, set[IndexingMap]] = {}
        self.capped: list[str] = []

    def add(self, value: ir.Value, consumers: set[IndexingMap], producers: Maps, domain: IndexingMap) -> None:
        """Compose every map of ``consumers`` with every map of ``producers`` into
        ``value``'s set; one whole-value map once the set is over the cap."""
        found = self.groups.setdefault(value, set())
        for consumer in consumers:
            for producer in producers:
                composed = compose(consumer, producer)
                if self.simplify:
                    composed = remove_unused_symbols(composed.simplify())
                found.add(composed)
        if len(found) > self.max_maps and not any(m.is_undefined for m in found):
            found.clear()
            found.add(whole_value_map(static_shape(value), domain))
            self.capped.append(value.get_name())

    def result(self) -> GroupedIndexing:
        return GroupedIndexing({value: frozenset(maps) for value, maps in self.groups.items()}, tuple(self.capped))


def _output_to_input_maps(op: OpLike, result_index: int, simplify: bool) -> list[Maps]:
    """Per operand value, the op's maps from result ``result_index``, runtime variables
    the block computes folded in (as in :mod:`hlo_indexing.analysis.fusion`)."""
    indexing = output_to_input_indexing(op, result_index, simplify=simplify)
    if not any(indexing.runtime):
        return list(indexing.maps)
    return [
        frozenset(f for m in maps for f in fold_runtime_variables(m, sources, op))
        for maps, sources in zip(indexing.maps, indexing.runtime, strict=True)
    ]


def grouped_output_to_input_indexing(
    target: ir.Value | OpLike,
    *,
    result_index: int = 0,
    max_maps: int = DEFAULT_MAX_MAPS,
    simplify: bool = True,
) -> GroupedIndexing:
    """XLA's ``ComputeGroupedOutputToInputIndexing``: from ``target`` (a value, or an
    op: its result ``result_index``), the maps to ``target`` itself (the identity) and
    to every value of its block it is computed from, grouped by value (see the module
    docstring; the block is XLA's fusion: a function body, an ``mhlo.fusion`` region,
    ...). ``simplify=False`` composes without simplifying (the maps as built, e.g. to
    check the simplified ones against)."""
    start = _target_value(target, result_index)
    block = _block(start)
    position = _position(block, start, "target")
    identity = IndexingMap.identity(static_shape(start), start.context)
    groups = _Groups(max_maps, simplify)
    groups.groups[start] = {identity}
    if position < 0:
        return groups.result()
    operations = list(block.operations)
    for op in reversed(operations[: position + 1]):
        for r, result in enumerate(op.results):
            consumers = groups.groups.get(result)
            if not consumers:
                continue
            for operand, maps in zip(operand_values(op), _output_to_input_maps(op, r, simplify)):
                groups.add(operand, set(consumers), maps, identity)
    return groups.result()


def _feeds(block: ir.Block, root: ir.Value) -> set[ir.Value]:
    """The values ``root`` is computed from, ``root`` included."""
    needed = {root}
    for op in reversed(list(block.operations)):
        if any(result in needed for result in op.results):
            needed.update(operand_values(op))
    return needed


def epilogue_input_to_output_indexing(
    parent: ir.Value | OpLike, root: ir.Value | OpLike, *, simplify: bool = True
) -> Maps:
    """XLA's ``ComputeEpilogueInputToOutputIndexing``: the maps from ``parent``'s index
    space to the elements of ``root`` each of its elements feeds, composed along the use
    chains from ``parent`` to ``root`` in their block (ops: their result 0). The identity
    when ``root`` is ``parent``; :class:`InvalidArgumentError` when no chain leads from
    ``parent`` to ``root``."""
    start, end = _target_value(parent, 0), _target_value(root, 0)
    block = _block(start)
    identity = IndexingMap.identity(static_shape(start), start.context)
    if start == end:
        return frozenset({identity})
    first = _position(block, start, "epilogue parent") + 1
    last = _position(block, end, "epilogue root")
    needed = _feeds(block, end)
    if start not in needed:
        raise InvalidArgumentError(f"no use chain leads from {start.get_name()} to {end.get_name()}")
    groups = _Groups(DEFAULT_MAX_MAPS, simplify)
    groups.groups[start] = {identity}
    for op in list(block.operations)[first : last + 1]:
        for k, operand in enumerate(operand_values(op)):
            consumers = groups.groups.get(operand)
            if not consumers:
                continue
            indexing = input_to_output_indexing(op, k, simplify=simplify)
            for result, maps in zip(op.results, indexing.maps):
                if result in needed:
                    groups.add(result, set(consumers), maps, identity)
    return frozenset(groups.groups.get(end, ()))
