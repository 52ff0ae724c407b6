"""Ops that move elements without reading more than one: broadcasts, transpose,
reverse, slice, reshape, bitcast (with layouts), concatenate, pad, tuples."""

from __future__ import annotations

import math
from collections.abc import Sequence

from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.interval import Interval
from hlo_indexing.ops.map_builders import dims, filled, make_map, reshape_exprs, syms
from hlo_indexing.ops.rule import OpInfo, RuleResult, Shape, UnknownIndexing, value_shape
from hlo_indexing.ops.elementwise import (
    broadcast_operand_map,
    broadcast_result_map,
)


def _broadcast_dims(info: OpInfo) -> tuple[int, ...]:
    operand, result = info.operand(0), info.result(0)
    if op_attrs.has_attr(info.op, "broadcast_sizes"):  # broadcast: new dims are prepended
        sizes = op_attrs.int_array(info.op, "broadcast_sizes", minimum=0)
        if tuple(sizes) + tuple(operand) != tuple(result):
            raise op_attrs.invalid(info.op, "broadcast_sizes", f"{list(sizes)} and operand {list(operand)} do not give the result {list(result)}")
        return tuple(range(len(sizes), len(sizes) + len(operand)))
    return op_attrs.broadcast_dimensions(info.op, "broadcast_dimensions", operand, result)


def broadcast_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Output -> operand of ``broadcast_in_dim``: operand dimension ``j`` reads result
    dimension ``broadcast_dimensions[j]``, 0 when it has size 1 and is expanded."""
    return [[broadcast_operand_map(info.context, info.operand(0), info.result(0), _broadcast_dims(info))]]


def broadcast_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand -> output: result dimensions not fed by an operand dimension of the same size
    are range variables."""
    return [[broadcast_result_map(info.context, info.operand(0), info.result(0), _broadcast_dims(info))]]


def _permutation(info: OpInfo) -> tuple[int, ...]:
    operand, result = info.operand(0), info.result(0)
    perm = op_attrs.permutation(info.op, "permutation", len(operand))
    if tuple(operand[p] for p in perm) != tuple(result):
        raise op_attrs.invalid(info.op, "permutation", f"{list(perm)} of {list(operand)} is not the result shape {list(result)}")
    return perm


def transpose_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Result dim ``i`` is operand dim ``perm[i]``: operand dim ``perm[i]`` reads ``d_i``."""
    perm, result = _permutation(info), info.result(0)
    d = dims(len(result), info.context)
    exprs: list[ir.AffineExpr | None] = [None] * len(perm)
    for i, p in enumerate(perm):
        exprs[p] = d[i]
    return [[make_map(info.context, result, filled(exprs))]]


def transpose_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand ``d`` -> output ``(d[p] for p in permutation)``."""
    perm, operand = _permutation(info), info.operand(0)
    d = dims(len(operand), info.context)
    return [[make_map(info.context, operand, [d[p] for p in perm])]]


def _reverse_map(info: OpInfo, shape) -> IndexingMap:
    reversed_dims = set(op_attrs.dimension_array(info.op, "dimensions", len(shape), distinct=False))
    d = dims(len(shape), info.context)
    exprs = [d[i] * -1 + (shape[i] - 1) if i in reversed_dims else d[i] for i in range(len(shape))]
    return make_map(info.context, shape, exprs)


def reverse_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Output ``d`` -> operand: ``n - 1 - d`` along the reversed dimensions."""
    return [[_reverse_map(info, info.result(0))]]


def reverse_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand ``d`` -> output: ``n - 1 - d`` along the reversed dimensions."""
    return [[_reverse_map(info, info.operand(0))]]


def _slice_params(info: OpInfo):
    """``start_indices`` and ``strides``, checked: one per dimension, strides at least 1,
    ``limit_indices`` (when present) within the operand, every result element inside it."""
    operand, result = info.operand(0), info.result(0)
    rank = len(operand)
    starts = op_attrs.sized_int_array(info.op, "start_indices", rank)
    strides = op_attrs.sized_int_array(info.op, "strides", rank, (1,) * rank, minimum=1)
    for i, (start, stride, n) in enumerate(zip(starts, strides, result)):
        if n > 0 and not (0 <= start and start + (n - 1) * stride < operand[i]):
            raise op_attrs.invalid(
                info.op, "start_indices" if not 0 <= start < operand[i] else "strides",
                f"start {start}, stride {stride}: {n} result elements leave operand dimension {i} of size {operand[i]}",
            )
    if op_attrs.has_attr(info.op, "limit_indices"):
        limits = op_attrs.sized_int_array(info.op, "limit_indices", rank)
        for i, (start, limit) in enumerate(zip(starts, limits)):
            if not start <= limit <= operand[i]:
                raise op_attrs.invalid(info.op, "limit_indices", f"{list(limits)}: limit {limit} of dimension {i} is outside [{start}, {operand[i]}]")
    return starts, strides


def slice_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Output ``d`` -> operand ``d * stride + start`` per dimension."""
    starts, strides = _slice_params(info)
    result = info.result(0)
    d = dims(len(result), info.context)
    return [[make_map(info.context, result, [d[i] * strides[i] + starts[i] for i in range(len(result))])]]


def slice_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Only operand elements on the stride grid have an image."""
    starts, strides = _slice_params(info)
    result = info.result(0)
    d = dims(len(result), info.context)
    ranges, exprs, constraints = [], [], {}
    for i, n in enumerate(result):
        ranges.append((starts[i], starts[i] + (n - 1) * strides[i]))
        offset = d[i] - starts[i]
        if strides[i] == 1:
            exprs.append(offset)
        else:
            exprs.append(ax.floordiv(offset, strides[i]))
            constraints[ax.mod(offset, strides[i])] = Interval(0, 0)
    return [[make_map(info.context, ranges, exprs, constraints=constraints)]]


def reshape_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Output -> operand of a row-major reshape: linearise the output index, delinearise it in
    the operand's shape (within groups of dimensions with equal element counts)."""
    operand, result = info.operand(0), info.result(0)
    exprs = reshape_exprs(dims(len(result), info.context), result, operand, info.context)
    return [[make_map(info.context, result, exprs)]]


def reshape_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand -> output of a row-major reshape (the reshape's rule in the other direction)."""
    operand, result = info.operand(0), info.result(0)
    exprs = reshape_exprs(dims(len(operand), info.context), operand, result, info.context)
    return [[make_map(info.context, operand, exprs)]]


def _element_width(value) -> int | str:
    """Bit width of a tensor's element type (its text when the type has no width)."""
    element = value.type.element_type
    width = getattr(element, "width", None)
    return width if width is not None else str(element)


def _bitcast_exprs(info: OpInfo, src, dst, src_layout, dst_layout, src_exprs):
    """Logical ``src`` index -> physical src -> (row-major reshape) physical dst ->
    logical ``dst`` index. Layouts are minor-to-major."""
    src_major = list(reversed(src_layout))
    dst_major = list(reversed(dst_layout))
    physical_src = [src_exprs[k] for k in src_major]
    physical_dst = reshape_exprs(
        physical_src, tuple(src[k] for k in src_major), tuple(dst[k] for k in dst_major), info.context
    )
    exprs: list[ir.AffineExpr | None] = [None] * len(dst)
    for position, k in enumerate(dst_major):
        exprs[k] = physical_dst[position]
    return filled(exprs)


def _bitcast_layouts(info: OpInfo):
    if not (op_attrs.has_attr(info.op, "source_layout") and op_attrs.has_attr(info.op, "result_layout")):
        raise UnknownIndexing("bitcast without source_layout/result_layout: its element order is unknown")
    operation = info.op.operation
    if _element_width(operation.operands[0]) != _element_width(operation.results[0]):
        raise UnknownIndexing("bitcast between element types of different widths")
    operand, result = info.operand(0), info.result(0)
    layouts = op_attrs.permutation(info.op, "source_layout", len(operand)), op_attrs.permutation(info.op, "result_layout", len(result))
    if math.prod(operand) != math.prod(result):
        raise HloIndexingError(f"{operation.name}: {operand} and {result} have different element counts")
    return layouts


def bitcast_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """A layout-changing no-op: transpose to physical order, reshape, transpose back."""
    src_layout, dst_layout = _bitcast_layouts(info)
    operand, result = info.operand(0), info.result(0)
    exprs = _bitcast_exprs(info, result, operand, dst_layout, src_layout, dims(len(result), info.context))
    return [[make_map(info.context, result, exprs)]]


def bitcast_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand -> output: transpose to physical order, reshape, transpose back (the layouts'
    permutations)."""
    src_layout, dst_layout = _bitcast_layouts(info)
    operand, result = info.operand(0), info.result(0)
    exprs = _bitcast_exprs(info, operand, result, src_layout, dst_layout, dims(len(operand), info.context))
    return [[make_map(info.context, operand, exprs)]]


def _concat_offsets(info: OpInfo) -> tuple[int, list[int]]:
    axis = op_attrs.dimension_attr(info.op, "dimension", len(info.result(0)))
    offsets, total = [], 0
    for k in range(info.num_operands):
        offsets.append(total)
        total += info.operand(k)[axis]
    return axis, offsets


def concatenate_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Operand ``k`` covers only its own part of the output along the axis."""
    axis, offsets = _concat_offsets(info)
    result = info.result(0)
    d = dims(len(result), info.context)
    out = []
    for k, offset in enumerate(offsets):
        ranges: list[int | tuple[int, int]] = list(result)
        ranges[axis] = (offset, offset + info.operand(k)[axis] - 1)
        exprs = [d[i] - offset if i == axis else d[i] for i in range(len(result))]
        out.append([make_map(info.context, ranges, exprs)])
    return out


def concatenate_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand ``k`` -> output: shifted by the operand's offset along the concatenated axis."""
    axis, offsets = _concat_offsets(info)
    operand = info.operand(operand_index)
    d = dims(len(operand), info.context)
    exprs = [d[i] + offsets[operand_index] if i == axis else d[i] for i in range(len(operand))]
    return [[make_map(info.context, operand, exprs)]]


def _pad_params(info: OpInfo):
    rank = len(info.operand(0))
    low = op_attrs.sized_int_array(info.op, "edge_padding_low", rank)
    if op_attrs.has_attr(info.op, "edge_padding_high"):
        op_attrs.sized_int_array(info.op, "edge_padding_high", rank)
    interior = op_attrs.sized_int_array(info.op, "interior_padding", rank, (0,) * rank, minimum=0)
    return low, interior


def _floor_div(a: int, b: int) -> int:
    return a // b


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def pad_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Operand: output positions ``low + x * (interior + 1)`` inside the output; padding
    value: exactly the other positions, as a union of maps (one per dimension and kind
    of padding: low edge, high edge, interior)."""
    low, interior = _pad_params(info)
    operand, result = info.operand(0), info.result(0)
    d = dims(len(result), info.context)
    ranges, exprs, constraints = [], [], {}
    for i, n in enumerate(result):
        step = interior[i] + 1
        first, last = low[i], low[i] + (operand[i] - 1) * step
        lo, hi = max(first, 0), min(last, n - 1)
        if step > 1:
            lo = first + _ceil_div(lo - first, step) * step
            hi = first + _floor_div(hi - first, step) * step
        ranges.append((lo, hi))
        offset = d[i] - low[i]
        if step == 1:
            exprs.append(offset)
        else:
            exprs.append(ax.floordiv(offset, step))
            if lo < hi:
                constraints[ax.mod(offset, step)] = Interval(0, 0)
    operand_map = make_map(info.context, ranges, exprs, constraints=constraints)
    return [[operand_map], _padding_value_maps(info, result, low, interior, operand, scalar=True)]


def _padding_value_maps(
    info: OpInfo, result: Shape, low: Sequence[int], interior: Sequence[int], operand: Shape, *, scalar: bool
) -> list[IndexingMap]:
    """Output positions holding the padding value, as maps from the output (``scalar``:
    output -> padding value) or from the padding value (-> output)."""
    maps = []
    rank = len(result)
    for i, n in enumerate(result):
        step = interior[i] + 1
        first, last = low[i], low[i] + (operand[i] - 1) * step
        pieces: list[tuple[tuple[int, int], tuple[int, int] | None]] = []
        if first > 0:
            pieces.append(((0, min(first - 1, n - 1)), None))
        if last < n - 1:
            pieces.append(((max(last + 1, 0), n - 1), None))
        if step > 1 and operand[i] > 1:
            lo, hi = max(first + 1, 0), min(last - 1, n - 1)
            if lo <= hi:
                pieces.append(((lo, hi), (1, step - 1)))
        if operand[i] == 0:
            pieces = [((0, n - 1), None)]
        for bounds, residue in pieces:
            ranges = [(0, m - 1) for m in result]
            ranges[i] = bounds
            if scalar:
                v = dims(rank, info.context)
                constraints: dict[ir.AffineExpr, Interval] = (
                    {ax.mod(v[i] - first, step): Interval(*residue)} if residue else {}
                )
                maps.append(make_map(info.context, ranges, [], constraints=constraints))
            else:
                s = syms(rank, info.context)
                constraints = {ax.mod(s[i] - first, step): Interval(*residue)} if residue else {}
                maps.append(make_map(info.context, [], s, ranges, constraints=constraints))
    return [m for m in maps if not m.is_known_empty()]


def pad_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand -> output: ``low + d * (interior + 1)`` per dimension, constrained to the
    output; padding value -> every padded output element."""
    low, interior = _pad_params(info)
    operand, result = info.operand(0), info.result(0)
    if operand_index == 1:
        return [_padding_value_maps(info, result, low, interior, operand, scalar=False)]
    d = dims(len(operand), info.context)
    ranges, exprs = [], []
    for i, n in enumerate(operand):
        step = interior[i] + 1
        ranges.append((max(0, _ceil_div(-low[i], step)), min(n - 1, _floor_div(result[i] - 1 - low[i], step))))
        exprs.append(d[i] * step + low[i])
    return [[make_map(info.context, ranges, exprs)]]


def no_operands(info: OpInfo, result_index: int) -> RuleResult:
    """constant, iota: nothing is read."""
    return []


def _element_identity(info: OpInfo, value: ir.Value, what: str) -> IndexingMap:
    """Identity over the index space of ``value``, one tuple element; undefined for a
    nested tuple (the fused-map walk follows nested elements, one op cannot name them)."""
    if isinstance(value.type, ir.TupleType):
        return IndexingMap.undefined(f"{info.op.name}: {what} is a nested tuple, not a tensor")
    shape = value_shape(value.type)
    if shape is None:
        raise UnknownIndexing(f"{what} is not a statically shaped tensor")
    return make_map(info.context, shape, dims(len(shape), info.context))


# Tuples have no index space of their own: a map into or out of a tuple value addresses
# one of its elements, over that element's index space. ``tuple`` operand ``k`` is
# element ``k`` of the result; ``get_tuple_element``'s operand map addresses element
# ``index`` of its operand. The fused-map walk (hlo_indexing.analysis.fusion) keeps track of
# which element a map belongs to.


def get_tuple_element_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Result ``x`` reads element ``index`` of the tuple at ``x``."""
    return [[_element_identity(info, info.op.results[0], "the result")]]


def get_tuple_element_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Element ``index`` of the tuple at ``x`` is the result at ``x``."""
    return [[_element_identity(info, info.op.results[0], "the result")]]


def tuple_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Element ``k`` of the result at ``x`` reads operand ``k`` at ``x``."""
    return [[_element_identity(info, value, f"operand {k}")] for k, value in enumerate(info.op.operands)]


def tuple_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand ``k`` at ``x`` is element ``k`` of the result at ``x``."""
    return [[_element_identity(info, info.op.operands[operand_index], f"operand {operand_index}")]]
