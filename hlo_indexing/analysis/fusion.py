"""Indexing maps of whole computations: the composition of per-op maps through a
``func.func`` body, an ``mhlo.fusion`` region, or any single-block region with a
terminator.

``fusion_indexing(region, result_index)`` walks the block from the terminator operand
``result_index`` up and gives, for every block argument, the set of maps from that
result's index space to the argument (simplified, de-duplicated).
``computation_indexing(f)`` gives every result's maps from one walk (what
:func:`hlo_indexing.analyze` uses). Each value's map sets are computed once (the walk
visits every op once, in program order), so the cost is linear in the number of ops
times the arguments each value reaches, whatever the number of results; a value whose
op adds nothing (tuple plumbing, an elementwise op after maps already composed) shares
its operand's sets (:mod:`hlo_indexing.analysis.map_sets`), and a value whose operands'
entries and maps were met before (in a copy of the computation, or earlier in a chain)
gets the entry made then. A set larger than ``max_maps``, or holding a map whose
results exceed ``max_expr_nodes`` expression nodes (irregular permutations such as
alternating reshapes and transposes make exact maps grow exponentially), is replaced by
one over-approximating map that reads the whole value (``(d...)[s...] -> (s...)``), and
the result records that it happened.

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
no-op (see :mod:`hlo_indexing.analysis.runtime_folding`); the starts of a
``dynamic_slice`` and a ``dynamic_update_slice`` that read one value, clamped to one
range, are one variable (:mod:`hlo_indexing.analysis.runtime_identity`: a scan step
reads the row it writes); and the range variables composition multiplies are merged or
projected out where that is exact (:mod:`hlo_indexing.maps.range_variables`). Example::

    fused = fusion_indexing(func_op)            # maps of result 0
    fused.argument_maps[0]                       # frozenset of IndexingMap for %arg0
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TypeVar, cast

from hlo_indexing.analysis.fused_maps import (
    DEFAULT_MAX_EXPR_NODES,
    DEFAULT_MAX_MAPS,
    NO_ELEMENTS,
    ElementMaps,
    FusionIndexing,
    Path,
    element_type,
    path_text,
    static_shape,
    tensor_elements,
    untracked_element,
)
from hlo_indexing.analysis.loop_bodies import iteration_maps, outer_value_maps
from hlo_indexing.analysis.map_sets import NO_CAPS, Entry, Part, SetAlgebra
from hlo_indexing.analysis.runtime_folding import fold_runtime_variables
from hlo_indexing.analysis.runtime_identity import TAGGED_OPS, tag_runtime_variables, untag_runtime_variables
from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.call_like import (
    CALL_LIKE_OPS,
    CAPTURING_OPS,
    block_of,
    call_operands,
    callee_block,
    operand_values,
    remembered_captures,
)
from hlo_indexing.dialect_glue.locations import location_of
from hlo_indexing.direction import Direction
from hlo_indexing.errors import HloIndexingError, IndexOutOfRangeError, InvalidArgumentError
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.ops.dispatch import operand_indexing, result_indexing, tuple_element_shapes, tuple_elements_indexing
from hlo_indexing.ops.regions import MAX_NOTES, MapSets
from hlo_indexing.ops.result import InstructionIndexing
from hlo_indexing.ops.rule import is_token, value_shape

_T = TypeVar("_T")

#: The public names: the walks, and the result type and helpers of
#: :mod:`hlo_indexing.analysis.fused_maps`, which users import from here.
__all__ = [
    "DEFAULT_MAX_EXPR_NODES",
    "DEFAULT_MAX_MAPS",
    "FusionIndexing",
    "Path",
    "REGIONS",
    "computation_indexing",
    "fusion_indexing",
    "fusion_input_to_output_indexing",
    "path_text",
    "tensor_elements",
]


#: A value element: the value and its element path.
Node = tuple[ir.Value, Path]
_NO_MAPS: frozenset[IndexingMap] = frozenset()
#: What one element reads (writes): the value, its element, the maps (None: the same
#: index) and the names of values capped inside a callee.
Flow = tuple[ir.Value, Path, frozenset[IndexingMap] | None, frozenset[str]]


def _paths(value_type: ir.Type) -> list[Path]:
    """Every element path of a value of ``value_type``: ``()`` and, for a tuple, the
    paths of its elements (inner tuples included)."""
    if not isinstance(value_type, ir.TupleType):
        return [()]
    return [()] + [(k,) + path for k in range(value_type.num_types) for path in _paths(value_type.get_type(k))]


class _Composer(SetAlgebra):
    """One analysis' state: the caps, the memos, and the table of each block walked.

    A block's table gives, for every element of every value, its map sets to every
    block argument (output to input) or block result (input to output) it depends on,
    with the names of the values whose sets were capped on the way. It is computed in
    one walk over the block (dynamic programming over the use-def graph: each op's
    per-op maps are derived once and composed with its operands' (users') sets), so the
    cost is linear in ops times reached arguments (results), whatever the number of
    results (arguments) asked for. The set algebra and its memos are
    :class:`~hlo_indexing.analysis.map_sets.SetAlgebra`."""

    def __init__(
        self,
        max_maps: int,
        max_expr_nodes: int = DEFAULT_MAX_EXPR_NODES,
        per_op: Mapping[ir.Operation, Sequence[InstructionIndexing]] | None = None,
        per_op_direction: str = Direction.OUTPUT_TO_INPUT,
    ):
        self.per_op = {per_op_direction: per_op} if per_op else {}
        self.given = per_op  # as given (what a shared composer is reused for)
        super().__init__(max_maps, max_expr_nodes)
        self.tables: dict[tuple[ir.Block, str], dict[Node, Entry]] = {}
        self.blocks: dict[ir.Block, tuple[list, list[ir.Value], list[ir.Value]]] = {}
        self.plain_maps: dict[int, tuple[InstructionIndexing, tuple[frozenset, ...]]] = {}
        self.plumbing_names: dict[str, bool] = {}
        self.serials: dict[ir.Value, int] = {}

    def table(self, block: ir.Block, direction: str, needed: set[ir.Value] | None = None) -> dict[Node, Entry]:
        """The block's table in ``direction``; with ``needed``, only the ops producing
        (output to input) or using (input to output) those values are walked (not kept)."""
        key = (block, direction)
        found = self.tables.get(key)
        if found is None:
            operations = self.parts(block)[0]
            if direction == Direction.OUTPUT_TO_INPUT:
                found = self._output_to_input_table(block, operations, needed)
            else:
                found = self._input_to_output_table(block, operations, needed)
            if needed is None:
                self.tables[key] = found
        return found

    def _output_to_input_table(
        self, block: ir.Block, operations: list, needed: set[ir.Value] | None
    ) -> dict[Node, Entry]:
        arguments = list(block.arguments)
        table: dict[Node, Entry] = {}
        for i, argument in enumerate(arguments):
            for path in _paths(argument.type):
                table[(argument, path)] = self.seed(i, path)
        get = table.get
        for op in operations[:-1]:
            operation = op.operation
            results = operation.results
            if needed is not None and not any(result in needed for result in results):
                continue
            if len(results) == 1 and not self.plumbing(operation.name):
                result = results[0]
                if not isinstance(result.type, ir.TupleType):  # the common case, as reads() has it
                    op_maps, approximated = self.op_maps(op, 0)
                    parts: list[Part] = [
                        (get((operand, ())), maps, approximated) for operand, maps in zip(operation.operands, op_maps)
                    ]
                    table[(result, ())] = self.merge(result, (), parts, arguments)
                    continue
            for r, result in enumerate(results):
                for path in _paths(result.type):
                    parts = [
                        (table.get((operand, operand_path)), maps, caps)
                        for operand, operand_path, maps, caps in self.reads(op, r, path)
                    ]
                    table[(result, path)] = self.merge(result, path, parts, arguments)
        return table

    def _input_to_output_table(
        self, block: ir.Block, operations: list, needed: set[ir.Value] | None
    ) -> dict[Node, Entry]:
        results = list(operations[-1].operands)
        pending: dict[Node, list] = {}
        for r, value in enumerate(results):
            for path in _paths(value.type):
                pending.setdefault((value, path), []).append((self.seed(r, path), None, NO_CAPS))
        table: dict[Node, Entry] = {}
        for op in reversed(operations[:-1]):
            operands = list(operand_values(op))
            if needed is not None and not any(operand in needed for operand in operands):
                continue
            for result in op.results:
                for path in _paths(result.type):
                    table[(result, path)] = self.merge(result, path, pending.pop((result, path), []), results)
            for k, operand in enumerate(operands):
                for path in _paths(operand.type):
                    parts = [
                        (table.get((result, result_path)), maps, caps)
                        for result, result_path, maps, caps in self.writes(op, k, path)
                    ]
                    pending.setdefault((operand, path), []).extend(parts)
        for argument in block.arguments:
            for path in _paths(argument.type):
                table[(argument, path)] = self.merge(argument, path, pending.pop((argument, path), []), results)
        return table

    def root_maps(
        self, block: ir.Block, direction: str, index: int, element: Path, needed: set[ir.Value] | None = None
    ) -> tuple[list[ElementMaps], frozenset[str]]:
        """Per block argument (result), the maps of each of its elements from element
        ``element`` of result (argument) ``index``, and the capped values' names."""
        _, arguments, results = self.parts(block)
        if direction == Direction.OUTPUT_TO_INPUT:
            root, targets = results[index], arguments
        else:
            root, targets = arguments[index], results
        entry = self.table(block, direction, needed).get((root, element))
        sets, caps = (entry.sets, entry.caps) if entry is not None else ({}, NO_CAPS)
        out: list[ElementMaps] = [{} for _ in targets]
        if not sets:
            return out, caps
        if isinstance(element_type(root.type, element), ir.TupleType):
            # Only a callee's walk asks for a whole tuple (for a call whose element no
            # root may read): its index space is undefined.
            root_type = element_type(root.type, element)
            unknown = IndexingMap.undefined(f"fused indexing needs static tensor shapes, got {root_type}")
            return [{path: frozenset({unknown}) for (index, path) in sets if index == k} for k in range(len(targets))], caps
        domain = self.intern(frozenset({self.identity(static_shape(root, element), root.context)}))
        memo = self.sets_memo
        for (target, target_path), found in sets.items():  # one set per (target, path)
            out[target][target_path] = memo.get((domain, found)) or self.compose_sets(domain, found)
        return out, caps

    def parts(self, block: ir.Block) -> tuple[list, list[ir.Value], list[ir.Value]]:
        """The block's ops, arguments and results (terminator operands), listed once."""
        found = self.blocks.get(block)
        if found is None:
            operations = list(block.operations)
            found = self.blocks[block] = (operations, list(block.arguments), list(operations[-1].operands))
        return found

    def reads(self, op: OpLike, result_index: int, path: Path) -> Iterator[Flow]:
        """``(operand, element, maps, caps)`` read by element ``path`` of result
        ``result_index``; ``maps`` None means "the same index" (tuple plumbing), ``caps``
        names values capped inside a callee."""
        operation = op.operation
        kind = op_attrs.op_kind(operation)[1]
        if kind == "get_tuple_element":
            yield operation.operands[0], (op_attrs.int_attr(operation, "index"),) + path, None, NO_CAPS
        elif kind == "tuple" and path:
            yield operation.operands[path[0]], path[1:], None, NO_CAPS
        elif (callee := callee_block(op)) is not None:
            per_argument, caps = self.root_maps(callee, Direction.OUTPUT_TO_INPUT, result_index, path)
            for operand, elements in zip(call_operands(operation), per_argument, strict=True):
                for operand_path, maps in elements.items():
                    yield operand, operand_path, frozenset(maps), caps
        elif (
            len(path) == 1
            and (by_element := tuple_elements_indexing(operation, Direction.OUTPUT_TO_INPUT, path[0])) is not None
        ):
            element_notes = _approximated(operation, "result", result_index, by_element)
            for operand, operand_maps in zip(operand_values(operation), by_element.maps, strict=True):
                yield operand, (), self.intern(operand_maps), element_notes
        elif path or kind == "tuple" or (kind == "custom_call" and _is_tuple(operation.results[result_index])):
            # an element not followed, or a custom call's whole tuple (its per-op maps are per element)
            unknown = frozenset({untracked_element(operation, "result", result_index, path)})
            for operand in operation.operands:
                yield operand, (), unknown, NO_CAPS
        else:
            op_maps, approximated = self.op_maps(op, result_index)
            for operand, operand_maps in zip(operand_values(operation), op_maps):
                yield operand, (), operand_maps, approximated

    def op_maps(self, op: OpLike, result_index: int) -> tuple[tuple[frozenset[IndexingMap], ...], frozenset[str]]:
        """Output -> input maps of one op, with runtime variables computed in the block
        folded in, and the op's result named as over-approximated when its rule says
        its maps over-approximate (:func:`_approximated`)."""
        known = self.per_op.get(Direction.OUTPUT_TO_INPUT)
        found = known.get(op.operation) if known is not None else None
        if found is not None:
            indexing = found[result_index]
        else:
            indexing = result_indexing(op, result_index, regions=REGIONS)
        approximated = _approximated(op.operation, "result", result_index, indexing)
        if not any(indexing.runtime):  # nothing to fold: the same for every op sharing the result
            cached = self.plain_maps.get(id(indexing))
            if cached is None or cached[0] is not indexing:
                cached = self.plain_maps[id(indexing)] = (indexing, tuple(self.intern(frozenset(maps)) for maps in indexing.maps))
            return cached[1], approximated
        operation = op.operation
        tagged = op_attrs.op_kind(operation)[1] in TAGGED_OPS
        folded = tuple(
            self.intern(
                frozenset(
                    tag_runtime_variables(f, lambda k: self.value_serial(operation.operands[k])) if tagged else f
                    for m in maps
                    for f in fold_runtime_variables(m, sources, op)
                )
            )
            for maps, sources in zip(indexing.maps, indexing.runtime, strict=True)
        )
        return folded, approximated

    def value_serial(self, value: ir.Value) -> int:
        """A number of ``value``, the same at each ask (the tag of the runtime variables
        that read it: :mod:`~hlo_indexing.analysis.runtime_identity`)."""
        return self.serials.setdefault(value, len(self.serials))

    def plumbing(self, name: str) -> bool:
        """Whether ops called ``name`` need :meth:`reads`' general path: tuples,
        ``get_tuple_element``, call-like ops, and ops whose regions capture values (their
        per-op maps index more than their operands)."""
        found = self.plumbing_names.get(name)
        if found is None:
            found = self.plumbing_names[name] = (
                name.partition(".")[2] in ("tuple", "get_tuple_element") or name in CALL_LIKE_OPS or name in CAPTURING_OPS
            )
        return found

    def writes(self, op: OpLike, operand_index: int, path: Path) -> Iterator[Flow]:
        """``(result, element, maps, caps)`` that element ``path`` of operand
        ``operand_index`` contributes to; ``maps`` None means "the same index"."""
        operation = op.operation
        kind = op_attrs.op_kind(operation)[1]
        if kind == "get_tuple_element" and path:
            if path[0] == op_attrs.int_attr(operation, "index"):
                yield operation.results[0], path[1:], None, NO_CAPS
        elif kind == "tuple":
            yield operation.results[0], (operand_index,) + path, None, NO_CAPS
        elif (callee := callee_block(op)) is not None:
            per_result, caps = self.root_maps(callee, Direction.INPUT_TO_OUTPUT, operand_index, path)
            for result, elements in zip(operation.results, per_result, strict=True):
                for result_path, maps in elements.items():
                    yield result, result_path, frozenset(maps), caps
        elif (
            not path
            and (by_element := tuple_elements_indexing(operation, Direction.INPUT_TO_OUTPUT, operand_index)) is not None
        ):
            operand_notes = _approximated(operation, "operand", operand_index, by_element)
            for k, element_maps in enumerate(by_element.maps):
                yield operation.results[0], (k,), self.intern(element_maps), operand_notes
        elif path or kind == "get_tuple_element":
            unknown = frozenset({untracked_element(operation, "operand", operand_index, path)})
            for result in operation.results:
                yield result, (), unknown, NO_CAPS
        else:
            known = self.per_op.get(Direction.INPUT_TO_OUTPUT)
            found = known.get(operation) if known is not None else None
            if found is not None:
                indexing = found[operand_index]
            else:
                indexing = operand_indexing(op, operand_index, regions=REGIONS)
            approximated = _approximated(operation, "operand", operand_index, indexing)
            for result, result_maps in zip(operation.results, indexing.maps):
                yield result, (), self.intern(result_maps), approximated


def _approximated(operation: ir.Operation, what: str, index: int, indexing: InstructionIndexing) -> frozenset[str]:
    """``{'stablehlo.while result 0 at f.mlir:4:8: why'}`` when the op's rule says its
    maps over-approximate (its :attr:`~hlo_indexing.ops.result.InstructionIndexing.notes`:
    a loop's mixing carry, a data-dependent trip count, a host callback, the notes of
    the ops in a loop's or branch's body, ...), else no name."""
    if not indexing.notes:
        return NO_CAPS
    return frozenset({f"{operation.name} {what} {index}{_at(operation)}: {'; '.join(indexing.notes)}"})


def _at(operation: ir.Operation) -> str:
    """`` at f.mlir:4:8``, the op's location ('' when unknown)."""
    where = location_of(operation.location)
    return f" at {where}" if where is not None else ""


def _body_notes(block: ir.Block) -> tuple[str, ...]:
    """The notes of the per-op maps of the ops of ``block`` and of the computations
    they call (each block once), each after its op's name and location (a loop or
    branch in the block gives its own body's notes), bounded as
    :meth:`~hlo_indexing.ops.regions.RegionIndexing.notes` says. Ops whose maps
    cannot be derived are left out: the walks through them say so themselves."""
    notes: list[str] = []
    pending, seen = [block], {block}
    while pending:
        for op in pending.pop().operations:
            operation = op.operation
            callee = callee_block(op)
            if callee is not None:
                if callee not in seen:
                    seen.add(callee)
                    pending.append(callee)
                continue
            for indexing in _results_indexing(operation):
                said = f"{operation.name}{_at(operation)}: {'; '.join(indexing.notes)}" if indexing.notes else ""
                if said and said not in notes:
                    notes.append(said)
    if len(notes) > MAX_NOTES:
        notes[MAX_NOTES - 1 :] = [f"and {len(notes) - MAX_NOTES + 1} more notes"]
    return tuple(notes)


def _results_indexing(operation: ir.Operation) -> Iterator[InstructionIndexing]:
    """The output -> input maps of each result of ``operation`` (of each element of a
    custom call's tuple result), those that can be derived."""
    elements = tuple_element_shapes(operation)
    count = len(elements) if elements is not None else len(operation.results)
    for index in range(count):
        try:
            by_element = tuple_elements_indexing(operation, Direction.OUTPUT_TO_INPUT, index) if elements else None
            yield by_element if by_element is not None else result_indexing(operation, index, regions=REGIONS)
        except HloIndexingError:
            continue


def _is_tuple(value: ir.Value) -> bool:
    return isinstance(value.type, ir.TupleType)


def _producers(block: ir.Block, root: ir.Value) -> set[ir.Value]:
    """The values ``root`` is computed from (the ops to walk for one result)."""
    needed = {root}
    for op in reversed(list(block.operations)[:-1]):
        if any(result in needed for result in op.results):
            needed.update(operand_values(op))
    return needed


def _users(block: ir.Block, argument: ir.Value) -> set[ir.Value]:
    """The values computed from ``argument`` (the ops to walk for one argument)."""
    needed = {argument}
    for op in list(block.operations)[:-1]:
        if any(operand in needed for operand in operand_values(op)):
            needed.update(op.results)
    return needed


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
    results = block.operations[-1].operands
    _check_index("fusion_indexing", "result", result_index, len(results))
    root = results[result_index]
    if isinstance(element_type(root.type, element), ir.TupleType):
        return _whole_tuple(f"result #{result_index}", root, element, len(block.arguments), Direction.OUTPUT_TO_INPUT)
    if value_shape(element_type(root.type, element)) is None:
        return _no_index_space(f"result #{result_index}", root, element, len(block.arguments), Direction.OUTPUT_TO_INPUT)
    composer = _Composer(max_maps, max_expr_nodes)
    with REGIONS.session():
        found = composer.root_maps(block, Direction.OUTPUT_TO_INPUT, result_index, element, _producers(block, root))
    return _fusion_result(block.arguments, *found, Direction.OUTPUT_TO_INPUT)


def fusion_input_to_output_indexing(
    region_or_func: ir.Region | OpLike, argument_index: int = 0, *, element: Path = (), max_maps: int = DEFAULT_MAX_MAPS
) -> FusionIndexing:
    """Input -> output maps from block argument ``argument_index`` (its element
    ``element`` when it is a tuple): one frozenset per terminator operand (result).
    Raises as :func:`fusion_indexing` does."""
    block = _computation_block(region_or_func, "fusion_input_to_output_indexing")
    _check_index("fusion_input_to_output_indexing", "argument", argument_index, len(block.arguments))
    argument = block.arguments[argument_index]
    results = block.operations[-1].operands
    if isinstance(element_type(argument.type, element), ir.TupleType):
        return _whole_tuple(f"argument #{argument_index}", argument, element, len(results), Direction.INPUT_TO_OUTPUT)
    if value_shape(element_type(argument.type, element)) is None:
        return _no_index_space(f"argument #{argument_index}", argument, element, len(results), Direction.INPUT_TO_OUTPUT)
    composer = _Composer(max_maps)
    with REGIONS.session():
        found = composer.root_maps(block, Direction.INPUT_TO_OUTPUT, argument_index, element, _users(block, argument))
    return _fusion_result(results, *found, Direction.INPUT_TO_OUTPUT)


def computation_indexing(
    region_or_func: ir.Region | OpLike,
    direction: str = Direction.OUTPUT_TO_INPUT,
    *,
    max_maps: int = DEFAULT_MAX_MAPS,
    per_op: Mapping[ir.Operation, Sequence[InstructionIndexing]] | None = None,
    shared: dict | None = None,
) -> tuple[FusionIndexing, ...]:
    """The fused maps of every result (``Direction.OUTPUT_TO_INPUT``: as ``fusion_indexing(f, r)``
    for each ``r``) or every argument (``Direction.INPUT_TO_OUTPUT``), from one walk of the block.
    ``per_op`` may give ops' per-op maps in ``direction`` already computed (simplified,
    as :mod:`hlo_indexing.analysis.per_op` gives them: one per result or operand); the
    other ops' maps are derived. ``shared``, a dict the caller passes (empty at first) to
    each call of one analysis, lets the calls share their memos (computations that are
    copies of each other then cost a walk, not a composition per map)."""
    block = block_of(region_or_func)
    key = (max_maps, id(per_op), direction)
    composer = shared.get(key) if shared is not None else None
    if composer is None or composer.given is not per_op:
        composer = _Composer(max_maps, per_op=per_op, per_op_direction=direction)
        if shared is not None:
            shared[key] = composer
    _, arguments, results = composer.parts(block)
    if direction == Direction.OUTPUT_TO_INPUT:
        roots, others, what = results, arguments, "result"
    else:
        roots, others, what = arguments, results, "argument"

    tuples = [isinstance(value.type, ir.TupleType) for value in others]
    out = []
    with REGIONS.session():
        for index, root in enumerate(roots):
            if isinstance(root.type, ir.TupleType):
                out.append(_whole_tuple(f"{what} #{index}", root, (), len(others), direction))
            elif value_shape(root.type) is None:
                out.append(_no_index_space(f"{what} #{index}", root, (), len(others), direction))
            else:
                per_value, capped = composer.root_maps(block, direction, index, ())
                out.append(_fusion_result(others, per_value, capped, direction, tuples))
    composer.tables.pop((block, direction), None)  # memos are shared, not the block's walk
    composer.blocks.pop(block, None)
    return tuple(out)


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
    values: Sequence[ir.Value],
    per_value: list[ElementMaps],
    capped: frozenset[str],
    direction: str,
    tuples: Sequence[bool] | None = None,
) -> FusionIndexing:
    """Tensors keep their set; a tuple-typed value's sets go to ``elements``.
    ``tuples[i]`` tells whether ``values[i]`` is a tuple (found here when not given)."""
    if tuples is None:
        tuples = [isinstance(value.type, ir.TupleType) for value in values]
    maps: list[frozenset[IndexingMap]] = [_NO_MAPS] * len(values)
    elements: list[Mapping[Path, frozenset[IndexingMap]]] = [NO_ELEMENTS] * len(values)
    for index, found in enumerate(per_value):
        if not found:
            continue
        whole = _untagged(found.get((), ()))
        if tuples[index]:
            what = "argument" if direction == Direction.OUTPUT_TO_INPUT else "result"
            marker = IndexingMap.undefined(f"{what} #{index} is a {values[index].type}: see its per-element maps")
            maps[index] = whole | {marker}
            elements[index] = {path: _untagged(s) for path, s in found.items()}
        else:
            maps[index] = whole
    return FusionIndexing(tuple(maps), tuple(sorted(capped)), direction, tuple(elements))


def _untagged(maps: Iterable[IndexingMap]) -> frozenset[IndexingMap]:
    """The maps handed out: runtime variables without the walk's value tags."""
    return frozenset(untag_runtime_variables(m) for m in maps)


def _whole_tuple(what: str, value: ir.Value, element: Path, count: int, direction: str) -> FusionIndexing:
    """Unknown maps for every value: a whole tuple has no index space to map from."""
    at = f" element {path_text(element)}" if element else ""
    unknown = IndexingMap.undefined(
        f"{what}{at} is a {element_type(value.type, element)}: ask for one of its tensor elements (element=(k, ...))"
    )
    return FusionIndexing((frozenset({unknown}),) * count, (), direction, (NO_ELEMENTS,) * count)


def _no_index_space(what: str, value: ir.Value, element: Path, count: int, direction: str) -> FusionIndexing:
    """No map for a token (it holds no element: nothing to read or feed); unknown maps
    for every value from a scalar of another dialect or a dynamic shape, which have no
    static index space to map from."""
    if is_token(element_type(value.type, element)):
        return FusionIndexing((frozenset(),) * count, (), direction, (NO_ELEMENTS,) * count)
    at = f" element {path_text(element)}" if element else ""
    unknown = IndexingMap.undefined(f"{what}{at} is a {element_type(value.type, element)}, not a statically shaped tensor")
    return FusionIndexing((frozenset({unknown}),) * count, (), direction, (NO_ELEMENTS,) * count)


class _FusedRegions:
    """The fused analysis as the region hook of per-op rules (:mod:`hlo_indexing.ops.regions`).

    Inside :meth:`session` (which every public walk of this package opens; nested
    sessions join the outer one), each region's maps are computed once: every result of
    a block from one walk (:func:`computation_indexing`, the walks sharing their memos),
    and the maps a rule keeps with :meth:`memo`. Outside a session nothing is kept. The
    module must not change during a session (its blocks are the keys)."""

    def __init__(self) -> None:
        self.depth = 0
        self.maps: dict[Hashable, object] = {}  # each key's value of the type its caller computes
        self.shared: dict = {}

    @contextmanager
    def session(self) -> Iterator[None]:
        """Keep region maps (and the values regions capture) until the outermost session ends."""
        self.depth += 1
        try:
            with remembered_captures():
                yield
        finally:
            self.depth -= 1
            if not self.depth:
                self.maps.clear()
                self.shared.clear()

    def notes(self, region: ir.Region) -> tuple[str, ...]:
        block = block_of(region)
        return self.memo((block, "notes"), lambda: _body_notes(block))

    def memo(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """``compute()``, kept under ``key`` for the rest of the session."""
        if not self.depth:
            return compute()
        found = self.maps.get(key, _MISSING)
        if found is _MISSING:
            computed = self.maps[key] = compute()
            return computed
        return cast(_T, found)

    def _block_maps(self, region: ir.Region, direction: str) -> tuple[FusionIndexing, ...]:
        block = block_of(region)
        return self.memo((block, direction), lambda: computation_indexing(region, direction, shared=self.shared))

    def output_to_input(self, region: ir.Region, result_index: int) -> MapSets:
        if not self.depth:
            return fusion_indexing(region, result_index).maps
        return self._block_maps(region, Direction.OUTPUT_TO_INPUT)[result_index].maps

    def input_to_output(self, region: ir.Region, argument_index: int) -> MapSets:
        if not self.depth:
            return fusion_input_to_output_indexing(region, argument_index).maps
        return self._block_maps(region, Direction.INPUT_TO_OUTPUT)[argument_index].maps

    def iteration_output_to_input(
        self,
        region: ir.Region,
        result_index: int,
        inductions: tuple[tuple[int, int, int], ...],
        count: int,
        stop: frozenset[int] = frozenset(),
    ) -> MapSets:
        # a walk that stops raises: only complete walks are kept, whatever their stop
        return self.memo(
            (block_of(region), "iteration", result_index, inductions, count),
            lambda: iteration_maps(self, region, result_index, inductions, count, stop),
        )

    def values_output_to_input(self, region: ir.Region, result_index: int, values: list) -> MapSets:
        return self.memo(
            (block_of(region), "values", result_index, tuple(values)),
            lambda: outer_value_maps(self, region, result_index, values),
        )


_MISSING = object()

#: The region analysis this module hands to per-op rules of ops with a body.
REGIONS = _FusedRegions()
