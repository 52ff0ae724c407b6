"""Inversion of indexing maps: the input -> output map of an output -> input map, exact
(:func:`invert`: one range variable per dimension of the map, tied by equalities) or in
the form a hand-written inverse has (:func:`invert_direct`), and the input -> output
rule of an output -> input rule (:func:`inverse_rule`).

Example::

    invert_direct(IndexingMap.parse("(d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 3]"), (4, 3))
    # (d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 2]
"""

from __future__ import annotations

from collections.abc import Callable

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import eliminate_equal_symbols
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.interval import Interval
from hlo_indexing.ops.map_builders import dims, make_map, syms
from hlo_indexing.ops.rule import Entry, OpInfo, RuleResult, Shape, entry_maps


def invert(m: IndexingMap, target_shape: Shape) -> IndexingMap:
    """The inverse relation of ``m`` as a map over ``target_shape`` (the index space
    ``m``'s results live in): ``(x)[d..., s...]{rt...} -> (d...)`` subject to
    ``m(d, s) == x`` and ``m``'s own ranges and constraints. Exact, but with one range
    variable per dimension of ``m`` (the simplifier may remove some)."""
    context = m.context
    if m.is_undefined or m.is_known_empty():
        return m if m.is_undefined else IndexingMap.known_empty(len(target_shape), 0, m.num_dims, context)
    n_x, n_d, n_s = len(target_shape), m.num_dims, len(m.range_vars)
    n_rt = len(m.runtime_vars)
    new_dims = syms(n_d, context)
    new_syms = syms(n_s, context, n_d) + syms(n_rt, context, n_d + n_s)
    x = dims(n_x, context)
    constraints: dict[ir.AffineExpr, Interval] = {}
    for expr, interval in m.constraints.items():
        constraints[ax.substitute(expr, new_dims, new_syms)] = interval
    for i, expr in enumerate(m.results):
        constraints[ax.substitute(expr, new_dims, new_syms) - x[i]] = Interval(0, 0)
    return make_map(
        context,
        target_shape,
        new_dims,
        list(m.dim_vars) + list(m.range_vars),
        list(m.runtime_vars),
        constraints,
    )


def inverse_rule(forward: Callable[[OpInfo, int], RuleResult]) -> Callable[[OpInfo, int], RuleResult]:
    """The input -> output rule of an output -> input rule ``forward``, by inverting its
    maps exactly (:func:`invert`): operand ``k`` -> result ``r`` is the inverse of
    result ``r`` -> operand ``k``, with its note (why it over-approximates). For rules
    whose maps have no runtime variables."""

    def inverse(info: OpInfo, operand_index: int) -> RuleResult:
        out: list[list[IndexingMap] | Entry] = []
        for r in range(info.num_results):
            entry = forward(info, r)[operand_index]
            inverted = [invert_direct(m, info.operand(operand_index)) for m in entry_maps(entry)]
            out.append(Entry(tuple(inverted), note=entry.note) if isinstance(entry, Entry) and entry.note else inverted)
        return out

    return inverse


def _variable_position(expr: ir.AffineExpr, num_dims: int) -> int | None:
    """Position of a plain dimension (``k``) or symbol (``num_dims + k``), else None."""
    expr = ax.typed(expr)
    if isinstance(expr, ax.Dim):
        return expr.position
    if isinstance(expr, ax.Sym):
        return num_dims + expr.position
    return None


def invert_direct(m: IndexingMap, target_shape: Shape) -> IndexingMap:
    """:func:`invert`, with each variable of ``m`` (dimension or range variable) that
    some result of ``m`` is (``(d0, d1)[s0] -> (s0, d1)``: results ``s0`` and ``d1``)
    taken from that result's index instead of a range variable tied to it by an
    equality (and range variables fixed by an equality replaced by their value,
    :func:`~hlo_indexing.maps.algebra.eliminate_equal_symbols`): the same relation, in
    the form a hand-written inverse has."""
    context = m.context
    if m.is_undefined or m.is_known_empty() or m.runtime_vars:
        return invert(m, target_shape)
    x = dims(len(target_shape), context)
    variables = list(m.dim_vars) + list(m.range_vars)
    direct: dict[int, int] = {}  # variable of m -> result position holding it
    for i, expr in enumerate(m.results):
        position = _variable_position(expr, m.num_dims)
        if position is not None and position not in direct:
            direct[position] = i
    free = [k for k in range(len(variables)) if k not in direct]
    replaced, constraints = [], {}
    for k, variable in enumerate(variables):
        if k in direct:
            replaced.append(x[direct[k]])
            if not variable.bounds.contains(Interval.of_size(target_shape[direct[k]])):
                constraints[x[direct[k]]] = variable.bounds
        else:
            replaced.append(ax.symbol(free.index(k), context))
    new_dims, new_syms = replaced[: m.num_dims], replaced[m.num_dims :]
    for expr, interval in m.constraints.items():
        constraints[ax.substitute(expr, new_dims, new_syms)] = interval
    for i, expr in enumerate(m.results):
        position = _variable_position(expr, m.num_dims)
        if position is None or direct.get(position) != i:
            constraints[ax.substitute(expr, new_dims, new_syms) - x[i]] = Interval(0, 0)
    inverse = make_map(context, target_shape, new_dims, [variables[k] for k in free], (), constraints)
    return eliminate_equal_symbols(inverse)
