"""Collectives with a known data movement (all_gather) and the explicit *unknown*
rule for ops the analysis cannot describe."""

from __future__ import annotations

from collections.abc import Callable

from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.ops.builders import Entry, OpInfo, dims, make_map, syms


def _gather_axis(info: OpInfo) -> int:
    return op_attrs.int_attr(info.op, "all_gather_dim")


def all_gather_output_to_input(info: OpInfo, result_index: int) -> list:
    """Output ``d`` reads element ``d mod n`` (along the gathered axis) of the operand
    held by replica ``d floordiv n`` of its group (printed as ``replica id``)."""
    axis = _gather_axis(info)
    operand, result = info.operand(result_index), info.result(result_index)
    d = dims(len(result), info.context)
    exprs = [ax.mod(d[i], operand[i]) if i == axis else d[i] for i in range(len(result))]
    out: list[list[IndexingMap] | Entry] = [[] for _ in range(info.num_operands)]
    out[result_index] = Entry((make_map(info.context, result, exprs),))
    return out


def all_gather_replicas(info: OpInfo, result_index: int) -> IndexingMap:
    """Output ``d`` -> the id of the replica whose operand it reads: ``d floordiv n`` along the
    gathered axis (``n`` the operand's extent there), within the replica group."""
    axis = _gather_axis(info)
    operand, result = info.operand(result_index), info.result(result_index)
    d = dims(len(result), info.context)
    return make_map(info.context, result, [ax.floordiv(d[axis], operand[axis])])


def all_gather_input_to_output(info: OpInfo, operand_index: int) -> list:
    """The operand lands in the slot of its replica: a range variable over the group."""
    axis = _gather_axis(info)
    operand, result = info.operand(operand_index), info.result(operand_index)
    d, s = dims(len(operand), info.context), syms(1, info.context)
    exprs = [s[0] * operand[i] + d[i] if i == axis else d[i] for i in range(len(operand))]
    out: list[list[IndexingMap]] = [[] for _ in range(info.num_results)]
    out[operand_index] = [make_map(info.context, operand, exprs, [result[axis] // operand[axis]])]
    return out


def unknown(reason: str) -> tuple[Callable[[OpInfo, int], list], Callable[[OpInfo, int], list]]:
    """The two functions (output to input, input to output) of a rule giving ``unknown
    indexing`` for every operand/result, with ``reason``."""

    def output_to_input(info: OpInfo, index: int) -> list:
        return [[IndexingMap.undefined(f"{info.op.operation.name}: {reason}")]] * info.num_operands

    def input_to_output(info: OpInfo, index: int) -> list:
        return [[IndexingMap.undefined(f"{info.op.operation.name}: {reason}")]] * info.num_results

    return output_to_input, input_to_output
