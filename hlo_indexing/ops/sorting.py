"""Selection along one dimension: ``chlo.top_k`` and XLA's ``ApproxTopK`` /
``PartialReduce`` / ``TopK`` custom calls (sort itself: :mod:`hlo_indexing.ops.reduction`;
argmax/argmin are variadic reductions).

Which elements are selected depends on the data, so every result element along the
selected dimension may come from any element of the operand's row: result
``(..., j, ...)`` reads operand ``(..., s, ...)`` with ``s`` over the whole dimension,
elementwise along every other dimension. Scalar operands (the initial values of
``ApproxTopK``) are read by every result element.

Example: ``chlo.top_k(tensor<3x5xf32>, k = 2)`` gives, for both results,
``(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 2], d1 in [0, 1], s0 in [0, 4]``.
"""

from __future__ import annotations

from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.ops.map_builders import dims, make_map, scalar_map, syms
from hlo_indexing.ops.rule import OpInfo, RuleResult, Shape, UnknownIndexing


def row_map(context: ir.Context, space: Shape, target: Shape, dimension: int) -> IndexingMap:
    """``(d...)[s] -> (d with d[dimension] replaced by s)``, ``s`` over ``target``'s
    ``dimension``: the whole row of ``target`` along ``dimension``."""
    d = dims(len(space), context)
    exprs = list(d)
    exprs[dimension] = syms(1, context)[0]
    return make_map(context, space, exprs, [target[dimension]])


def selection_maps(info: OpInfo, result_index: int, dimension: int) -> RuleResult:
    """Result ``result_index`` -> every operand: rows along ``dimension`` for operands
    of the result's rank, the single element of scalars."""
    space = info.result(result_index)
    if not 0 <= dimension < len(space):
        raise UnknownIndexing(f"selection dimension {dimension} is not a dimension of {space}")
    out = []
    for k in range(info.num_operands):
        target = info.operand(k)
        if not target:
            out.append([scalar_map(info.context, space)])
        elif len(target) != len(space):
            raise UnknownIndexing(f"operand {k} of rank {len(target)} does not match the result rank {len(space)}")
        else:
            out.append([row_map(info.context, space, target, dimension)])
    return out


def selection_inverse_maps(info: OpInfo, operand_index: int, dimension: int) -> RuleResult:
    """Operand ``operand_index`` -> every result: rows along ``dimension`` (a scalar
    operand reaches every result element)."""
    space = info.operand(operand_index)
    out = []
    for r in range(info.num_results):
        target = info.result(r)
        if not space:
            s = syms(len(target), info.context)
            out.append([make_map(info.context, space, s, target)])
        else:
            out.append([row_map(info.context, space, target, dimension)])
    return out


def top_k_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """``chlo.top_k``: whole rows along the last dimension."""
    return selection_maps(info, result_index, len(info.operand(0)) - 1)


def top_k_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """``chlo.top_k``: an operand row reaches the whole row of both results."""
    return selection_inverse_maps(info, operand_index, len(info.operand(0)) - 1)


def approx_top_k_dimension(info: OpInfo) -> int:
    """``reduction_dim`` of ``ApproxTopK``/``PartialReduce`` (``mhlo.backend_config``),
    the last dimension when absent (and for ``TopK``)."""
    rank = len(info.operand(0))
    config = info.op.attributes["mhlo.backend_config"] if "mhlo.backend_config" in info.op.attributes else None
    if isinstance(config, ir.DictAttr) and "reduction_dim" in config:
        try:
            values = op_attrs.attr_to_ints(config["reduction_dim"])
        except HloIndexingError:
            values = ()
        if len(values) != 1 or not -rank <= values[0] < rank:
            raise op_attrs.invalid(info.op, "mhlo.backend_config", f"reduction_dim {config['reduction_dim']} is not a dimension of rank {rank}")
        return values[0] % rank
    return rank - 1
