"""Computations and call-like ops: the one place that knows which ops run a body.

A computation is a ``func.func`` with a body or an ``mhlo.fusion`` region
(:func:`computations`); a call-like op runs a nested computation (:data:`CALL_LIKE_OPS`,
:func:`callee_block`): the callee of ``func.call``, the decomposition of
``stablehlo.composite``, the region of a nested ``mhlo.fusion``, and the computation an
asynchronous pair runs (:data:`ASYNC_DONE_OPS`), whose arguments are the operands of its
start (:func:`call_operands`).

Example::

    block = block_of(func_op)          # its only block
    callee_block(call_op)              # the body of the called function, or None
    callee_region(call_op)             # its region (what per-op rules hand the region hook)
    [label for label, _ in computations(module)]   # ['@main', 'mhlo.fusion', ...]
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.locations import located, location_name, source_order_key
from hlo_indexing.errors import InvalidInputError

#: Ops that end an asynchronous computation: their results are those of the computation
#: run on the operands of the ``async_start`` whose bundle they wait for (through any
#: ``async_update``). XLA's HLO translator writes ``async-start(..., calls=f)`` and
#: ``copy-start`` as ``mhlo.async_start``/``mhlo.async_done`` (the computation named by
#: ``called_computation``) and the asynchronous collectives (``all-reduce-start``,
#: ``all-gather-start``, ``collective-permute-start``, ...) as ``stablehlo.async_start``
#: with the collective in its region, and ``stablehlo.async_done``.
ASYNC_DONE_OPS = frozenset({"mhlo.async_done", "stablehlo.async_done"})

#: Ops that run a nested computation, and the attribute naming it (None: their own
#: region, or for ``stablehlo.async_done`` its start's).
CALL_LIKE_OPS: dict[str, str | None] = {
    "mhlo.fusion": None,
    "func.call": "callee",
    "stablehlo.composite": "decomposition",
    "mhlo.async_done": "called_computation",
    "stablehlo.async_done": None,
}


def block_of(region_or_func: ir.Region | OpLike) -> ir.Block:
    """The only block of an op's single region, or of a region;
    :class:`InvalidInputError` (a ``ValueError``) otherwise."""
    operation = getattr(region_or_func, "operation", None)
    if operation is not None:
        if len(operation.regions) != 1:
            raise located(InvalidInputError(f"{operation.name} does not have exactly one region"), operation)
        region = operation.regions[0]
    else:
        region = region_or_func
    blocks = list(region.blocks)
    if len(blocks) != 1:
        error = InvalidInputError(f"expected a single-block region, found {len(blocks)} blocks")
        owner = getattr(region, "owner", None)
        raise located(error, owner) if owner is not None else error
    return blocks[0]


def _check_signature(op: OpLike, block: ir.Block) -> ir.Block:
    """``block`` if it takes the op's operand types and returns its result types, else
    :class:`InvalidInputError` at the op (the verifier of ``mhlo.fusion`` does not check
    this, and XLA's HLO parser does not verify fusions)."""
    operation = op.operation
    parameters = [str(a.type) for a in block.arguments]
    operands = [str(v.type) for v in call_operands(operation)]
    operations = list(block.operations)
    returned = [str(v.type) for v in operations[-1].operands] if operations else []
    results = [str(v.type) for v in operation.results]
    if parameters != operands or returned != results:
        raise located(
            InvalidInputError(
                f"{operation.name}: its computation takes ({', '.join(parameters)}) and returns "
                f"({', '.join(returned)}), but the op passes ({', '.join(operands)}) and produces ({', '.join(results)})"
            ),
            operation,
        )
    return block


def callee_region(op: OpLike) -> ir.Region | None:
    """The region an op runs as a nested computation: the body of the ``func.func`` a
    ``func.call`` / ``stablehlo.composite`` names (when in the module), or the region of
    an ``mhlo.fusion``; None for other ops and for a callee that is not in the module
    or has no body."""
    name = op.operation.name
    if name not in CALL_LIKE_OPS:
        return None
    symbol_attribute = CALL_LIKE_OPS[name]
    if name in ASYNC_DONE_OPS:
        start = async_start(op)
        if start is None:
            return None
        if symbol_attribute is None:
            return start.regions[0] if len(start.regions) == 1 and len(start.regions[0].blocks) else None
    elif symbol_attribute is None:
        return op.operation.regions[0]
    if symbol_attribute not in op.operation.attributes:
        return None
    symbol = ir.FlatSymbolRefAttr(op.operation.attributes[symbol_attribute]).value
    table_op = op.operation.parent
    while table_op is not None and table_op.name != "builtin.module":
        table_op = table_op.parent
    if table_op is None:
        return None
    table = ir.SymbolTable(table_op)
    if symbol not in table or not len(table[symbol].regions) or not len(table[symbol].regions[0].blocks):
        return None
    return table[symbol].regions[0]


def async_start(op: OpLike) -> ir.Operation | None:
    """The ``async_start`` whose bundle an op of :data:`ASYNC_DONE_OPS` waits for
    (through any ``async_update``); None when its operand comes from elsewhere."""
    operation = op.operation
    while len(operation.operands) == 1:
        owner = operation.operands[0].owner
        if isinstance(owner, ir.Block):
            return None
        operation = owner.operation
        if operation.name in ("mhlo.async_start", "stablehlo.async_start"):
            return operation
        if operation.name not in ("mhlo.async_update", "stablehlo.async_update"):
            return None
    return None


def call_operands(op: OpLike) -> list[ir.Value]:
    """The values a call-like op passes to its computation's arguments: its operands or,
    for an op of :data:`ASYNC_DONE_OPS`, the operands of its :func:`async_start` (none
    when it has no start)."""
    operation = op.operation
    if operation.name in ASYNC_DONE_OPS:
        start = async_start(operation)
        return [] if start is None else list(start.operands)
    return list(operation.operands)


def callee_block(op: OpLike) -> ir.Block | None:
    """The single block of :func:`callee_region` (None when there is none); found once
    per call-like operation while :func:`remembered_captures` is active (the symbol
    lookup and the signature check read every type through the bindings, and walks ask
    again for every result of a call and in every walk of the body holding it)."""
    operation = op.operation
    if _remembered_callees is None or operation.name not in CALL_LIKE_OPS:
        return _callee_block(operation)
    found = _remembered_callees.get(operation, _NOT_LOOKED_UP)
    if found is _NOT_LOOKED_UP:
        found = _remembered_callees[operation] = _callee_block(operation)
    return found  # type: ignore[return-value]


def _callee_block(op: OpLike) -> ir.Block | None:
    region = callee_region(op)
    return None if region is None else _check_signature(op, block_of(region))


def computations(module: ir.Operation) -> Iterator[tuple[str, ir.Operation]]:
    """``(label, op)`` for each computation of ``module`` in source order: each
    ``func.func`` with a body (label ``@name``) and each ``mhlo.fusion`` (labelled after
    its HLO instruction, ``fusion.3``, from the name location the HLO importer gives it;
    ``mhlo.fusion`` when it has none). Reducer and comparator computations (private
    functions of scalars only, which the HLO importer keeps beside the regions that use
    them) are left out: their maps are ``() -> ()``."""
    found: list[tuple[str, ir.Operation]] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        operation = op.operation
        name = operation.name
        if name == "func.func" and len(operation.regions[0].blocks) and not is_scalar_helper(operation):
            found.append((f"@{ir.StringAttr(operation.attributes['sym_name']).value}", operation))
        elif name == "mhlo.fusion":
            found.append((location_name(operation.location) or operation.name, operation))
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    found.sort(key=lambda entry: source_order_key(entry[1].location))
    return iter(found)


def is_scalar_helper(func: ir.Operation) -> bool:
    """A reducer or comparator kept by the HLO importer: a private function whose
    arguments and results are all rank-0 tensors."""
    if "sym_visibility" not in func.attributes or ir.StringAttr(func.attributes["sym_visibility"]).value != "private":
        return False
    function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    types = list(function_type.inputs) + list(function_type.results)
    return bool(types) and all(isinstance(t, ir.RankedTensorType) and t.rank == 0 for t in types)


#: Ops whose regions read values defined outside them (``lax.cond``'s branches do):
#: their per-op maps cover those values as operands after their own
#: (:func:`operand_values`).
CAPTURING_OPS = frozenset({"stablehlo.case", "stablehlo.if", "mhlo.case", "mhlo.if"})


#: The answers of :func:`captured_values` and :func:`callee_block` per operation while
#: :func:`remembered_captures` is active (None: not active).
_remembered: dict[ir.Operation, tuple[ir.Value, ...]] | None = None
_remembered_callees: dict[ir.Operation, ir.Block | None] | None = None
_NOT_LOOKED_UP = object()


@contextmanager
def remembered_captures() -> Iterator[None]:
    """Within: :func:`captured_values` and :func:`callee_block` compute their answer once
    per operation (for an analysis of one module that does not change meanwhile; nested
    uses share the outermost's answers). The walk over an op's regions is what makes
    captures costly, and analyses ask again for every result and every use of a ``case``
    or ``while``."""
    global _remembered, _remembered_callees
    if _remembered is not None:
        yield
        return
    _remembered, _remembered_callees = {}, {}
    try:
        yield
    finally:
        _remembered = _remembered_callees = None


def captured_values(op: OpLike) -> list[ir.Value]:
    """Values used inside ``op``'s regions but defined outside them, in order of first use."""
    operation = op.operation
    if _remembered is None:
        return _captured_values(operation)
    found = _remembered.get(operation)
    if found is None:
        found = _remembered[operation] = tuple(_captured_values(operation))
    return list(found)


def _captured_values(operation: ir.Operation) -> list[ir.Value]:
    defined: set[ir.Value] = set()
    used: list[ir.Value] = []

    def visit(inner: ir.Operation) -> ir.WalkResult:
        current = inner.operation
        if current != operation:
            used.extend(current.operands)
            defined.update(current.results)
        for region in current.regions:
            for block in region.blocks:
                defined.update(block.arguments)
        return ir.WalkResult.ADVANCE

    operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return list(dict.fromkeys(v for v in used if v not in defined))


def operand_values(op: OpLike) -> list[ir.Value]:
    """What an op's per-op maps are indexed by: its operands (:func:`call_operands`: an
    asynchronous done's are its start's), then (for :data:`CAPTURING_OPS`) the values
    its regions capture."""
    operation = op.operation
    name = operation.name  # read once: this runs for every op of every walk
    operands = call_operands(operation) if name in ASYNC_DONE_OPS else list(operation.operands)
    return operands + captured_values(operation) if name in CAPTURING_OPS else operands
