"""Indexing maps of whole computations: the composition of per-op maps through a
``func.func`` body, an ``mhlo.fusion`` region, or any single-block region with a
terminator.

``fusion_indexing(region, result_index)`` walks the block from the terminator operand
``result_index`` up and gives, for every block argument, the set of maps from that
result's index space to the argument (simplified, de-duplicated). Each value's map set
is computed once (the walk visits every op once, in reverse program order), so the
cost is linear in the number of ops times the set sizes. A set larger
than ``max_maps``, or holding a map whose results exceed ``max_expr_nodes`` expression
nodes (irregular permutations such as alternating reshapes and transposes make exact
maps grow exponentially), is replaced by one over-approximating map that reads the
whole value (``(d...)[s...] -> (s...)``), and the result records that it happened.

``func.call`` of a function in the same module is followed into the callee (the
callee's own fused maps are composed in, in both directions, computed once per callee),
and so are ``stablehlo.composite`` (through its ``decomposition`` function) and a
nested ``mhlo.fusion`` (through its region).

Tuples have no index space: a map into a tuple value addresses one of its elements
(:mod:`hlo_indexing.ops.shape_ops`). The walk keeps, per value, one set of maps
per *element path* (``()`` for a tensor, ``(k, ...)`` for element ``k`` of a tuple), so
``get_tuple_element`` of a ``tuple`` reads only the selected operand. Maps of
tuple-typed arguments (results, input -> output) are given per element in
``FusionIndexing.elements``; an element path that reaches an op other than ``tuple``,
``get_tuple_element`` or a call gets *unknown* maps. Ask for one element of a
tuple-typed result with ``element=(k, ...)``.

Output -> input, runtime variables whose value the block computes from constants and
``iota`` (e.g. a ``dynamic_slice`` start index) are folded where the op's clamp is a
no-op (see :mod:`hlo_indexing.analysis.runtime_folding`). Example::

    fused = fusion_indexing(func_op)            # maps of result 0
    fused.argument_maps[0]                       # frozenset of IndexingMap for %arg0
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from hlo_indexing.analysis.loop_bodies import iteration_maps, outer_value_maps
from hlo_indexing.analysis.runtime_folding import fold_runtime_variables
from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.call_like import block_of, callee_block, operand_values
from hlo_indexing.errors import IndexOutOfRangeError, InvalidArgumentError, UnsupportedError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.text import display_text
from hlo_indexing.ops.analysis import (
    input_to_output_indexing,
    output_to_input_indexing,
)
from hlo_indexing.ops.builders import value_shape
from hlo_indexing.ops.regions import MapSets, RegionIndexing

#: Default cap on the number of distinct maps kept per value.
DEFAULT_MAX_MAPS = 16
#: Default cap on the expression size (nodes of all results) of one composed map.
DEFAULT_MAX_EXPR_NODES = 2000


#: An element of a value: ``()`` for the value itself, ``(k, ...)`` for element ``k``
#: (of element ...) of a tuple.
Path = tuple[int, ...]
#: Per element path of one value, the maps found so far.
ElementMaps = dict[Path, set[IndexingMap]]


@dataclass(frozen=True)
class FusionIndexing:
    """Fused maps: ``argument_maps[i]`` (output -> input) or ``result_maps[i]``
    (input -> output) is a frozenset of maps; ``over_approximated`` names the values
    whose sets were capped (see the module docstring). ``elements[i]`` maps each
    element path of a tuple-typed argument (result) that is read (written) to its set
    of maps (``{}`` for a tensor); ``maps[i]`` of such a value holds an undefined map
    pointing there."""

    maps: tuple[frozenset[IndexingMap], ...]
    over_approximated: tuple[str, ...] = ()
    direction: str = field(default="output_to_input", compare=False)
    elements: tuple[dict[Path, frozenset[IndexingMap]], ...] = field(default=(), hash=False)

    @property
    def argument_maps(self) -> tuple[frozenset[IndexingMap], ...]:
        """The map sets, one per argument (output to input) or per result (input to output):
        the same as :attr:`maps`."""
        return self.maps

    @property
    def is_unknown(self) -> bool:
        """True when some map is *unknown indexing*."""
        return any(m.is_undefined for maps in self.maps for m in maps)

    def element_maps(self, index: int) -> list[tuple[Path, frozenset[IndexingMap]]]:
        """``(element path, maps)`` of argument (result) ``index``: ``[((), maps[index])]``
        for a tensor, one entry per element of a tuple that is read (written)."""
        elements = self.elements[index] if index < len(self.elements) else {}
        return sorted(elements.items()) if elements else [((), self.maps[index])]

    def __str__(self) -> str:
        label = "operand" if self.direction == "output_to_input" else "result"
        lines = []
        for k in range(len(self.maps)):
            for path, maps in self.element_maps(k):
                prefix = f"{label} id = {k}" + (f" element {path_text(path)}:" if path else "")
                if not maps:
                    lines.append(f"{prefix} no dependence")
                for text in sorted(display_text(m) for m in maps):
                    lines.append(f"{prefix} {text}")
        return "\n".join(lines)


def tensor_elements(value_type: ir.Type) -> list[Path]:
    """The paths of the tensors inside a value of ``value_type``, in order: ``[()]`` for
    a tensor, ``[(0,), (1, 0), (1, 1)]`` for ``tuple<A, tuple<B, C>>``."""
    if not isinstance(value_type, ir.TupleType):
        return [()]
    return [(k,) + path for k in range(value_type.num_types) for path in tensor_elements(value_type.get_type(k))]


def path_text(path: Path) -> str:
    """``1.0`` for the path ``(1, 0)``."""
    return ".".join(map(str, path))


def _element_type(value_type: ir.Type, path: Path) -> ir.Type:
    """The type of element ``path`` of a value of ``value_type``."""
    for k in path:
        if not isinstance(value_type, ir.TupleType) or not 0 <= k < value_type.num_types:
            raise ValueError(f"{value_type} has no tuple element {k}")
        value_type = value_type.get_type(k)
    return value_type


def _whole_value_map(shape: tuple[int, ...], domain: IndexingMap) -> IndexingMap:
    """``(d...)[s...] -> (s...)`` over ``domain``'s dimensions: every element of a value
    of ``shape`` (the documented over-approximation of a capped set)."""
    context = domain.context
    symbols = [ir.AffineSymbolExpr.get(i, context) for i in range(len(shape))]
    affine_map = ir.AffineMap.get(domain.num_dims, len(shape), symbols, context)
    return IndexingMap(affine_map, domain.dim_vars, [(0, n - 1) for n in shape])


def _static_shape(value: ir.Value, path: Path = ()) -> tuple[int, ...]:
    value_type = _element_type(value.type, path)
    shape = value_shape(value_type)
    if shape is None:
        raise UnsupportedError(f"fused indexing needs static tensor shapes, got {value_type}")
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
    """One walk's state: the caps, the values that were capped, and the fused maps of
    each callee (per direction, index and element) computed so far."""

    def __init__(self, max_maps: int, max_expr_nodes: int = DEFAULT_MAX_EXPR_NODES):
        self.max_maps = max_maps
        self.max_expr_nodes = max_expr_nodes
        self.capped: list[str] = []
        self.callee_cache: dict[tuple[ir.Block, str, int, Path], list[ElementMaps]] = {}

    def add(
        self, table: dict[ir.Value, ElementMaps], value: ir.Value, path: Path, maps: Iterable[IndexingMap], domain: IndexingMap
    ) -> None:
        """Add ``maps`` to the set of element ``path`` of ``value``, capping it."""
        elements = table.setdefault(value, {})
        current = elements.setdefault(path, set())
        current.update(maps)
        if any(m.is_undefined for m in current):
            return
        if len(current) > self.max_maps or any(_too_large(m, self.max_expr_nodes) for m in maps):
            elements[path] = {_whole_value_map(_static_shape(value, path), domain)}
            name = value.get_name() if hasattr(value, "get_name") else str(value.type)
            self.capped.append(name + "".join(f"[{k}]" for k in path))

    def output_to_input(self, block: ir.Block, result_index: int, element: Path = ()) -> list[ElementMaps]:
        """Per block argument, the maps of each of its elements read by element
        ``element`` of terminator operand ``result_index``."""
        terminator = list(block.operations)[-1]
        root = terminator.operands[result_index]
        domain = IndexingMap.identity(_static_shape(root, element), context=root.context)
        table: dict[ir.Value, ElementMaps] = {root: {element: {domain}}}
        for op in reversed(list(block.operations)[:-1]):
            for r, result in enumerate(op.results):
                for path, consumer_maps in table.pop(result, {}).items():
                    if not consumer_maps:
                        continue
                    for operand, operand_path, producer_maps in self.reads(op, r, path):
                        composed = _compose_sets(consumer_maps, producer_maps)
                        if composed:
                            self.add(table, operand, operand_path, composed, domain)
        return [table.get(argument, {}) for argument in block.arguments]

    def reads(self, op: OpLike, result_index: int, path: Path) -> Iterator[tuple[ir.Value, Path, frozenset[IndexingMap] | None]]:
        """``(operand, element, maps)`` read by element ``path`` of result
        ``result_index``; ``maps`` None means "the same index" (tuple plumbing)."""
        operation = op.operation
        kind = op_attrs.op_kind(operation)[1]
        if kind == "get_tuple_element":
            yield operation.operands[0], (op_attrs.int_attr(operation, "index"),) + path, None
        elif kind == "tuple" and path:
            yield operation.operands[path[0]], path[1:], None
        elif (callee := callee_block(op)) is not None:
            key = (callee, "output_to_input", result_index, path)
            if key not in self.callee_cache:
                self.callee_cache[key] = self.output_to_input(callee, result_index, path)
            for operand, elements in zip(operation.operands, self.callee_cache[key], strict=True):
                for operand_path, maps in elements.items():
                    yield operand, operand_path, frozenset(maps)
        elif path or kind == "tuple":
            unknown = frozenset({_untracked_element(operation, "result", result_index, path)})
            for operand in operation.operands:
                yield operand, (), unknown
        else:
            for operand, operand_maps in zip(operand_values(operation), self.op_maps(op, result_index)):
                yield operand, (), operand_maps

    def op_maps(self, op: OpLike, result_index: int) -> tuple[frozenset[IndexingMap], ...]:
        """Output -> input maps of one op, with runtime variables computed in the block
        folded in."""
        indexing = output_to_input_indexing(op, result_index, regions=REGIONS)
        runtime = indexing.runtime or ((),) * len(indexing.maps)
        return tuple(
            frozenset(f for m in maps for f in fold_runtime_variables(m, sources, op))
            for maps, sources in zip(indexing.maps, runtime, strict=True)
        )

    def input_to_output(self, block: ir.Block, argument_index: int, element: Path = ()) -> list[ElementMaps]:
        """Per terminator operand, the maps of each of its elements that element
        ``element`` of block argument ``argument_index`` contributes to."""
        argument = block.arguments[argument_index]
        domain = IndexingMap.identity(_static_shape(argument, element), context=argument.context)
        table: dict[ir.Value, ElementMaps] = {argument: {element: {domain}}}
        operations = list(block.operations)
        for op in operations[:-1]:
            for k, operand in enumerate(operand_values(op)):
                for path, consumer_maps in list(table.get(operand, {}).items()):
                    if not consumer_maps:
                        continue
                    for result, result_path, producer_maps in self.writes(op, k, path):
                        composed = _compose_sets(consumer_maps, producer_maps)
                        if composed:
                            self.add(table, result, result_path, composed, domain)
        return [table.get(value, {}) for value in operations[-1].operands]

    def writes(self, op: OpLike, operand_index: int, path: Path) -> Iterator[tuple[ir.Value, Path, frozenset[IndexingMap] | None]]:
        """``(result, element, maps)`` that element ``path`` of operand
        ``operand_index`` contributes to; ``maps`` None means "the same index"."""
        operation = op.operation
        kind = op_attrs.op_kind(operation)[1]
        if kind == "get_tuple_element" and path:
            if path[0] == op_attrs.int_attr(operation, "index"):
                yield operation.results[0], path[1:], None
        elif kind == "tuple":
            yield operation.results[0], (operand_index,) + path, None
        elif (callee := callee_block(op)) is not None:
            key = (callee, "input_to_output", operand_index, path)
            if key not in self.callee_cache:
                self.callee_cache[key] = self.input_to_output(callee, operand_index, path)
            for result, elements in zip(operation.results, self.callee_cache[key], strict=True):
                for result_path, maps in elements.items():
                    yield result, result_path, frozenset(maps)
        elif path or kind == "get_tuple_element":
            unknown = frozenset({_untracked_element(operation, "operand", operand_index, path)})
            for result in operation.results:
                yield result, (), unknown
        else:
            for result, result_maps in zip(operation.results, input_to_output_indexing(op, operand_index, regions=REGIONS).maps):
                yield result, (), result_maps


def _untracked_element(operation: ir.Operation, what: str, index: int, path: Path) -> IndexingMap:
    element = f"element {path_text(path)} of " if path else ""
    return IndexingMap.undefined(f"{operation.name}: cannot follow {element}the tuple {what} #{index}")


def _compose_sets(consumer_maps: Iterable[IndexingMap], producer_maps: frozenset[IndexingMap] | None) -> set[IndexingMap]:
    if producer_maps is None:
        return set(consumer_maps)
    return {_compose(c, p) for c in consumer_maps for p in producer_maps}


def _compose(consumer: IndexingMap, producer: IndexingMap) -> IndexingMap:
    return consumer.compose(producer).simplify().remove_unused_symbols()


def fusion_indexing(
    region_or_func: ir.Region | OpLike,
    result_index: int = 0,
    *,
    element: Path = (),
    max_maps: int = DEFAULT_MAX_MAPS,
    max_expr_nodes: int = DEFAULT_MAX_EXPR_NODES,
) -> FusionIndexing:
    """Output -> input maps of a computation: one frozenset per block argument, from
    result ``result_index`` (its element ``element`` when it is a tuple).

    Raises :class:`~hlo_indexing.errors.InvalidArgumentError` for a ``builtin.module``
    (pass one of its functions, or use :func:`hlo_indexing.analyze`) and
    :class:`~hlo_indexing.errors.IndexOutOfRangeError` for a result it does not have."""
    block = _computation_block(region_or_func, "fusion_indexing")
    results = list(block.operations)[-1].operands
    _check_index("fusion_indexing", "result", result_index, len(results))
    root = results[result_index]
    if isinstance(_element_type(root.type, element), ir.TupleType):
        return _whole_tuple(f"result #{result_index}", root, element, len(block.arguments), "output_to_input")
    composer = _Composer(max_maps, max_expr_nodes)
    return _fusion_result(block.arguments, composer.output_to_input(block, result_index, element), composer, "output_to_input")


def fusion_input_to_output_indexing(
    region_or_func: ir.Region | OpLike, argument_index: int = 0, *, element: Path = (), max_maps: int = DEFAULT_MAX_MAPS
) -> FusionIndexing:
    """Input -> output maps from block argument ``argument_index`` (its element
    ``element`` when it is a tuple): one frozenset per terminator operand (result).
    Raises as :func:`fusion_indexing` does."""
    block = _computation_block(region_or_func, "fusion_input_to_output_indexing")
    _check_index("fusion_input_to_output_indexing", "argument", argument_index, len(block.arguments))
    argument = block.arguments[argument_index]
    results = list(block.operations)[-1].operands
    if isinstance(_element_type(argument.type, element), ir.TupleType):
        return _whole_tuple(f"argument #{argument_index}", argument, element, len(results), "input_to_output")
    composer = _Composer(max_maps)
    return _fusion_result(results, composer.input_to_output(block, argument_index, element), composer, "input_to_output")


def _computation_block(region_or_func: ir.Region | OpLike, caller: str) -> ir.Block:
    """The body of a function, fusion or region, refusing a whole module."""
    operation = getattr(region_or_func, "operation", None)
    if operation is not None and operation.name == "builtin.module":
        raise InvalidArgumentError(
            f"{caller}: expected a func.func, an mhlo.fusion or a region, not a builtin.module "
            "(pass one of module.body.operations, or use hlo_indexing.analyze(module))"
        )
    try:
        return block_of(region_or_func)
    except ValueError as exc:
        raise InvalidArgumentError(f"{caller}: {exc}") from None


def _check_index(caller: str, what: str, index: int, count: int) -> None:
    if not isinstance(index, int) or not 0 <= index < count:
        raise IndexOutOfRangeError(f"{caller}: no {what} {index!r}; the computation has {count} {what}s")


def _fusion_result(
    values: Sequence[ir.Value], per_value: list[ElementMaps], composer: _Composer, direction: str
) -> FusionIndexing:
    """Tensors keep their set; a tuple-typed value's sets go to ``elements``."""
    maps, elements = [], []
    for index, (value, found) in enumerate(zip(values, per_value, strict=True)):
        whole = frozenset(found.get((), ()))
        if isinstance(value.type, ir.TupleType) and found:
            what = "argument" if direction == "output_to_input" else "result"
            marker = IndexingMap.undefined(f"{what} #{index} is a {value.type}: see its per-element maps")
            maps.append(whole | {marker})
            elements.append({path: frozenset(s) for path, s in found.items()})
        else:
            maps.append(whole)
            elements.append({})
    return FusionIndexing(tuple(maps), tuple(composer.capped), direction, tuple(elements))


def _whole_tuple(what: str, value: ir.Value, element: Path, count: int, direction: str) -> FusionIndexing:
    """Unknown maps for every value: a whole tuple has no index space to map from."""
    at = f" element {path_text(element)}" if element else ""
    unknown = IndexingMap.undefined(
        f"{what}{at} is a {_element_type(value.type, element)}: ask for one of its tensor elements (element=(k, ...))"
    )
    return FusionIndexing((frozenset({unknown}),) * count, (), direction, ({},) * count)


class _FusedRegions:
    """The fused analysis as the region hook of per-op rules (:mod:`hlo_indexing.ops.regions`)."""

    def output_to_input(self, region: ir.Region, result_index: int) -> MapSets:
        return fusion_indexing(region, result_index).maps

    def input_to_output(self, region: ir.Region, argument_index: int) -> MapSets:
        return fusion_input_to_output_indexing(region, argument_index).maps

    def iteration_output_to_input(
        self, region: ir.Region, result_index: int, inductions: tuple[tuple[int, int, int], ...], count: int
    ) -> MapSets:
        return iteration_maps(self, region, result_index, inductions, count)

    def values_output_to_input(self, region: ir.Region, result_index: int, values: list) -> MapSets:
        return outer_value_maps(self, region, result_index, values)


#: The region analysis this module hands to per-op rules of ops with a body.
REGIONS: RegionIndexing = _FusedRegions()
