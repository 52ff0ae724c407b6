"""The public per-op API: maps of one op, for every op, bodies included.

Rules live in :mod:`hlo_indexing.ops`; the rules of ops with a body (``mhlo.scan``) need
the fused maps of that body, which this layer computes, so the functions here call the
per-op analysis with the fused analysis as its region hook
(:data:`hlo_indexing.analysis.fusion.REGIONS`).

Example::

    >>> from hlo_indexing import parse_module
    >>> module = parse_module('''
    ...   func.func @f(%a: tensor<20xf32>) -> tensor<10x20x30xf32> {
    ...     %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<20xf32>) -> tensor<10x20x30xf32>
    ...     return %0 : tensor<10x20x30xf32>
    ...   }''')
    >>> op = next(hlo_ops(module.operation))
    >>> print(next(iter(output_to_input_indexing(op).maps[0])))
    (d0, d1, d2) -> (d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]
"""

from __future__ import annotations

from collections.abc import Iterator

from hlo_indexing.analysis.fusion import REGIONS
from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.call_like import CALL_LIKE_OPS, is_scalar_helper, operand_values
from hlo_indexing.dialect_glue.op_attrs import HLO_DIALECTS
from hlo_indexing.direction import Direction
from hlo_indexing.ops import dispatch
from hlo_indexing.ops.result import InstructionIndexing

#: Ops whose regions are computations applied per element, not program code: their
#: bodies' ops get no maps of their own.
REDUCER_KINDS = frozenset(
    {"reduce", "reduce_window", "sort", "scatter", "select_and_scatter", "map", "all_reduce", "reduce_scatter", "scan"}
)


def output_to_input_indexing(op: OpLike, result_index: int = 0, *, simplify: bool = True) -> InstructionIndexing:
    """For result ``result_index`` of ``op``, one set of maps per operand: from the
    result's index space to the operand elements each result element reads (see
    :func:`hlo_indexing.ops.dispatch.result_indexing`). Of a custom call returning one
    tuple (XLA's ``TopK``, cuBLAS and cuDNN calls), ``result_index`` is a tuple element,
    as in XLA's indexing."""
    with REGIONS.session():
        by_element = dispatch.tuple_elements_indexing(op, Direction.OUTPUT_TO_INPUT, result_index, simplify=simplify)
        if by_element is not None:
            return by_element
        return dispatch.result_indexing(op, result_index, simplify=simplify, regions=REGIONS)


def input_to_output_indexing(op: OpLike, operand_index: int = 0, *, simplify: bool = True) -> InstructionIndexing:
    """For operand ``operand_index`` of ``op``, one set of maps per result: from the
    operand's index space to the result elements each operand element contributes to
    (per tuple element of a custom call returning one tuple, as
    :func:`output_to_input_indexing`)."""
    with REGIONS.session():
        by_element = dispatch.tuple_elements_indexing(op, Direction.INPUT_TO_OUTPUT, operand_index, simplify=simplify)
        if by_element is not None:
            return by_element
        return dispatch.operand_indexing(op, operand_index, simplify=simplify, regions=REGIONS)


def hlo_ops(module: ir.Operation) -> Iterator[ir.Operation]:
    """The HLO ops and call-like ops of ``module`` that get maps, in program order (the
    bodies of :data:`REDUCER_KINDS` ops and of reducer/comparator functions,
    :func:`~hlo_indexing.dialect_glue.call_like.is_scalar_helper`, are skipped)."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        operation = op.operation
        name = operation.name  # read once: every read goes through the bindings
        if name == "func.func" and is_scalar_helper(operation):
            return ir.WalkResult.SKIP
        dialect, _, kind = name.partition(".")
        if (dialect in HLO_DIALECTS and kind != "return") or name in CALL_LIKE_OPS:
            found.append(operation)
            if kind in REDUCER_KINDS:
                return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return iter(found)


def indexings(op: ir.Operation, direction: str, simplify: bool) -> list[InstructionIndexing]:
    """One indexing per result (``"output-to-input"``) or per operand
    (``"input-to-output"``); per tuple element of a custom call returning one tuple, as
    :func:`output_to_input_indexing`."""
    direction = Direction.of(direction)
    elements = dispatch.tuple_element_shapes(op)
    with REGIONS.session():
        if elements is not None and dispatch.followed_tuple_elements(op):
            width = len(elements) if direction == Direction.OUTPUT_TO_INPUT else len(operand_values(op))
            by_element = [dispatch.tuple_elements_indexing(op, direction, k, simplify=simplify) for k in range(width)]
            return [indexing for indexing in by_element if indexing is not None]  # each is: every element is followed
        return dispatch.all_indexings(op, direction, simplify=simplify, regions=REGIONS)
