"""Reductions and windows: reduce (variadic, with inits), reduce_window, sort,
select_and_scatter (scan: :mod:`hlo_indexing.ops.scan`)."""

from __future__ import annotations

from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import compose
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.interval import Interval
from hlo_indexing.ops.inversion import invert
from hlo_indexing.ops.map_builders import dims, make_map, scalar_map, spread_map, syms
from hlo_indexing.ops.rule import OpInfo, RuleResult


def _reduced(info: OpInfo) -> tuple[int, ...]:
    """The reduced ``dimensions`` (sorted), checked: distinct operand dimensions, every
    result the operand's shape without them."""
    operand = info.operand(0)
    reduced = tuple(sorted(op_attrs.dimension_array(info.op, "dimensions", len(operand))))
    kept = [n for i, n in enumerate(operand) if i not in reduced]
    for r, shape in enumerate(info.result_shapes):
        if shape is not None and list(shape) != kept:
            raise op_attrs.invalid(info.op, "dimensions", f"{list(reduced)} of {list(operand)} leave {kept}, result {r} is {list(shape)}")
    return reduced


def reduce_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Input ``j``: the kept dims from the output, reduced dims as range variables
    (every input is read, as the reducer combines all of them); init ``j``: ``() ``."""
    n = info.num_operands // 2
    reduced, result = _reduced(info), info.result(result_index)
    operand = info.operand(0)
    d, s = dims(len(result), info.context), syms(len(reduced), info.context)
    exprs, kept = [], iter(d)
    for i in range(len(operand)):
        exprs.append(s[reduced.index(i)] if i in reduced else next(kept))
    input_map = make_map(info.context, result, exprs, [operand[i] for i in reduced])
    return [[input_map]] * n + [[scalar_map(info.context, result)]] * n


def reduce_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Input ``k`` -> each result: the reduced dimensions dropped; an init value contributes to
    every result element."""
    n = info.num_operands // 2
    reduced, operand = _reduced(info), info.operand(0)
    if operand_index >= n:
        return [[spread_map(info.context, (), lambda d, s: s, info.result(r))] for r in range(info.num_results)]
    d = dims(len(operand), info.context)
    kept = [d[i] for i in range(len(operand)) if i not in reduced]
    return [[make_map(info.context, operand, kept)] for _ in range(info.num_results)]


def window_map(context, result, operand, window) -> IndexingMap:
    """output -> input of a window: ``(d)[s] -> ((d * stride + s * dilation - low) floordiv
    base_dilation)``, restricted to positions on real (not padded, not dilation-hole)
    input elements. Window dimensions of size 1 take no range variable."""
    d = dims(len(result), context)
    windowed = [i for i, size in enumerate(window.sizes) if size > 1]
    s = syms(len(windowed), context)
    exprs, constraints = [], {}
    for i in range(len(result)):
        position = d[i] * window.strides[i]
        if i in windowed:
            offset = s[windowed.index(i)]
            if window.reversal[i]:
                offset = offset * -1 + (window.sizes[i] - 1)
            position = position + offset * window.window_dilations[i]
        low, base = window.padding[i][0], window.base_dilations[i]
        constraints[position] = Interval(low, low + (operand[i] - 1) * base)
        shifted = position - low
        if base > 1:
            constraints[ax.mod(shifted, base)] = Interval(0, 0)
            exprs.append(ax.floordiv(shifted, base))
        else:
            exprs.append(shifted)
    ranges = [window.sizes[i] for i in windowed]
    return _drop_implied(make_map(context, result, exprs, ranges, constraints=constraints))


def _drop_implied(m):
    """Remove constraints on sums that the variable ranges already imply."""
    if m.is_known_empty():
        return m
    kept = {e: c for e, c in m.constraints.items() if not c.contains(m.expr_bounds(e))}
    return m if len(kept) == len(m.constraints) else m.replace(constraints=kept)


def reduce_window_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Output -> each input: its window (range variables over the window positions, with
    strides, dilations and padding as constraints); each init value: its single element."""
    n = info.num_operands // 2
    operand, result = info.operand(0), info.result(result_index)
    window = op_attrs.reduce_window(info.op, len(operand))
    input_map = window_map(info.context, result, operand, window)
    return [[input_map]] * n + [[scalar_map(info.context, result)]] * n


def reduce_window_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Input -> each output: every output element whose window holds the input element; an init
    value contributes to every output element."""
    n = info.num_operands // 2
    operand = info.operand(0)
    out = []
    for r in range(info.num_results):
        result = info.result(r)
        if operand_index >= n:
            out.append([spread_map(info.context, (), lambda d, s: s, result)])
        else:
            window = op_attrs.reduce_window(info.op, len(operand))
            out.append([invert(window_map(info.context, result, operand, window), operand)])
    return out


def _sort_dimension(info: OpInfo) -> int:
    rank = len(info.operand(0))
    return op_attrs.dimension_attr(info.op, "dimension", rank, -1, negative=True) % rank


def _sort_map(info: OpInfo, shape):
    """Every element along the sorted dimension may land anywhere along it."""
    dimension = _sort_dimension(info)
    d, s = dims(len(shape), info.context), syms(1, info.context)
    exprs = [s[0] if i == dimension else d[i] for i in range(len(shape))]
    return make_map(info.context, shape, exprs, [shape[dimension]])


def sort_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Output -> each operand: every position along the sorted dimension (a range variable),
    other dimensions unchanged."""
    return [[_sort_map(info, info.result(result_index))]] * info.num_operands


def sort_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand -> each result: every position along the sorted dimension (a range variable),
    other dimensions unchanged."""
    return [[_sort_map(info, info.operand(operand_index))]] * info.num_results


def _select_and_scatter_maps(info: OpInfo):
    """source position -> operand positions of its window, and its inverse."""
    operand, source = info.operand(0), info.operand(1)
    window = op_attrs.reduce_window(info.op, len(operand))
    window_of_source = window_map(info.context, source, operand, window)
    return window_of_source, invert(window_of_source, operand)


def select_and_scatter_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Output element ``o`` receives the source values whose window contains ``o``
    (which of them is data-dependent: an over-approximation), selected by comparing
    the operand over those windows."""
    window_of_source, sources_of_output = _select_and_scatter_maps(info)
    result = info.result(0)
    return [
        [compose(sources_of_output, window_of_source)],
        [sources_of_output],
        [scalar_map(info.context, result)],
    ]


def select_and_scatter_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand -> output: the window positions of the sources whose window holds the element;
    source -> output: the positions of its window; the init value contributes to every
    output element."""
    window_of_source, sources_of_output = _select_and_scatter_maps(info)
    if operand_index == 0:
        return [[compose(sources_of_output, window_of_source)]]
    if operand_index == 1:
        return [[window_of_source]]
    return [[spread_map(info.context, (), lambda d, s: s, info.result(0))]]
