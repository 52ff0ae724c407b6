"""Data-dependent indexing: dynamic_slice, dynamic_update_slice, gather, scatter.

Offsets read at run time are *runtime variables* (``rtN``) whose ranges are the
clamped start ranges; each carries a :class:`RuntimeSource` (the index operand and the
map to the element holding it, over the map's dimensions and range variables as
:mod:`~hlo_indexing.ops.result` states). Where which elements are read depends
on data beyond the offsets (the index operands themselves, elements overwritten by an
update), the maps over-approximate: every index element, every operand element.

An inverted map (scatter's output -> update, gather's operand -> result) ranges over
the positions of the inverted map's index space with range variables; its offsets are
read at those positions, so its sources are re-expressed over them (:func:`_inverted`)."""

from __future__ import annotations

from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.ops.inversion import invert
from hlo_indexing.ops.map_builders import dims, make_map, scalar_map, spread_map, syms
from hlo_indexing.ops.rule import Entry, OpInfo, RuleResult, Shape
from hlo_indexing.ops.result import RuntimeSource


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


def dynamic_slice_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Output -> operand: ``d + rt`` with one runtime variable per dimension (the clamped
    start, read from its start-index operand); each start-index operand: its single element."""
    result = info.result(0)
    return [_dynamic_slice_map(info)] + [[scalar_map(info.context, result)]] * (info.num_operands - 1)


def _inverted(entry: Entry, target_shape: Shape) -> Entry:
    """``entry``'s single map inverted over ``target_shape`` (:func:`invert`: its range
    variables are ``entry``'s dimensions then range variables), with each source map
    re-expressed over the inverted map's variables: dimension ``i`` of ``entry`` becomes
    range variable ``i``. A source reading the same element everywhere (a scalar start) keeps
    no range variables, as XLA prints it.

    Example: scatter's update -> output source ``(d0, d1) -> (d0, 0)`` (indices row of
    update row ``d0``) becomes ``(d0, d1)[s0, s1] -> (s0, 0)`` over the output, where
    ``(s0, s1)`` is the update position the map's constraints tie to ``(d0, d1)``."""
    (m,) = entry.maps
    context = m.context
    n_d = m.num_dims
    as_symbols = syms(n_d + len(m.range_vars), context)
    sources = []
    for source in entry.runtime:
        exprs = [ax.substitute(e, as_symbols[:n_d], as_symbols[n_d:]) for e in source.index_map.results]
        if all(ax.constant_value(e) is not None for e in exprs):
            index_map = make_map(context, target_shape, exprs)
        else:
            index_map = make_map(context, target_shape, exprs, list(m.dim_vars) + list(m.range_vars))
        sources.append(RuntimeSource(source.operand, index_map, source.source))
    return Entry((invert(m, target_shape),), tuple(sources))


def dynamic_slice_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand -> output: the inverse of the output -> operand map, its runtime variables read
    at the output positions; a start-index operand contributes to every output element."""
    result = info.result(0)
    if operand_index > 0:
        return [[spread_map(info.context, (), lambda d, s: s, result)]]
    return [_inverted(_dynamic_slice_map(info), info.operand(0))]


def _update_map(info: OpInfo, space: Shape) -> Entry:
    """output -> update: ``d - rt`` where the update covers ``d``."""
    operand, update = info.operand(0), info.operand(1)
    variables, sources = _offsets(info, 2, operand, update, space)
    d, rt = dims(len(space), info.context), syms(len(space), info.context)
    exprs = [a - b for a, b in zip(d, rt)]
    constraints: dict[ir.AffineExpr, Interval] = {e: Interval(0, n - 1) for e, n in zip(exprs, update)}
    return Entry((make_map(info.context, space, exprs, (), variables, constraints),), sources)


def dynamic_update_slice_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Operand: identity (over-approximation: the updated window does not read it)."""
    result = info.result(0)
    identity = make_map(info.context, result, dims(len(result), info.context))
    starts: list[list[IndexingMap]] = [[scalar_map(info.context, result)]] * (info.num_operands - 2)
    return [[identity], _update_map(info, result), *starts]


def dynamic_update_slice_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand -> output: identity (over-approximation: elements under the update are
    overwritten); update -> output: shifted by the runtime start; a start-index operand
    contributes to every output element."""
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


def _window_access(
    info: OpInfo,
    space,
    indices_operand: int,
    space_window_dims,
    operand_window_dims,
    start_dims,
    operand_batching_dims,
    indices_batching_dims,
    index_vector_dim: int,
    window_sizes,
) -> Entry:
    """Map from ``space`` (gather's result, scatter's update) to operand 0: an operand
    window dimension reads the space's window dimension paired with it, plus the runtime
    start ``rt`` (read from ``indices_operand`` at the space's batch position) where it is
    started, clamped to ``[0, operand size - window size]``; a batching dimension reads
    the matching batch position of the space; other dimensions read 0."""
    operand, indices = info.operand(0), info.operand(indices_operand)
    d = dims(len(space), info.context)
    batch_exprs = [d[i] for i in range(len(space)) if i not in space_window_dims]
    indices_batch = [i for i in range(len(indices)) if i != index_vector_dim]
    rt = syms(len(start_dims), info.context)
    variables = [_runtime(indices_operand, 0, operand[i] - window_sizes[i]) for i in start_dims]
    sources = tuple(
        RuntimeSource(indices_operand, _index_map(info, space, batch_exprs, indices, index_vector_dim, k))
        for k in range(len(start_dims))
    )
    exprs = []
    for i in range(len(operand)):
        if i in operand_batching_dims:
            indices_dim = indices_batching_dims[operand_batching_dims.index(i)]
            exprs.append(batch_exprs[indices_batch.index(indices_dim)])
            continue
        expr = d[space_window_dims[operand_window_dims.index(i)]] if i in operand_window_dims else ax.constant(0, info.context)
        if i in start_dims:
            expr = expr + rt[start_dims.index(i)]
        exprs.append(expr)
    return Entry((make_map(info.context, space, exprs, (), variables),), sources)


def _gather_operand_entry(info: OpInfo) -> Entry:
    operand, result = info.operand(0), info.result(0)
    dn = _gather_dimensions(info)
    windowed = [i for i in range(len(operand)) if i not in dn.collapsed_slice_dims and i not in dn.operand_batching_dims]
    return _window_access(
        info, result, 1, dn.offset_dims, windowed, dn.start_index_map, dn.operand_batching_dims,
        dn.start_indices_batching_dims, dn.index_vector_dim, op_attrs.gather_slice_sizes(info.op, dn, operand, result),
    )


def _gather_dimensions(info: OpInfo) -> op_attrs.GatherDimensions:
    return op_attrs.gather_dimensions(info.op, info.operand(0), info.operand(1), info.result(0))


def _gather_indices_map(info: OpInfo, space_is_result: bool):
    indices, result = info.operand(1), info.result(0)
    dn = _gather_dimensions(info)
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


def gather_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Operand: ``offset + rt`` per started dimension; indices: the whole index vector
    of the output's batch position."""
    return [_gather_operand_entry(info), [_gather_indices_map(info, True)]]


def gather_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand -> output: the inverse of the output -> operand map (its runtime offsets read at
    the output positions); start indices -> output: every output element of the index's
    batch position."""
    if operand_index == 1:
        return [[_gather_indices_map(info, False)]]
    return [_inverted(_gather_operand_entry(info), info.operand(0))]


def _scatter_update_entry(info: OpInfo, update_index: int) -> Entry:
    """update -> output: ``window offset + rt`` per scattered dimension."""
    n = (info.num_operands - 1) // 2
    operand, update = info.operand(0), info.operand(update_index)
    dn = op_attrs.scatter_dimensions(info.op, operand, info.operand(n), update)
    windowed = [i for i in range(len(operand)) if i not in dn.inserted_window_dims and i not in dn.input_batching_dims]
    window_sizes = [1] * len(operand)
    for position, i in enumerate(windowed):
        window_sizes[i] = update[dn.update_window_dims[position]]
    return _window_access(
        info, update, n, dn.update_window_dims, windowed, dn.scatter_dims_to_operand_dims, dn.input_batching_dims,
        dn.scatter_indices_batching_dims, dn.index_vector_dim, window_sizes,
    )


def scatter_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Inputs: identity (every input feeds the combiner); indices: all of them
    (over-approximation); updates: the updates whose window covers the output element."""
    n = (info.num_operands - 1) // 2
    result = info.result(result_index)
    identity = make_map(info.context, result, dims(len(result), info.context))
    indices = spread_map(info.context, result, lambda d, s: s, info.operand(n))
    updates = []
    for j in range(n):
        updates.append(_inverted(_scatter_update_entry(info, n + 1 + j), result))
    return [[identity]] * n + [[indices]] + updates


def scatter_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand ``k`` -> output ``k``: identity (over-approximation); scatter indices -> every
    output element; updates -> output: the inverse of the output -> update map, its runtime
    offsets read at the output positions."""
    n = (info.num_operands - 1) // 2
    if operand_index < n:
        shape = info.operand(operand_index)
        return [[make_map(info.context, shape, dims(len(shape), info.context))]] * info.num_results
    if operand_index == n:
        return [[spread_map(info.context, info.operand(n), lambda d, s: s, info.result(r))] for r in range(info.num_results)]
    return [_scatter_update_entry(info, operand_index)] * info.num_results
