"""Data-dependent indexing: dynamic_slice, dynamic_update_slice, gather, scatter.

Offsets read at run time are *runtime variables* (``rtN``) whose ranges are the
clamped start ranges; each carries a :class:`RuntimeSource` (the index operand and the
map to the element holding it). Where which elements are read depends on data beyond
the offsets (the index operands themselves, elements overwritten by an update), the
maps over-approximate: every index element, every operand element."""

from __future__ import annotations

from hlo_indexing import affine_expr as ax
from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.indexing_map import Variable
from hlo_indexing.interval import Interval
from hlo_indexing.op_indexing.builders import Entry, OpInfo, dims, invert, make_map, scalar_map, spread_map, syms
from hlo_indexing.op_indexing.result import RuntimeSource


def _runtime(operand: int, lower: int, upper: int) -> Variable:
    return Variable(Interval(lower, max(lower, upper)), origin=f"operand {operand}")


def _offsets(info: OpInfo, first_index_operand: int, target, window, shape_of_space):
    """Runtime variables for start indices given as scalar operands, and their sources."""
    variables, sources = [], []
    for i in range(len(target)):
        k = first_index_operand + i
        variables.append(_runtime(k, 0, target[i] - window[i]))
        sources.append(RuntimeSource(k, scalar_map(info.context, shape_of_space)))
    return variables, tuple(sources)


def _dynamic_slice_map(info: OpInfo) -> Entry:
    operand, result = info.operand(0), info.result(0)
    variables, sources = _offsets(info, 1, operand, result, result)
    d, rt = dims(len(result), info.context), syms(len(result), info.context)
    return Entry((make_map(info.context, result, [a + b for a, b in zip(d, rt)], (), variables),), sources)


def dynamic_slice(info: OpInfo, result_index: int) -> list:
    result = info.result(0)
    return [_dynamic_slice_map(info)] + [[scalar_map(info.context, result)]] * (info.num_operands - 1)


def dynamic_slice_inverse(info: OpInfo, operand_index: int) -> list:
    result = info.result(0)
    if operand_index > 0:
        return [[spread_map(info.context, (), lambda d, s: s, result)]]
    forward = _dynamic_slice_map(info)
    operand = info.operand(0)
    sources = tuple(RuntimeSource(s.operand, scalar_map(info.context, operand)) for s in forward.runtime)
    return [Entry((invert(forward.maps[0], operand),), sources)]


def _update_map(info: OpInfo, space) -> Entry:
    """output -> update: ``d - rt`` where the update covers ``d``."""
    operand, update = info.operand(0), info.operand(1)
    variables, sources = _offsets(info, 2, operand, update, space)
    d, rt = dims(len(space), info.context), syms(len(space), info.context)
    exprs = [a - b for a, b in zip(d, rt)]
    constraints = {e: Interval(0, n - 1) for e, n in zip(exprs, update)}
    return Entry((make_map(info.context, space, exprs, (), variables, constraints),), sources)


def dynamic_update_slice(info: OpInfo, result_index: int) -> list:
    """Operand: identity (over-approximation: the updated window does not read it)."""
    result = info.result(0)
    identity = make_map(info.context, result, dims(len(result), info.context))
    return [[identity], _update_map(info, result)] + [[scalar_map(info.context, result)]] * (info.num_operands - 2)


def dynamic_update_slice_inverse(info: OpInfo, operand_index: int) -> list:
    result = info.result(0)
    if operand_index == 0:
        return [[make_map(info.context, result, dims(len(result), info.context))]]
    if operand_index > 1:
        return [[spread_map(info.context, (), lambda d, s: s, result)]]
    update, operand = info.operand(1), info.operand(0)
    variables, _ = _offsets(info, 2, operand, update, update)
    sources = tuple(RuntimeSource(2 + i, scalar_map(info.context, update)) for i in range(len(update)))
    d, rt = dims(len(update), info.context), syms(len(update), info.context)
    return [Entry((make_map(info.context, update, [a + b for a, b in zip(d, rt)], (), variables),), sources)]


def _index_map(info: OpInfo, space, batch_exprs, indices_shape, vector_dim: int, component: int):
    """Map from ``space`` to the element of the indices tensor holding ``component``."""
    exprs, batch = [], iter(batch_exprs)
    for i in range(len(indices_shape)):
        exprs.append(ax.constant(component, info.context) if i == vector_dim else next(batch))
    return make_map(info.context, space, exprs)


def _gather_operand_entry(info: OpInfo) -> Entry:
    operand, indices, result = info.operand(0), info.operand(1), info.result(0)
    dn = op_attrs.gather_dimensions(info.op)
    slice_sizes = op_attrs.int_array(info.op, "slice_sizes")
    d = dims(len(result), info.context)
    batch_dims = [i for i in range(len(result)) if i not in dn.offset_dims]
    batch_exprs = [d[i] for i in batch_dims]
    indices_batch = [i for i in range(len(indices)) if i != dn.index_vector_dim]
    rt = syms(len(dn.start_index_map), info.context)
    variables, sources = [], []
    for k, operand_dim in enumerate(dn.start_index_map):
        variables.append(_runtime(1, 0, operand[operand_dim] - slice_sizes[operand_dim]))
        sources.append(RuntimeSource(1, _index_map(info, result, batch_exprs, indices, dn.index_vector_dim, k)))
    windowed = [i for i in range(len(operand)) if i not in dn.collapsed_slice_dims and i not in dn.operand_batching_dims]
    exprs = []
    for i in range(len(operand)):
        expr = d[dn.offset_dims[windowed.index(i)]] if i in windowed else ax.constant(0, info.context)
        if i in dn.start_index_map:
            expr = expr + rt[dn.start_index_map.index(i)]
        if i in dn.operand_batching_dims:
            indices_dim = dn.start_indices_batching_dims[dn.operand_batching_dims.index(i)]
            expr = batch_exprs[indices_batch.index(indices_dim)]
        exprs.append(expr)
    return Entry((make_map(info.context, result, exprs, (), variables),), tuple(sources))


def _gather_indices_map(info: OpInfo, space_is_result: bool):
    indices, result = info.operand(1), info.result(0)
    dn = op_attrs.gather_dimensions(info.op)
    batch_dims = [i for i in range(len(result)) if i not in dn.offset_dims]
    if dn.index_vector_dim == len(indices):  # implicit trailing index vector of size 1
        vector_size = 1
    else:
        vector_size = indices[dn.index_vector_dim]
    if space_is_result:
        d, s = dims(len(result), info.context), syms(1, info.context)
        batch = iter(d[i] for i in batch_dims)
        exprs = [s[0] if i == dn.index_vector_dim else next(batch) for i in range(len(indices))]
        return make_map(info.context, result, exprs, [vector_size])
    d = dims(len(indices), info.context)
    batch = iter(d[i] for i in range(len(indices)) if i != dn.index_vector_dim)
    offsets = iter(syms(len(dn.offset_dims), info.context))
    exprs = [next(offsets) if i in dn.offset_dims else next(batch) for i in range(len(result))]
    return make_map(info.context, indices, exprs, [result[i] for i in dn.offset_dims])


def gather(info: OpInfo, result_index: int) -> list:
    """Operand: ``offset + rt`` per started dimension; indices: the whole index vector
    of the output's batch position."""
    return [_gather_operand_entry(info), [_gather_indices_map(info, True)]]


def gather_inverse(info: OpInfo, operand_index: int) -> list:
    if operand_index == 1:
        return [[_gather_indices_map(info, False)]]
    forward = _gather_operand_entry(info)
    operand = info.operand(0)
    # the inverse's runtime variables are read at output positions (its range variables)
    return [Entry((invert(forward.maps[0], operand),), forward.runtime)]


def _scatter_update_entry(info: OpInfo, update_index: int) -> Entry:
    """update -> output: ``window offset + rt`` per scattered dimension."""
    n = (info.num_operands - 1) // 2
    operand, indices, update = info.operand(0), info.operand(n), info.operand(update_index)
    dn = op_attrs.scatter_dimensions(info.op)
    u = dims(len(update), info.context)
    scatter_dims = [i for i in range(len(update)) if i not in dn.update_window_dims]
    scatter_exprs = [u[i] for i in scatter_dims]
    indices_batch = [i for i in range(len(indices)) if i != dn.index_vector_dim]
    windowed = [i for i in range(len(operand)) if i not in dn.inserted_window_dims and i not in dn.input_batching_dims]
    window_sizes = [1] * len(operand)
    for position, i in enumerate(windowed):
        window_sizes[i] = update[dn.update_window_dims[position]]
    rt = syms(len(dn.scatter_dims_to_operand_dims), info.context)
    variables, sources = [], []
    for k, operand_dim in enumerate(dn.scatter_dims_to_operand_dims):
        variables.append(_runtime(n, 0, operand[operand_dim] - window_sizes[operand_dim]))
        sources.append(RuntimeSource(n, _index_map(info, update, scatter_exprs, indices, dn.index_vector_dim, k)))
    exprs = []
    for i in range(len(operand)):
        expr = u[dn.update_window_dims[windowed.index(i)]] if i in windowed else ax.constant(0, info.context)
        if i in dn.scatter_dims_to_operand_dims:
            expr = expr + rt[dn.scatter_dims_to_operand_dims.index(i)]
        if i in dn.input_batching_dims:
            indices_dim = dn.scatter_indices_batching_dims[dn.input_batching_dims.index(i)]
            expr = scatter_exprs[indices_batch.index(indices_dim)]
        exprs.append(expr)
    return Entry((make_map(info.context, update, exprs, (), variables),), tuple(sources))


def scatter(info: OpInfo, result_index: int) -> list:
    """Inputs: identity (every input feeds the combiner); indices: all of them
    (over-approximation); updates: the updates whose window covers the output element."""
    n = (info.num_operands - 1) // 2
    result = info.result(result_index)
    identity = make_map(info.context, result, dims(len(result), info.context))
    indices = spread_map(info.context, result, lambda d, s: s, info.operand(n))
    updates = []
    for j in range(n):
        forward = _scatter_update_entry(info, n + 1 + j)
        updates.append(Entry((invert(forward.maps[0], result),), forward.runtime))
    return [[identity]] * n + [[indices]] + updates


def scatter_inverse(info: OpInfo, operand_index: int) -> list:
    n = (info.num_operands - 1) // 2
    if operand_index < n:
        shape = info.operand(operand_index)
        return [[make_map(info.context, shape, dims(len(shape), info.context))]] * info.num_results
    if operand_index == n:
        return [[spread_map(info.context, info.operand(n), lambda d, s: s, info.result(r))] for r in range(info.num_results)]
    return [_scatter_update_entry(info, operand_index)] * info.num_results
