"""The per-op dispatch: finds an op's rule (:mod:`hlo_indexing.ops.rules`) and gives its
maps, in both directions (:func:`result_indexing`, :func:`operand_indexing`); the public
per-op API, which passes the fused analysis of bodies, is
:mod:`hlo_indexing.analysis.per_op` (``hlo_indexing.output_to_input_indexing``).

Example::

    module = parse_module('''
      func.func @f(%a: tensor<20xf32>) -> tensor<10x20x30xf32> {
        %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<20xf32>) -> tensor<10x20x30xf32>
        return %0 : tensor<10x20x30xf32>
      }''')
    op = module.body.operations[0].regions[0].blocks[0].operations[0]
    print(result_indexing(op))
    # operand id = 0 (d0, d1, d2) -> (d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]
    print(operand_indexing(op))
    # operand id = 0 (d0)[s0, s1] -> (s0, d0, s1), domain: d0 in [0, 19], s0 in [0, 9], s1 in [0, 29]

Results are cached per (op name, operand and result types, attributes, direction,
index, simplify, the printed body of ops whose maps read it (scan) and the region
analysis given), in the memo of the op's context
(:func:`~hlo_indexing.dialect_glue.context.context_memo`): big modules repeat the same
op instance shapes many times. Call-like ops and loops are not cached: their maps
depend on computations and values elsewhere in the module; asked for with the region
analysis inside one of its sessions (the module does not change meanwhile), they are
kept for the session under the op itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import CALL_LIKE_OPS, operand_values
from hlo_indexing.dialect_glue.context import clear_context_memos, context_memo
from hlo_indexing.dialect_glue.locations import located
from hlo_indexing.direction import Direction
from hlo_indexing.errors import HloIndexingError, InvalidArgumentError, InvalidInputError
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.ops.rule import Entry, OpInfo, UnknownIndexing, entry_maps, is_token, value_shape
from hlo_indexing.ops.regions import RegionIndexing
from hlo_indexing.ops.result import InstructionIndexing, RuntimeSource
from hlo_indexing.ops.rules import BODY_KINDS, CONTEXT_KINDS, ELEMENTWISE_KINDS, HLO_DIALECTS, rule_for

#: Maximum number of cached results per context (the oldest ones are dropped first).
CACHE_SIZE = 4096
#: The name of the cache's table in :func:`~hlo_indexing.dialect_glue.context.context_memo`.
CACHE_TABLE = "per-op"


def result_indexing(
    op: ir.Operation | ir.OpView, result_index: int = 0, *, simplify: bool = True, regions: RegionIndexing | None = None
) -> InstructionIndexing:
    """For result ``result_index`` of ``op``, one set of maps per operand: from the
    result's index space to the operand elements each result element reads. The
    operands of ``case``/``if`` are followed by the values their branches capture
    (:func:`~hlo_indexing.dialect_glue.call_like.operand_values`). ``regions``
    gives the rules of ops with a body their body's fused maps
    (:mod:`hlo_indexing.ops.regions`); the public API
    (:mod:`hlo_indexing.analysis.per_op`) always passes it."""
    return _indexing(op, Direction.OUTPUT_TO_INPUT, result_index, simplify, regions)


def operand_indexing(
    op: ir.Operation | ir.OpView, operand_index: int = 0, *, simplify: bool = True, regions: RegionIndexing | None = None
) -> InstructionIndexing:
    """For operand ``operand_index`` of ``op``, one set of maps per result: from the
    operand's index space to the result elements each operand element contributes to.
    ``regions`` as for :func:`result_indexing`."""
    return _indexing(op, Direction.INPUT_TO_OUTPUT, operand_index, simplify, regions)


def elementwise_shape(op: ir.Operation | ir.OpView) -> tuple[int, ...] | None:
    """The shape of an elementwise op (a StableHLO/MHLO/CHLO kind of
    ``rules.ELEMENTWISE_KINDS``) whose one result and every operand have that static,
    non-empty shape, else None: each operand of such an op is read through the identity
    map over the shape (what :func:`result_indexing` gives, known without
    building its cache key). Example: ``(8, 16)`` for ``stablehlo.add`` of two
    ``tensor<8x16xf32>``; None for a ``select`` with a scalar predicate."""
    operation = op if isinstance(op, ir.Operation) else op.operation  # a view's .name may be an attribute
    results = operation.results
    if len(results) != 1:
        return None
    return elementwise_shape_of(operation.name, results[0].type, operation.operands)


def elementwise_shape_of(name: str, result_type: ir.Type, operands: Sequence[ir.Value]) -> tuple[int, ...] | None:
    """:func:`elementwise_shape` of a one-result op from what its caller has read of it:
    the op's name, its result's type and its operands."""
    dialect, _, kind = name.partition(".")
    if kind not in ELEMENTWISE_KINDS or dialect not in HLO_DIALECTS:
        return None
    if not isinstance(result_type, ir.RankedTensorType) or not result_type.has_static_shape:
        return None
    shape = tuple(result_type.shape)
    if 0 in shape:
        return None
    for operand in operands:
        operand_type = operand.type
        if operand_type == result_type:  # types are uniqued: the common case without reading the shape
            continue
        if not isinstance(operand_type, ir.RankedTensorType) or tuple(operand_type.shape) != shape:
            return None
    return shape


def all_indexings(
    op: ir.Operation | ir.OpView, direction: str, *, simplify: bool = True, regions: RegionIndexing | None = None
) -> list[InstructionIndexing]:
    """The indexing of every result (``direction`` ``Direction.OUTPUT_TO_INPUT``) or of every
    operand (``Direction.INPUT_TO_OUTPUT``) of ``op``, in order: what
    :func:`result_indexing` / :func:`operand_indexing` give for each
    index, with the op read once."""
    operation = op if isinstance(op, ir.Operation) else op.operation
    try:
        count = len(operation.results) if direction == Direction.OUTPUT_TO_INPUT else len(operand_values(operation))
        key = _key(operation, direction, simplify, regions)
        return [_lookup(operation, key, direction, index, simplify, regions) for index in range(count)]
    except HloIndexingError as exc:
        raise located(exc, operation)
    except (ArithmeticError, IndexError, KeyError, TypeError, ValueError) as exc:
        raise _malformed(operation, exc, []) from exc


def clear_cache() -> None:
    """Forget every cached per-op result."""
    clear_context_memos(CACHE_TABLE)


def _indexing(op: ir.Operation | ir.OpView, direction: str, index: int, simplify: bool, regions: RegionIndexing | None) -> InstructionIndexing:
    """The indexing of result (operand) ``index``, through the cache; every error is an
    :class:`HloIndexingError` located at the op (:func:`_malformed` for the errors of a
    rule that trips over a malformed op)."""
    operation = op if isinstance(op, ir.Operation) else op.operation
    try:
        count = len(operation.results) if direction == Direction.OUTPUT_TO_INPUT else len(operand_values(operation))
        if not 0 <= index < count:
            what = "result" if direction == Direction.OUTPUT_TO_INPUT else "operand"
            raise HloIndexingError(f"{operation.name} has no {what} #{index} (it has {count})")
        return _lookup(operation, _key(operation, direction, simplify, regions), direction, index, simplify, regions)
    except HloIndexingError as exc:
        raise located(exc, operation)
    except (ArithmeticError, IndexError, KeyError, TypeError, ValueError) as exc:
        raise _malformed(operation, exc, []) from exc


def _malformed(operation: ir.Operation, exc: Exception, reads: list[str]) -> HloIndexingError:
    """The error for an exception a rule raised on a malformed op. The attribute readers
    (:mod:`~hlo_indexing.dialect_glue.op_attrs`) check what they read and raise
    :class:`InvalidAttributeError` naming the op and the attribute themselves; an
    ``IndexError``/``ValueError``/... that still escapes a rule is an
    :class:`InvalidAttributeError` naming the attributes it had read (``reads``, the last
    one first), or an :class:`InvalidInputError` naming the op when it had read none."""
    problem = f"({type(exc).__name__}: {exc})"
    if not reads:
        return located(InvalidInputError(f"{operation.name}: malformed op {problem}"), operation)
    names = list(dict.fromkeys(reads))
    others = f" (read with {', '.join(repr(n) for n in names[:-1])})" if len(names) > 1 else ""
    return op_attrs.invalid(operation, names[-1], f"is malformed{others} {problem}")


def _key(operation: ir.Operation, direction: str, simplify: bool, regions: RegionIndexing | None) -> tuple[object, ...] | None:
    """The cache key of ``operation``'s maps in ``direction`` (the index is added by
    :func:`_lookup`), or None when they are not cached (call-like ops,
    ``CONTEXT_KINDS``). Built on every lookup (hits are the common case): each type
    and attribute read through the bindings makes a Python object, so each is read once."""
    name = operation.name
    kind = name.partition(".")[2]
    if name in CALL_LIKE_OPS or kind in CONTEXT_KINDS:
        return None
    return (
        name,
        tuple([v.type for v in operation.operands]),
        tuple(operation.results.types),
        op_attrs.attribute_key(operation),
        direction,
        simplify,
        _body_key(operation) if kind in BODY_KINDS else None,
        id(regions) if regions is not None else None,
    )


def _lookup(
    operation: ir.Operation,
    key: tuple[object, ...] | None,
    direction: str,
    index: int,
    simplify: bool,
    regions: RegionIndexing | None,
) -> InstructionIndexing:
    """The maps of result (operand) ``index`` under ``key`` (computed and cached on a
    miss), with their runtime sources named. An op that is not cached (``key`` None:
    loops, branches, calls) is computed every time, except in a session of the region
    analysis (:meth:`~hlo_indexing.ops.regions.RegionIndexing.memo`: the module does not
    change meanwhile), which keeps its maps: the walks of the bodies and callees holding
    it (the fused walks of bodies, the nested loops' notes, the per-op maps) ask for it
    again, and its maps would be built again, every map simplified again."""
    if key is None:
        if regions is None:
            return _with_sources(_compute(operation, direction, index, simplify, regions), operation)
        return regions.memo(
            ("per-op maps", operation, direction, index, simplify),
            lambda: _with_sources(_compute(operation, direction, index, simplify, regions), operation),
        )
    key = (*key, index)
    cache = context_memo(operation.context, CACHE_TABLE)
    cached = cache.get(key)
    if cached is None:
        cached = _compute(operation, direction, index, simplify, regions)
        if len(cache) >= CACHE_SIZE:
            del cache[next(iter(cache))]  # the oldest entry
        cache[key] = cached
    return _with_sources(cached, operation)


def _body_key(operation: ir.Operation) -> str | None:
    """The printed body of an op whose maps depend on it (``BODY_KINDS``), else None."""
    if not operation.regions:
        return None
    return "\n".join(str(block) for region in operation.regions for block in region.blocks)


def _compute(
    operation: ir.Operation, direction: str, index: int, simplify: bool, regions: RegionIndexing | None
) -> InstructionIndexing:
    """The maps of result (operand) ``index`` by the op's rule (a cache miss), the
    attributes the rule reads tracked so that an error it trips over names them
    (:func:`_malformed`; tracked here only, not on the cache hits)."""
    with op_attrs.tracking_reads() as reads:
        try:
            return _apply_rule(operation, direction, index, simplify, regions)
        except HloIndexingError:
            raise
        except (ArithmeticError, IndexError, KeyError, TypeError, ValueError) as exc:
            raise _malformed(operation, exc, reads) from exc


def tuple_element_shapes(op: ir.Operation | ir.OpView) -> tuple[tuple[int, ...] | None, ...] | None:
    """The shapes of the elements of a custom call's one tuple result (XLA's ``TopK``,
    LAPACK, cuBLAS and cuDNN calls; None for an element not statically shaped); None
    for any other op."""
    operation = op if isinstance(op, ir.Operation) else op.operation
    if op_attrs.op_kind(operation)[1] != "custom_call" or len(operation.results) != 1:
        return None
    result_type = operation.results[0].type
    if not isinstance(result_type, ir.TupleType):
        return None
    return tuple(value_shape(result_type.get_type(k)) for k in range(result_type.num_types))


def followed_tuple_elements(op: ir.Operation | ir.OpView) -> bool:
    """Whether :func:`tuple_elements_indexing` follows ``op``'s elements: a custom call whose
    one tuple result holds statically shaped tensors and tokens (an ordered ``io_callback``'s)."""
    operation = op if isinstance(op, ir.Operation) else op.operation
    elements = tuple_element_shapes(operation)
    if elements is None:
        return False
    result_type = operation.results[0].type
    return all(shape is not None or is_token(result_type.get_type(k)) for k, shape in enumerate(elements))


def tuple_elements_indexing(
    op: ir.Operation | ir.OpView, direction: Direction, index: int, *, simplify: bool = True
) -> InstructionIndexing | None:
    """The maps of a custom call whose one result is a tuple of tensors
    (:func:`tuple_element_shapes`), its rule applied as if each element were a result:
    output to input, element ``index`` -> one map set per operand; input to output,
    operand ``index`` -> one map set per element. None for any other op, or when an
    element is neither statically shaped nor a token; a located :class:`InvalidArgumentError` for an
    ``index`` past the elements (operands). Not cached: a fused walk asks once per element."""
    operation = op if isinstance(op, ir.Operation) else op.operation
    elements = tuple_element_shapes(operation)
    if elements is None or not followed_tuple_elements(operation):
        return None
    width = len(elements) if direction == Direction.OUTPUT_TO_INPUT else len(operand_values(operation))
    if not 0 <= index < width:
        what = "tuple element" if direction == Direction.OUTPUT_TO_INPUT else "operand"
        raise located(InvalidArgumentError(f"{operation.name} has no {what} {index} (it has {width})"), operation)
    try:
        return _apply_rule(operation, direction, index, simplify, None, elements)
    except HloIndexingError as exc:
        raise located(exc, operation)
    except (ArithmeticError, IndexError, KeyError, TypeError, ValueError) as exc:
        raise _malformed(operation, exc, []) from exc


def _apply_rule(
    operation: ir.Operation,
    direction: str,
    index: int,
    simplify: bool,
    regions: RegionIndexing | None,
    result_shapes: tuple | None = None,
) -> InstructionIndexing:
    """The rule's maps of result (operand) ``index``; ``result_shapes`` replaces the
    results' shapes (the elements of a tuple result)."""
    dialect, kind = op_attrs.op_kind(operation)
    info = OpInfo(
        operation,
        kind,
        tuple(value_shape(v.type) for v in operand_values(operation)),
        result_shapes if result_shapes is not None else tuple(value_shape(v.type) for v in operation.results),
        operation.context,
        regions,
    )
    rule = rule_for(dialect, kind)
    width = info.num_operands if direction == Direction.OUTPUT_TO_INPUT else info.num_results
    replicas: tuple = ()
    try:
        with operation.context:
            if direction == Direction.OUTPUT_TO_INPUT:
                entries = rule.output_to_input(info, index)
                if rule.replicas is not None:  # the device of every operand the result reads
                    replica = _simplified(rule.replicas(info, index), simplify)
                    replicas = tuple(replica if entry_maps(entry) else None for entry in entries)
            else:
                entries = rule.input_to_output(info, index)
    except UnknownIndexing as exc:
        undefined = IndexingMap.undefined(f"{operation.name}: {exc}")
        entries = [[undefined]] * width
    maps, runtime, notes = [], [], []
    for entry in entries:
        if not isinstance(entry, Entry):
            entry = Entry(tuple(entry))
        maps.append(frozenset(_simplified(m, simplify) for m in entry.maps))
        runtime.append(tuple(RuntimeSource(s.operand, _simplified(s.index_map, simplify)) for s in entry.runtime))
        if entry.note and entry.note not in notes:
            notes.append(entry.note)
    return InstructionIndexing(tuple(maps), tuple(runtime), replicas, direction, tuple(notes))


def _simplified(m: IndexingMap, simplify: bool) -> IndexingMap:
    if not simplify or m.is_undefined or m.is_known_empty():
        return m
    return m.simplify()


def _with_sources(indexing: InstructionIndexing, operation: ir.Operation) -> InstructionIndexing:
    """Fill in the producer names of runtime variables (not part of the cache key)."""
    if not any(indexing.runtime):
        return indexing
    runtime = tuple(
        tuple(RuntimeSource(s.operand, s.index_map, describe_source(operation.operands[s.operand])) for s in sources)
        for sources in indexing.runtime
    )
    return InstructionIndexing(indexing.maps, runtime, indexing.replica_maps, indexing.direction, indexing.notes)


def describe_source(value: ir.Value) -> str:
    """XLA's name for the producer of a runtime value: ``parameter(N)`` for a block
    argument, ``constant(V)`` for a scalar constant, ``constant`` for another constant,
    else the producing op's name."""
    if isinstance(value, ir.BlockArgument):
        return f"parameter({value.arg_number})"
    producer = value.owner
    assert isinstance(producer, ir.OpView)  # a value that is not a block argument is an op's result
    name = producer.name
    if name.endswith(".constant"):
        attribute = producer.attributes["value"] if "value" in producer.attributes else None
        if attribute is not None and isinstance(attribute, ir.DenseElementsAttr) and not value.type.shape:
            return f"constant({_scalar_text(attribute)})"
        return "constant"
    return name


def _scalar_text(attribute: ir.Attribute) -> str:
    text = str(attribute)  # dense<3> : tensor<i32>
    return text[text.index("<") + 1 : text.index(">")]
