"""Exact reductions of the range variables of an indexing map, which composition
through chains of windows and padded convolutions multiplies (one window variable per
layer and dimension: a fused map through a ResNet's backward pass carried 22 of them).

Four rewrites of range variables (runtime variables and dimensions are never touched),
each an identity of the relation ``{(d, f(d, s))}``:

* **Merging summed variables.** Range variables ``s_a``, ``s_b`` that occur only
  together, as ``c * (s_a + s_b)`` in every linear sum of the map (results and
  constraints, at every level: a ``mod``'s or a division's numerator is a sum too), are
  one variable ``t = s_a + s_b`` with range ``[a_lo + b_lo, a_hi + b_hi]`` (the sums
  of two integer ranges fill that range). A composed chain of ``k`` valid convolutions
  reads ``d1 + s0 + s3 + ... + s_k``; merged, ``d1 + s0`` with ``s0`` in ``[0, 2k]``.
  A constraint on the merged variable alone narrows its range.
* **Projecting out variables only constraints use.** A range variable ``s`` that no
  result uses only says "the point is read if some value of ``s`` meets the
  constraints": it is existential. When ``s`` is a term ``c * s`` (not inside a ``mod``,
  a division or a product) of every constraint that uses it, it is projected out by
  Fourier-Motzkin elimination, which is exact over the integers when every ``c`` is
  ``+-1`` but in at most one constraint, whose interval is then at least ``|c| - 1``
  wide (the bounds of ``s`` are integers but for that one, which holds an integer by its
  width): written ``c_i * s + r_i in [l_i, h_i]`` (``c_i > 0``) and ``s in [a, b]``,
  some integer ``s`` meets them all exactly when
  ``r_i in [l_i - c_i * b, h_i - c_i * a]`` for each ``i`` and
  ``c_j * r_i - c_i * r_j in [c_j * l_i - c_i * h_j, c_j * h_i - c_i * l_j]`` for each
  pair. Those replace the constraints on ``s``; a new one that the ranges imply is not
  added. Variables are projected one at a time, the one in fewest constraints first; one
  in more than :data:`MAX_CONSTRAINTS_PER_VARIABLE` constraints is kept, and the
  projection is given up when it would leave more constraints than the map had.
* **Absorbing a nested variable.** A padded chain bounds each partial sum of its
  window variables (every intermediate position must lie inside its tensor):
  ``d1 + s5 in [1, 9]``, ``d1 + s3 + s5 in [2, 10]``, ``d1 + s0 + s3 + s5 in [3, 11]``.
  When ``s_a`` occurs only in sums that also hold ``s_b`` with the same coefficient,
  ``t = s_a + s_b`` is a unimodular change of variables: ``s_a``'s range becomes the
  constraint ``t - s_b in [a_lo, a_hi]``, and ``s_b`` stays only where ``s_a`` was
  not. Done when ``s_b`` can then be projected out (one variable fewer); the chain
  above becomes ``d1 + t - 3`` with ``t in [0, 6]``, ``d1 + t in [3, 11]``.
* **Fixing a variable an equality gives.** ``-d0 + s0 in [0, 0]``: ``s0`` is ``d0``
  (:func:`~hlo_indexing.maps.algebra.eliminate_equal_symbols`).

:func:`reduce_range_variables` applies them until none changes the map (each step
removes a variable).

Example::

    m = IndexingMap.parse("(d0)[s0, s1, s2] -> (d0 + s0 + s1), domain: d0 in [0, 9], "
                          "s0 in [0, 2], s1 in [0, 2], s2 in [0, 31], s0 + s2 in [1, 32]")
    reduce_range_variables(m)
    # (d0)[s0] -> (d0 + s0), domain: d0 in [0, 9], s0 in [0, 4]
"""

from __future__ import annotations

import itertools
from typing import Any

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import eliminate_equal_symbols, remove_unused_symbols, substitute_symbols
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.linear_form import Linear, build, linearize
from hlo_indexing.maps.memo import EXPRESSION_VARIABLES_TABLE, LINEAR_FORMS_TABLE, bounded_table, memoized

#: Most constraints one projected variable may be in (they give ``k (k + 1) / 2`` new ones).
MAX_CONSTRAINTS_PER_VARIABLE = 6


def reduce_range_variables(m: IndexingMap) -> IndexingMap:
    """``m`` with summed range variables merged, nested ones absorbed and those only
    constraints use projected out, until none applies (see the module docstring); ``m``
    itself when none does. Remembered in the maps' memo."""
    if m.is_undefined or m.is_known_empty() or not m.range_vars:
        return m
    return memoized(m.context, ("reduce_range_variables", m.memo_key()), lambda: _reduced(m))


def _reduced(m: IndexingMap) -> IndexingMap:
    if any(interval.is_point for interval in m.constraints.values()):
        m = eliminate_equal_symbols(m)
    out = m
    while out.range_vars:
        exprs = list(out.results) + list(out.constraints)
        signatures = _expressions_of(out, exprs)
        reduced = out
        if len(set(signatures)) < len(signatures):
            reduced = merge_summed_variables(out)
        if reduced is out and out.constraints and any(min(found) >= out.num_results for found in signatures):
            reduced = project_constraint_variables(out)
        if reduced is out and out.constraints and _nested(signatures):
            reduced = absorb_nested_variable(out)
        if reduced is out or reduced.is_known_empty():
            return reduced
        out = reduced
    return out


def merge_summed_variables(m: IndexingMap) -> IndexingMap:
    """``m`` with every group of range variables that occur only together, with equal
    coefficients in each linear sum, merged into one (see the module docstring)."""
    if m.is_undefined or m.is_known_empty() or len(m.range_vars) < 2:
        return m
    exprs = list(m.results) + list(m.constraints)
    coefficients: dict[int, list[tuple[int, int]]] = {k: [] for k in range(len(m.range_vars))}
    for index, (_, form) in enumerate(_sums(exprs)):
        for atom, c in form.terms.items():
            node = ax.typed(atom)
            if type(node) is ax.Sym and node.position in coefficients:
                coefficients[node.position].append((index, c))
    groups: dict[tuple[tuple[int, int], ...], list[int]] = {}
    for position, signature in coefficients.items():
        if signature:
            groups.setdefault(tuple(signature), []).append(position)
    merged = [positions for positions in groups.values() if len(positions) > 1]
    if not merged:
        return m
    context = m.context
    symbols = [ax.symbol(k, context) for k in range(m.num_symbols)]
    ranges = list(m.range_vars)
    zero = ax.constant(0, context)
    for first, *rest in merged:
        low = ranges[first].bounds.lower + sum(ranges[k].bounds.lower for k in rest)
        high = ranges[first].bounds.upper + sum(ranges[k].bounds.upper for k in rest)
        ranges[first] = Variable(Interval(low, high), ranges[first].name, ranges[first].origin)
        for k in rest:
            symbols[k] = zero
    # a constraint on a merged variable alone narrows its range
    return remove_unused_symbols(substitute_symbols(m, symbols, ranges), remember=False)


def absorb_nested_variable(m: IndexingMap) -> IndexingMap:
    """``m`` with one range variable fewer, when some ``s_a`` occurs only in sums that also
    hold ``s_b`` with the same coefficient (at any level: a ``mod``'s numerator too):
    with ``t = s_a + s_b`` (a unimodular change of variables), ``s_a``'s range becomes the
    constraint ``t - s_b in [a_lo, a_hi]`` and ``s_b`` is left where ``s_a`` was not; when
    that is constraints only, ``s_b`` is projected out
    (:func:`project_constraint_variables`). ``m`` itself when no pair allows it."""
    if m.is_undefined or m.is_known_empty() or len(m.range_vars) < 2 or not m.constraints:
        return m
    exprs = list(m.results) + list(m.constraints)
    occurrences: dict[int, dict[int, int]] = {k: {} for k in range(len(m.range_vars))}
    constraint_sums: set[int] = set()  # the sums that are whole constraints
    owners: set[int] = set()
    for index, (owner, form) in enumerate(_sums(exprs)):
        if owner not in owners:
            owners.add(owner)
            if owner >= m.num_results:
                constraint_sums.add(index)
        for atom, c in form.terms.items():
            node = ax.typed(atom)
            if type(node) is ax.Sym and node.position in occurrences:
                occurrences[node.position][index] = c
    for a, in_a in occurrences.items():
        if not in_a:
            continue
        for b, in_b in occurrences.items():
            if b == a or len(in_b) <= len(in_a) or len(in_b) - len(in_a) >= MAX_CONSTRAINTS_PER_VARIABLE:
                continue
            if any(in_b.get(index) != c for index, c in in_a.items()):
                continue  # not always with ``s_a``
            left = [(index, c) for index, c in in_b.items() if index not in in_a]
            if any(index not in constraint_sums for index, _ in left) or sum(c not in (1, -1) for _, c in left) > 1:
                continue  # ``s_b`` would stay where it cannot be projected out
            reduced = project_constraint_variables(_absorbed(m, a, b))
            if reduced.num_symbols < m.num_symbols or reduced.is_known_empty():
                return reduced
    return m


def _absorbed(m: IndexingMap, a: int, b: int) -> IndexingMap:
    """``m`` with ``s_a`` standing for ``s_a + s_b``: ``s_b`` dropped from every sum that
    holds ``s_a``, and ``s_a - s_b in`` ``s_a``'s old range."""
    context = m.context
    symbol_a, symbol_b = ax.symbol(a, context), ax.symbol(b, context)
    memo: dict[ir.AffineExpr, ir.AffineExpr] = {}
    results = [_without_partner(e, symbol_a, symbol_b, memo) for e in m.results]
    constraints = [(_without_partner(e, symbol_a, symbol_b, memo), i) for e, i in m.constraints.items()]
    ranges = list(m.range_vars)
    old = ranges[a].bounds
    ranges[a] = Variable(old + ranges[b].bounds, ranges[a].name, ranges[a].origin)
    constraints.append((ax.add(symbol_a, ax.mul(symbol_b, -1)), old))
    return m.replace(
        affine_map=ir.AffineMap.get(m.num_dims, m.num_symbols, results, context), ranges=ranges, constraints={}
    ).add_constraints(constraints)


def _without_partner(
    expr: ir.AffineExpr, symbol_a: ir.AffineExpr, symbol_b: ir.AffineExpr, memo: dict[ir.AffineExpr, ir.AffineExpr]
) -> ir.AffineExpr:
    """``expr`` with ``symbol_b``'s term dropped from each of its sums (at every level)
    that holds ``symbol_a``."""
    found = memo.get(expr)
    if found is None:
        form = _linear_form(expr)
        out = Linear(constant=form.constant)
        for atom, c in form.terms.items():
            node: Any = ax.typed(atom)  # typed by the bindings: dispatch on its class
            if type(node) is not ax.Sym and type(node) is not ax.Dim:
                atom = ax.rebuild(
                    node,
                    _without_partner(node.lhs, symbol_a, symbol_b, memo),
                    _without_partner(node.rhs, symbol_a, symbol_b, memo),
                )
            out.add(atom, c)
        if symbol_a in out.terms:
            out.terms.pop(symbol_b, None)
        found = memo[expr] = build(out, symbol_a.context)
    return found


def _expressions_of(m: IndexingMap, exprs: list[ir.AffineExpr]) -> list[frozenset[int]]:
    """Per range variable that occurs somewhere, the indices of the expressions holding it
    (read from the memo of each expression's variables): whether a rewrite may apply."""
    used = bounded_table(m.context, EXPRESSION_VARIABLES_TABLE)
    occurrences: dict[int, list[int]] = {}
    n_range = len(m.range_vars)
    for index, e in enumerate(exprs):
        for k in ax.remembered_variables(e, used)[1]:
            if k < n_range:
                occurrences.setdefault(k, []).append(index)
    return [frozenset(found) for found in occurrences.values()]


def _nested(signatures: list[frozenset[int]]) -> bool:
    """Whether the expressions of one range variable are some of another's (necessary
    for :func:`absorb_nested_variable`)."""
    ordered = sorted(set(signatures), key=len)
    return any(a < b for i, a in enumerate(ordered) for b in ordered[i + 1 :])


def _linear_form(expr: ir.AffineExpr) -> Linear:
    """:func:`~hlo_indexing.maps.linear_form.linearize` of ``expr``, remembered in its
    context (composed maps share their expressions). Read only: never modify it."""
    table = bounded_table(expr.context, LINEAR_FORMS_TABLE)
    found = table.get(expr)
    if found is None:
        found = table[expr] = linearize(expr)
    return found


def _sums(exprs: list[ir.AffineExpr]) -> list[tuple[int, Linear]]:
    """The linear form of each expression and, recursively, of the operands of each of
    their atoms that is not a variable (a ``mod``'s or a division's numerator and
    divisor), in a fixed order; each with the index of the expression it is part of."""
    forms: list[tuple[int, Linear]] = []
    pending = [(index, e) for index, e in reversed(list(enumerate(exprs)))]
    while pending:
        owner, expr = pending.pop()
        form = _linear_form(expr)
        forms.append((owner, form))
        for atom in form.terms:
            node: Any = ax.typed(atom)  # typed by the bindings: dispatch on its class
            if type(node) is not ax.Sym and type(node) is not ax.Dim:
                pending.append((owner, node.rhs))
                pending.append((owner, node.lhs))
    return forms


def project_constraint_variables(m: IndexingMap) -> IndexingMap:
    """``m`` without the range variables that only constraints use and that can be
    projected out exactly (see the module docstring); ``m`` itself when none can."""
    if m.is_undefined or m.is_known_empty() or not m.constraints or not m.range_vars:
        return m
    used = bounded_table(m.context, EXPRESSION_VARIABLES_TABLE)
    in_results: set[int] = set()
    for e in m.results:
        in_results.update(ax.remembered_variables(e, used)[1])
    candidates = [k for k in range(len(m.range_vars)) if k not in in_results]
    if not candidates:
        return m
    context = m.context
    dim_ranges, symbol_ranges = m.dim_ranges, list(m.symbol_ranges)
    constraints: dict[ir.AffineExpr, Interval] = dict(m.constraints)
    projected = False
    while True:
        choice = _next_variable(constraints, candidates, used)
        if choice is None:
            break
        position, involved = choice
        candidates.remove(position)
        forms = _projection_forms({e: constraints[e] for e in involved}, position, context)
        if forms is None:
            continue
        for e in involved:
            del constraints[e]
        bounds_memo: dict[ir.AffineExpr, Interval] = {}
        for expr, interval in _shadow(forms, symbol_ranges[position], context):
            constant = ax.constant_value(expr)
            if constant is not None:
                if not interval.contains(constant):
                    return IndexingMap.known_empty(m.num_dims, m.num_symbols, m.num_results, context)
            elif not interval.contains(ax.bounds(expr, dim_ranges, symbol_ranges, bounds_memo)):
                previous = constraints.get(expr)
                constraints[expr] = interval if previous is None else previous.intersect(interval)
        projected = True
    if not projected:
        return m
    narrowed = m.replace(constraints={}).add_constraints(constraints.items())  # a bare variable narrows its range
    if len(narrowed.constraints) > len(m.constraints):
        return m
    return remove_unused_symbols(narrowed, remember=False)


def _next_variable(
    constraints: dict[ir.AffineExpr, Interval], candidates: list[int], used: dict[Any, Any]
) -> tuple[int, list[ir.AffineExpr]] | None:
    """The candidate in the fewest constraints (at least one, at most
    :data:`MAX_CONSTRAINTS_PER_VARIABLE`), with those constraints; None when none is left."""
    by_variable: dict[int, list[ir.AffineExpr]] = {k: [] for k in candidates}
    for e in constraints:
        for k in ax.remembered_variables(e, used)[1]:
            found = by_variable.get(k)
            if found is not None:
                found.append(e)
    eligible = [(len(es), k) for k, es in by_variable.items() if 0 < len(es) <= MAX_CONSTRAINTS_PER_VARIABLE]
    if not eligible:
        return None
    _, position = min(eligible)
    return position, by_variable[position]


def _projection_forms(
    involved: dict[ir.AffineExpr, Interval], position: int, context: ir.Context
) -> list[tuple[int, Linear, Interval]] | None:
    """Each constraint written ``c * s + r in [l, h]`` with ``c > 0``: ``c``, the linear
    form of ``r`` (no constant: it moves into the interval) and ``[l, h]``; None when the
    projection would not be exact: ``s`` inside a ``mod``, a division or a product, or
    more than one constraint with ``c > 1``, or one whose interval is narrower than
    ``c - 1`` (then some ``r`` between two multiples of ``c`` has no integer ``s``)."""
    symbol = ax.symbol(position, context)
    forms = []
    for e, interval in involved.items():
        form = _linear_form(e)
        coefficient = form.terms.get(symbol, 0)
        if not coefficient:
            return None
        sign = 1 if coefficient > 0 else -1
        rest = Linear({atom: sign * c for atom, c in form.terms.items() if atom != symbol})
        for atom in rest.terms:
            symbols: set[int] = set()
            ax.used_variables(atom, set(), symbols)
            if position in symbols:
                return None
        low, high = (interval.lower, interval.upper) if sign == 1 else (-interval.upper, -interval.lower)
        forms.append((abs(coefficient), rest, Interval(low - sign * form.constant, high - sign * form.constant)))
    scaled = [(c, i) for c, _, i in forms if c > 1]
    if len(scaled) > 1 or any(i.upper - i.lower < c - 1 for c, i in scaled):
        return None
    return forms


def _shadow(
    forms: list[tuple[int, Linear, Interval]], bounds: Interval, context: ir.Context
) -> list[tuple[ir.AffineExpr, Interval]]:
    """The constraints that hold exactly when some integer ``s`` in ``bounds`` meets every
    ``c_i * s + r_i in [l_i, h_i]`` of ``forms`` (at most one ``c_i > 1``: the real shadow
    is the integer one, :func:`_projection_forms`): per constraint,
    ``r_i in [l_i - c_i * b, h_i - c_i * a]``; per pair,
    ``c_j * r_i - c_i * r_j in [c_j * l_i - c_i * h_j, c_j * h_i - c_i * l_j]``."""
    out = [
        (build(rest, context), Interval(i.lower - c * bounds.upper, i.upper - c * bounds.lower)) for c, rest, i in forms
    ]
    for (c_i, rest_i, i), (c_j, rest_j, j) in itertools.combinations(forms, 2):
        combination = Linear()
        combination.add_linear(rest_i, c_j)
        combination.add_linear(rest_j, -c_i)
        out.append((build(combination, context), Interval(c_j * i.lower - c_i * j.upper, c_j * i.upper - c_i * j.lower)))
    return out
