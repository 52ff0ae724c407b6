"""Elementwise ops (identity maps, with rank-0 operands broadcast as in ``select``/
``clamp``), numpy-style broadcasting (``chlo.broadcast_*``), ``bitcast_convert`` between
element types of different widths, and ops that pass operand ``k`` to result ``k``
(``optimization_barrier``; ``add_dependency``, which passes its operand on after a token)."""

from __future__ import annotations

from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.ops.map_builders import dims, make_map, scalar_map, spread_map, syms
from hlo_indexing.ops.rule import OpInfo, RuleResult


def _operand_map(info: OpInfo, operand_shape, result_shape):
    if len(operand_shape) == 0 and len(result_shape) > 0:
        return scalar_map(info.context, result_shape)
    return make_map(info.context, result_shape, dims(len(result_shape), info.context))


def elementwise_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """output -> operand k: ``(d...) -> (d...)``, or ``(d...) -> ()`` for a scalar operand."""
    result = info.result(result_index)
    return [[_operand_map(info, info.operand(k), result)] for k in range(info.num_operands)]


def elementwise_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """operand -> result: identity, or every result element for a scalar operand."""
    operand = info.operand(operand_index)
    out = []
    for r in range(info.num_results):
        result = info.result(r)
        if len(operand) == 0 and len(result) > 0:
            out.append([spread_map(info.context, (), lambda d, s: s, result)])
        else:
            out.append([make_map(info.context, operand, dims(len(operand), info.context))])
    return out


def pairwise_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Result ``k`` reads operand ``k`` only (``optimization_barrier``)."""
    shape = info.result(result_index)
    return [
        [make_map(info.context, shape, dims(len(shape), info.context))] if k == result_index else []
        for k in range(info.num_operands)
    ]


def pairwise_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand ``k`` feeds result ``k`` only (identity), no other result."""
    shape = info.operand(operand_index)
    return [
        [make_map(info.context, shape, dims(len(shape), info.context))] if r == operand_index else []
        for r in range(info.num_results)
    ]


def add_dependency_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """``add_dependency(x, token)`` is ``x``: ``x`` feeds the result at the same index;
    the token orders the op and carries no element."""
    if operand_index == 0:
        return pairwise_input_to_output(info, 0)
    return [[] for _ in range(info.num_results)]


def bitcast_convert_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Equal widths: identity. Narrowing (``f32[4] -> i8[4,4]``): the extra minor result
    dimension is dropped. Widening (``i8[4,4] -> f32[4]``): a range variable enumerates
    the operand's extra minor dimension."""
    operand, result = info.operand(0), info.result(0)
    d = dims(len(result), info.context)
    if len(operand) == len(result):
        return [[make_map(info.context, result, d)]]
    if len(result) == len(operand) + 1:
        return [[make_map(info.context, result, d[:-1])]]
    s = syms(1, info.context)
    return [[make_map(info.context, result, d + s, [operand[-1]])]]


def bitcast_convert_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Equal widths: identity. Operand with an extra minor dimension (widening): it is dropped.
    Narrowing: a range variable enumerates the result's extra minor dimension."""
    operand, result = info.operand(0), info.result(0)
    d = dims(len(operand), info.context)
    if len(operand) == len(result):
        return [[make_map(info.context, operand, d)]]
    if len(operand) == len(result) + 1:
        return [[make_map(info.context, operand, d[:-1])]]
    s = syms(1, info.context)
    return [[make_map(info.context, operand, d + s, [result[-1]])]]


def _broadcast_dims(info: OpInfo, operand_index: int) -> tuple[int, ...]:
    """Result dimension of each operand dimension for numpy-style broadcasting: trailing
    alignment, unless ``broadcast_dimensions`` says otherwise."""
    operand, result = info.operand(operand_index), info.result(0)
    if op_attrs.has_attr(info.op, "broadcast_dimensions") and len(operand) < len(result):
        return op_attrs.broadcast_dimensions(info.op, "broadcast_dimensions", operand, result)
    offset = len(result) - len(operand)
    return tuple(range(offset, len(result)))


def broadcast_operand_map(context, operand, result, bdims):
    """output -> operand of a broadcast: operand dim ``j`` reads result dim ``bdims[j]``,
    or 0 when the operand dimension has size 1 and is expanded."""
    d = dims(len(result), context)
    exprs = [d[p] if operand[j] == result[p] else d[p] * 0 for j, p in enumerate(bdims)]
    return make_map(context, result, exprs)


def broadcast_result_map(context, operand, result, bdims):
    """operand -> result of a broadcast: result dims not fed by an operand dimension of
    the same size are range variables."""
    d = dims(len(operand), context)
    source = {p: j for j, p in enumerate(bdims) if operand[j] == result[p]}
    free = [p for p in range(len(result)) if p not in source]
    s = syms(len(free), context)
    exprs = [d[source[p]] if p in source else s[free.index(p)] for p in range(len(result))]
    return make_map(context, operand, exprs, [result[p] for p in free])


def broadcasting_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Output -> operand ``k`` of a numpy-style broadcast: the operand's dimensions read their
    result dimensions (trailing alignment unless ``broadcast_dimensions`` says otherwise), 0
    for a size-1 dimension that is expanded."""
    result = info.result(result_index)
    return [
        [broadcast_operand_map(info.context, info.operand(k), result, _broadcast_dims(info, k))]
        for k in range(info.num_operands)
    ]


def broadcasting_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand -> each result: result dimensions not fed by an operand dimension of the same
    size are range variables."""
    operand = info.operand(operand_index)
    bdims = _broadcast_dims(info, operand_index)
    return [[broadcast_result_map(info.context, operand, info.result(r), bdims)] for r in range(info.num_results)]
