"""Operations that restructure indexing maps: composition, removal of unused
variables, symbol rescaling and symbol-to-dimension conversion.

Each function takes and returns :class:`IndexingMap` and preserves the relation
``{(d, f(d, s))}`` (composition builds the relation of the composite). Composition and
the removal of unused symbols, which big modules repeat on the same maps, are
remembered in the maps' memo (:mod:`hlo_indexing.maps.memo`)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import InvalidArgumentError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.linear_form import Linear, build, linearize
from hlo_indexing.maps.memo import EXPRESSION_VARIABLES_TABLE, SATISFIABLE_TABLE, bounded_table, memoized


def _affine_map(n_dims: int, n_symbols: int, results: Iterable[ir.AffineExpr], context: ir.Context) -> ir.AffineMap:
    return ir.AffineMap.get(n_dims, n_symbols, list(results), context)


def compose(consumer: IndexingMap, producer: IndexingMap, *, remember: bool = True) -> IndexingMap:
    """``x -> producer(consumer(x))`` (XLA's ``ComposeIndexingMaps``): ``consumer``'s
    results index ``producer``'s dimensions.

    Symbols of the result, in order: producer range vars, consumer range vars, producer
    runtime vars, consumer runtime vars (XLA's order). The domain is the consumer's;
    constraints are the consumer's, the producer's (with its dimensions replaced by the
    consumer's results) and ``consumer result i in producer dim range i`` where that
    range is not already implied. ``remember=False`` skips the memo (for a caller that
    remembers a whole chain of operations under one entry)."""
    if not remember or consumer.is_undefined:
        return _compose(consumer, producer)
    return memoized(consumer.context, ("compose", consumer.memo_key(), producer.memo_key()), lambda: _compose(consumer, producer))


def _compose(consumer: IndexingMap, producer: IndexingMap) -> IndexingMap:
    if consumer.is_undefined:
        return consumer
    if producer.is_undefined:
        return producer
    if consumer.num_results != producer.num_dims:
        raise InvalidArgumentError(
            f"cannot compose: the consumer has {consumer.num_results} results, the producer {producer.num_dims} dimensions"
        )
    if consumer.is_known_empty() or producer.is_known_empty():
        return IndexingMap.known_empty(
            consumer.num_dims, consumer.num_symbols + producer.num_symbols, producer.num_results, consumer.context
        )
    if producer.is_identity and _results_within(consumer, producer.dim_vars):
        return consumer  # what the general case builds, without building it
    if consumer.is_identity and not producer.constraints and _same_variables(consumer.dim_vars, producer.dim_vars):
        return producer  # likewise: the producer read over its own domain (its first map in a fusion)
    context = consumer.context
    pr, cr = len(producer.range_vars), len(consumer.range_vars)
    prt, crt = len(producer.runtime_vars), len(consumer.runtime_vars)
    # New symbol positions: [producer ranges | consumer ranges | producer rts | consumer rts].
    symbols = ax.symbol_list(pr + cr + prt + crt, context)
    producer_symbols = symbols[:pr] + symbols[pr + cr : pr + cr + prt]
    consumer_symbols = symbols[pr : pr + cr] + symbols[pr + cr + prt :]
    consumer_dims = ax.dim_list(consumer.num_dims, context)
    n_symbols = pr + cr + prt + crt
    # Every symbol of the consumer moves by pr when it lacks runtime variables or the
    # producer does (MLIR's shift_symbols); the producer's symbols keep their places when
    # it lacks runtime variables or the consumer range variables (MLIR's compose).
    place_consumer = _placement(
        consumer, consumer_dims, consumer_symbols, (lambda e: ax.typed(e.shift_symbols(cr + crt, pr))) if prt == 0 or crt == 0 else None
    )
    inner = [place_consumer(e) for e in consumer.results]
    inner_map = _affine_map(consumer.num_dims, n_symbols, inner, context)
    place_producer = _placement(
        producer, inner, producer_symbols, (lambda e: ax.typed(e.compose(inner_map))) if prt == 0 or cr == 0 else None
    )
    results = [place_producer(e) for e in producer.results]
    composed = IndexingMap._make(
        _affine_map(consumer.num_dims, n_symbols, results, context),
        consumer.dim_vars,
        producer.range_vars + consumer.range_vars,
        producer.runtime_vars + consumer.runtime_vars,
        {},
    )
    composed = composed.add_constraints(
        itertools.chain(
            ((place_consumer(expr), c) for expr, c in consumer.constraints.items()),
            ((place_producer(expr), c) for expr, c in producer.constraints.items()),
        )
    )
    dim_ranges, symbol_ranges = composed.dim_ranges, composed.symbol_ranges
    bounds_memo: dict[ir.AffineExpr, Interval] = {}
    return composed.add_constraints(
        (expr, var.bounds)
        for expr, var in zip(inner, producer.dim_vars)
        if not var.bounds.contains(ax.bounds(expr, dim_ranges, symbol_ranges, bounds_memo))
    )


def _placement(
    m: IndexingMap,
    dims: list[ir.AffineExpr],
    symbols: list[ir.AffineExpr],
    native: Callable[[ir.AffineExpr], ir.AffineExpr] | None,
) -> Callable[[ir.AffineExpr], ir.AffineExpr]:
    """``e -> ax.substitute(e, dims, symbols)`` for the expressions of ``m`` (one memo
    for all of them), or ``native``, the same rewrite done by MLIR in C++, when given
    and ``m`` is shallow enough for its recursion
    (:data:`~hlo_indexing.maps.affine_expr.NATIVE_REWRITE_DEPTH`)."""
    if native is not None and m.depth <= ax.NATIVE_REWRITE_DEPTH:
        return native
    memo: dict[ir.AffineExpr, ir.AffineExpr] = {}
    return lambda e: ax.substitute(e, dims, symbols, memo)


def _same_variables(a: tuple[Variable, ...], b: tuple[Variable, ...]) -> bool:
    """Whether two variable lists are equal, names included (equality leaves them out,
    but they are printed)."""
    return a == b and all(x.name == y.name for x, y in zip(a, b))


def _results_within(m: IndexingMap, variables: Iterable[Variable]) -> bool:
    """Whether the range of each result of ``m`` lies in the range of its variable."""
    dim_ranges, symbol_ranges = m.dim_ranges, m.symbol_ranges
    memo: dict[ir.AffineExpr, Interval] = {}
    return all(v.bounds.contains(ax.bounds(e, dim_ranges, symbol_ranges, memo)) for e, v in zip(m.results, variables))


def _select(
    m: IndexingMap, dims: list[int], symbols: list[int], constraints: dict[ir.AffineExpr, Interval], results: bool = True
) -> IndexingMap:
    """The map restricted to the listed dims and symbols (in that order; range variables
    stay before runtime variables), with ``constraints``, and without results when
    ``results`` is false. Dropped variables must not occur in what is kept.

    When the dimensions kept are the first ones (all of them, or none for constraints
    over symbols only) and the listed symbols are exactly those the kept expressions use
    (as :func:`_remove_unused` keeps them), MLIR renumbers the symbols
    (``AffineMap.compress_unused_symbols``, in C++) instead of a walk of each expression
    here, if ``m`` is shallow enough for its recursion
    (:data:`~hlo_indexing.maps.affine_expr.NATIVE_REWRITE_DEPTH`)."""
    context = m.context
    kept_results = m.results if results else []
    exprs = kept_results + list(constraints)
    renamed = None
    if dims == list(range(len(dims))) and m.depth <= ax.NATIVE_REWRITE_DEPTH:
        (compressed,) = ir.AffineMap.compress_unused_symbols([_affine_map(m.num_dims, m.num_symbols, exprs, context)], context)
        if compressed.n_symbols == len(symbols):
            renamed = [ax.typed(e) for e in compressed.results]
    if renamed is None:
        renamed = _renumbered(m, dims, symbols, exprs)
    n_range = len(m.range_vars)
    variables = m.symbol_vars
    return IndexingMap._make(
        _affine_map(len(dims), len(symbols), renamed[: len(kept_results)], context),
        [m.dim_vars[i] for i in dims],
        [variables[i] for i in symbols if i < n_range],
        [variables[i] for i in symbols if i >= n_range],
        dict(zip(renamed[len(kept_results) :], constraints.values())),
    )


def _renumbered(m: IndexingMap, dims: list[int], symbols: list[int], exprs: list[ir.AffineExpr]) -> list[ir.AffineExpr]:
    """``exprs`` (over ``m``'s variables) with the listed dims and symbols numbered in
    that order (the others, which they must not use, replaced by 0)."""
    context = m.context
    zero = ax.constant(0, context)
    dim_index = {old: new for new, old in enumerate(dims)}
    symbol_index = {old: new for new, old in enumerate(symbols)}
    dim_repl = [ax.dim(dim_index[i], context) if i in dim_index else zero for i in range(m.num_dims)]
    sym_repl = [ax.symbol(symbol_index[i], context) if i in symbol_index else zero for i in range(m.num_symbols)]
    memo: dict[ir.AffineExpr, ir.AffineExpr] = {}
    return [ax.substitute(e, dim_repl, sym_repl, memo) for e in exprs]


def _remove_unused(m: IndexingMap, removable_dims: bool, removable_symbols: bool) -> IndexingMap:
    """Drop the removable variables that no result uses and that no constraint ties to a
    used variable. Constraints over dropped variables only are dropped with them when they
    are satisfiable on their own (decided by enumeration; assumed when too large to
    enumerate, as XLA does); when they are not, the map is known empty."""
    if m.is_undefined or m.is_known_empty() or not (removable_dims and m.num_dims or removable_symbols and m.num_symbols):
        return m  # nothing that may go
    keep_dims: set[int] = set(range(m.num_dims)) if not removable_dims else set()
    keep_symbols: set[int] = set(range(m.num_symbols)) if not removable_symbols else set()
    used = bounded_table(m.context, EXPRESSION_VARIABLES_TABLE)  # composed maps share their expressions
    for e in m.results:
        result_dims, result_symbols, _ = ax.remembered_variables(e, used)
        keep_dims.update(result_dims)
        keep_symbols.update(result_symbols)
    if len(keep_dims) == m.num_dims and len(keep_symbols) == m.num_symbols:
        return m  # the results use every variable
    # Each constraint's variables (sorted tuples, shared with the table); the variables
    # tied to kept ones join them until none is added.
    constraint_vars: dict[ir.AffineExpr, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    for e in m.constraints:
        constraint_dims, constraint_symbols, _ = ax.remembered_variables(e, used)
        constraint_vars[e] = (constraint_dims, constraint_symbols)
    pending = list(constraint_vars.values())
    changed = True
    while changed and pending:
        changed = False
        waiting = []
        for dims, symbols in pending:
            if keep_dims.isdisjoint(dims) and keep_symbols.isdisjoint(symbols):
                waiting.append((dims, symbols))  # not tied to a kept variable (yet)
            else:
                keep_dims.update(dims)
                keep_symbols.update(symbols)
                changed = True
        pending = waiting
    if len(keep_dims) == m.num_dims and len(keep_symbols) == m.num_symbols:
        return m
    kept: dict[ir.AffineExpr, Interval] = {}
    detached: dict[ir.AffineExpr, Interval] = {}
    for e, c in m.constraints.items():
        dims, symbols = constraint_vars[e]
        (detached if keep_dims.isdisjoint(dims) and keep_symbols.isdisjoint(symbols) else kept)[e] = c
    out = _select(m, sorted(keep_dims), sorted(keep_symbols), kept)
    if detached and not _satisfiable(m, detached, constraint_vars):
        return IndexingMap.known_empty(out.num_dims, out.num_symbols, out.num_results, m.context)
    return out


#: Enumeration limit of :func:`_satisfiable` over all the variables of the constraints
#: (beyond it they are assumed satisfiable), and the points it enumerates at a time.
SATISFIABILITY_POINTS = 1_000_000
_SATISFIABILITY_CHUNK = 4096


def _satisfiable(
    m: IndexingMap,
    constraints: dict[ir.AffineExpr, Interval],
    constraint_vars: dict[ir.AffineExpr, tuple[tuple[int, ...], tuple[int, ...]]],
) -> bool:
    """Whether some assignment of the variables of ``constraints`` meets them all
    (assumed when they have more than :data:`SATISFIABILITY_POINTS` points together).

    Decided per group of constraints that share variables (independent groups are
    satisfiable together when each is), a constraint that interval bounds decide alone
    skipped, and each group enumerated in chunks that stop at the first solution, so the
    cost is that of the groups, not of their product. The verdict depends on the
    constraints and the ranges of their variables only: it is remembered under them
    (the same constraints meet the same ranges in many compositions)."""
    dims: set[int] = set()
    symbols: set[int] = set()
    for e in constraints:
        dims.update(constraint_vars[e][0])
        symbols.update(constraint_vars[e][1])
    verdicts = bounded_table(m.context, SATISFIABLE_TABLE)
    dim_vars, symbol_vars = m.dim_vars, m.symbol_vars
    key = (
        "detached constraints",
        tuple([(e, c.lower, c.upper) for e, c in constraints.items()]),
        tuple([(i, dim_vars[i].bounds.lower, dim_vars[i].bounds.upper) for i in sorted(dims)]),
        tuple([(i, symbol_vars[i].bounds.lower, symbol_vars[i].bounds.upper) for i in sorted(symbols)]),
    )
    verdict = verdicts.get(key)
    if verdict is None:
        verdict = verdicts[key] = _decide_satisfiable(m, constraints, constraint_vars, dims, symbols)
    return verdict


def _decide_satisfiable(
    m: IndexingMap,
    constraints: dict[ir.AffineExpr, Interval],
    constraint_vars: dict[ir.AffineExpr, tuple[tuple[int, ...], tuple[int, ...]]],
    dims: set[int],
    symbols: set[int],
) -> bool:
    """:func:`_satisfiable` without its memo; ``dims`` and ``symbols`` are the
    variables of ``constraints``."""
    size = 1
    for i in dims:
        size *= m.dim_vars[i].bounds.size
    for i in symbols:
        size *= m.symbol_vars[i].bounds.size
    if size > SATISFIABILITY_POINTS:
        return True
    open_constraints: dict[ir.AffineExpr, Interval] = {}
    for e, interval in constraints.items():
        bounds = m.expr_bounds(e)
        if bounds.upper < interval.lower or bounds.lower > interval.upper:
            return False
        if not (interval.lower <= bounds.lower and bounds.upper <= interval.upper):
            open_constraints[e] = interval
    return all(_group_satisfiable(m, group, constraint_vars) for group in _groups(open_constraints, constraint_vars))


def _groups(
    constraints: dict[ir.AffineExpr, Interval], constraint_vars: dict[ir.AffineExpr, tuple[tuple[int, ...], tuple[int, ...]]]
) -> list[dict[ir.AffineExpr, Interval]]:
    """``constraints`` split into groups that share no variable."""
    groups: list[tuple[set[tuple[str, int]], dict[ir.AffineExpr, Interval]]] = []
    for e, interval in constraints.items():
        variables = {("d", i) for i in constraint_vars[e][0]} | {("s", i) for i in constraint_vars[e][1]}
        joined = {e: interval}
        for group in [g for g in groups if g[0] & variables]:
            groups.remove(group)
            variables |= group[0]
            joined.update(group[1])
        groups.append((variables, joined))
    return [group for _, group in groups]


def _group_satisfiable(
    m: IndexingMap,
    constraints: dict[ir.AffineExpr, Interval],
    constraint_vars: dict[ir.AffineExpr, tuple[tuple[int, ...], tuple[int, ...]]],
) -> bool:
    dims: set[int] = set()
    symbols: set[int] = set()
    for e in constraints:
        dims.update(constraint_vars[e][0])
        symbols.update(constraint_vars[e][1])
    probe = _select(m, sorted(dims), sorted(symbols), constraints, results=False)
    verdicts = bounded_table(m.context, SATISFIABLE_TABLE)  # the same groups recur in many maps
    verdict = verdicts.get(probe)
    if verdict is None:
        verdict = verdicts[probe] = _probe_satisfiable(probe)
    return verdict


def _probe_satisfiable(probe: IndexingMap) -> bool:
    """Whether ``probe`` (a map without results: one group of constraints over its own
    variables) has a point, enumerated in chunks of the first variable's range."""
    variables = list(probe.dim_vars) + list(probe.symbol_vars)
    if not variables:
        return len(probe.enumerate()[0]) > 0
    inner = 1
    for var in variables[1:]:
        inner *= var.bounds.size
    first = variables[0].bounds
    step = max(1, _SATISFIABILITY_CHUNK // inner)
    expr = ax.dim(0, probe.context) if probe.num_dims else ax.symbol(0, probe.context)
    for start in range(first.lower, first.upper + 1, step):
        chunk = probe.add_constraint(expr, (start, min(first.upper, start + step - 1)))
        if not chunk.is_known_empty() and len(chunk.enumerate(SATISFIABILITY_POINTS)[0]):
            return True
    return False


def substitute_symbols(
    m: IndexingMap, symbols: list[ir.AffineExpr], ranges: list[Variable] | None = None
) -> IndexingMap:
    """``m`` with symbol ``k`` replaced by ``symbols[k]`` in its results and constraints
    (and its range variables replaced by ``ranges`` when given). The caller keeps the
    relation: e.g. a symbol replaced by another one equal to it. A constraint that
    becomes a bare variable narrows the variable's range instead; symbols no longer
    used stay (:func:`remove_unused_symbols` drops them)."""
    context = m.context
    dims = ax.dim_list(m.num_dims, context)
    memo: dict[ir.AffineExpr, ir.AffineExpr] = {}
    results = [ax.substitute(e, dims, symbols, memo) for e in m.results]
    constraints = [(ax.substitute(e, dims, symbols, memo), interval) for e, interval in m.constraints.items()]
    return m.replace(
        affine_map=_affine_map(m.num_dims, m.num_symbols, results, context), ranges=ranges, constraints={}
    ).add_constraints(constraints)


def remove_unused_symbols(m: IndexingMap, *, remember: bool = True) -> IndexingMap:
    """Drop every symbol that no result uses and no constraint ties to a used variable.

    ``(d0)[s0, s1] -> (d0 + s1), domain: d0 in [0, 9], s0 in [0, 3], s1 in [0, 1],
    s0 mod 2 in [0, 0]`` becomes ``(d0)[s0] -> (d0 + s0), domain: d0 in [0, 9], s0 in [0, 1]``
    (the constraint on the dropped ``s0`` is satisfiable, so it goes with it).
    ``remember=False`` skips the memo, as for :func:`compose`."""
    if not remember or m.is_undefined:
        return _remove_unused(m, removable_dims=False, removable_symbols=True)
    return memoized(m.context, ("remove_unused_symbols", m.memo_key()), lambda: _remove_unused(m, False, True))


def remove_unused_dims(m: IndexingMap) -> IndexingMap:
    """Drop every dimension that no result uses and no constraint ties to a used variable
    (a constraint on dropped dimensions only goes with them, as in
    :func:`remove_unused_symbols`)."""
    return _remove_unused(m, removable_dims=True, removable_symbols=False)


def remove_unused_variables(m: IndexingMap) -> IndexingMap:
    """XLA's ``RemoveUnusedVars``: :func:`remove_unused_dims` and
    :func:`remove_unused_symbols` at once.

    ``(d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 49], d1 in [0, 59], s0 in [0, 69],
    d0 mod 3 in [0, 0]`` becomes ``(d0)[s0] -> (s0, d0), domain: d0 in [0, 59], s0 in [0, 69]``."""
    return _remove_unused(m, removable_dims=True, removable_symbols=True)


def rescale_symbols(m: IndexingMap) -> IndexingMap:
    """For each range variable ``s`` with a constraint ``s mod k in [r, r]`` (k > 1),
    substitute ``s -> s' * k + r`` and shrink the range of ``s'`` accordingly; the
    constraint disappears. Other variables are unchanged."""
    if m.is_undefined or m.is_known_empty():
        return m
    context = m.context
    n_range = len(m.range_vars)
    replacement = [ax.symbol(i, context) for i in range(m.num_symbols)]
    ranges = list(m.range_vars)
    constraints = dict(m.constraints)
    rescaled: set[int] = set()
    for expr, interval in m.constraints.items():
        if not (isinstance(expr, ax.Mod) and interval.is_point):
            continue
        lhs, divisor = expr.lhs, ax.constant_value(expr.rhs)
        if not isinstance(lhs, ax.Sym) or divisor is None or divisor <= 1:
            continue
        position = lhs.position
        if position >= n_range or position in rescaled:
            continue
        rescaled.add(position)
        shift = interval.lower
        bounds = ranges[position].bounds
        # s = s' * k + shift with s in [lo, hi]  =>  s' in [ceil((lo - shift) / k), floor((hi - shift) / k)]
        new_lower = -((shift - bounds.lower) // divisor)
        new_upper = (bounds.upper - shift) // divisor
        ranges[position] = Variable(Interval(new_lower, new_upper), ranges[position].name)
        replacement[position] = ax.symbol(position, context) * divisor + shift
        del constraints[expr]
        if new_lower > new_upper:
            return IndexingMap.known_empty(m.num_dims, m.num_symbols, m.num_results, context)
    if not rescaled:
        return m
    dims = [ax.dim(i, context) for i in range(m.num_dims)]
    memo: dict[ir.AffineExpr, ir.AffineExpr] = {}
    results = [ax.substitute(e, dims, replacement, memo) for e in m.results]
    out = IndexingMap._make(
        _affine_map(m.num_dims, m.num_symbols, results, context), m.dim_vars, ranges, m.runtime_vars, {}
    )
    for expr, interval in constraints.items():
        out = out.add_constraint(ax.substitute(expr, dims, replacement, memo), interval)
    return out


def convert_symbols_to_dims(m: IndexingMap) -> IndexingMap:
    """Every symbol (range vars, then runtime vars) becomes a trailing dimension."""
    if m.is_undefined or m.is_known_empty():
        return m
    context = m.context
    n = m.num_dims
    dims = [ax.dim(i, context) for i in range(n)]
    symbols = [ax.dim(n + i, context) for i in range(m.num_symbols)]
    results = [ax.substitute(e, dims, symbols) for e in m.results]
    constraints = {ax.substitute(e, dims, symbols): c for e, c in m.constraints.items()}
    new_dims = list(m.dim_vars) + [Variable(v.bounds, v.name) for v in m.symbol_vars]
    return IndexingMap._make(_affine_map(n + m.num_symbols, 0, results, context), new_dims, (), (), constraints)


def convert_range_variables_to_dims(m: IndexingMap, range_vars: list[int]) -> IndexingMap:
    """The listed range variables become trailing dimensions, in the order given; the
    other symbols keep their order (XLA's ``ConvertRangeVariablesToDimensions``).

    ``(d0)[s0, s1] -> (d0 + s0, s1), domain: d0 in [0, 3], s0 in [0, 1], s1 in [0, 2]``
    with ``[1]`` becomes ``(d0, d1)[s0] -> (d0 + s0, d1), domain: d0 in [0, 3],
    d1 in [0, 2], s0 in [0, 1]``."""
    if m.is_undefined or m.is_known_empty():
        return m
    n_range = len(m.range_vars)
    if len(set(range_vars)) != len(range_vars) or any(not 0 <= i < n_range for i in range_vars):
        raise InvalidArgumentError(f"range variables to convert must be distinct indices in [0, {n_range}), got {list(range_vars)}")
    context = m.context
    n = m.num_dims
    remaining = [i for i in range(m.num_symbols) if i not in range_vars]
    dims = [ax.dim(i, context) for i in range(n)]
    symbols = [ax.constant(0, context)] * m.num_symbols
    for k, i in enumerate(range_vars):
        symbols[i] = ax.dim(n + k, context)
    for k, i in enumerate(remaining):
        symbols[i] = ax.symbol(k, context)
    memo: dict[ir.AffineExpr, ir.AffineExpr] = {}
    results = [ax.substitute(e, dims, symbols, memo) for e in m.results]
    constraints = {ax.substitute(e, dims, symbols, memo): c for e, c in m.constraints.items()}
    converted = [Variable(m.range_vars[i].bounds, m.range_vars[i].name) for i in range_vars]
    ranges = [m.range_vars[i] for i in range(n_range) if i not in range_vars]
    return IndexingMap._make(
        _affine_map(n + len(range_vars), len(remaining), results, context),
        list(m.dim_vars) + converted,
        ranges,
        m.runtime_vars,
        constraints,
    )


def _used_elsewhere(terms: dict[ir.AffineExpr, int], atom: ir.AffineExpr, position: int) -> bool:
    """True when symbol ``position`` occurs in a term of ``terms`` other than ``atom``."""
    for other in terms:
        if other != atom:
            dims_used: set[int] = set()
            symbols_used: set[int] = set()
            ax.used_variables(other, dims_used, symbols_used)
            if position in symbols_used:
                return True
    return False


def eliminate_equal_symbols(m: IndexingMap) -> IndexingMap:
    """Replace each range variable that a constraint ``e in [c, c]`` fixes (``e`` a sum
    in which the variable appears once, with coefficient ``+-1``) by its value, keeping
    its range as a constraint on that value: ``(d0)[s0] -> (s0), d0 - s0 in [0, 0]``
    becomes ``(d0) -> (d0)``. The relation is unchanged. One variable at a time, until
    none is fixed (a loop: there may be many). Remembered in the maps' memo (loops ask
    for the same maps at every iteration and for every result)."""
    if m.is_undefined:
        return m
    return memoized(m.context, ("eliminate_equal_symbols", m.memo_key()), lambda: _eliminate_equal_symbols(m))


def _eliminate_equal_symbols(m: IndexingMap) -> IndexingMap:
    while True:
        out = _eliminate_one_equal_symbol(m)
        if out is None:
            return m
        m = out


def _eliminate_one_equal_symbol(m: IndexingMap) -> IndexingMap | None:
    """:func:`eliminate_equal_symbols` for the first fixed variable; None if none is."""
    if m.is_undefined or m.is_known_empty():
        return None
    context = m.context
    for expr, interval in m.constraints.items():
        if interval.lower != interval.upper:
            continue
        form = linearize(expr)
        fixable = [
            (atom, ir.AffineSymbolExpr(atom).position)
            for atom, k in form.terms.items()
            if isinstance(ax.typed(atom), ax.Sym) and k in (1, -1)
        ]
        chosen, position = next(
            ((a, p) for a, p in fixable if p < len(m.range_vars) and not _used_elsewhere(form.terms, a, p)), (None, -1)
        )
        if chosen is None:
            continue
        sign = form.terms[chosen]
        rest = Linear({atom: -k for atom, k in form.terms.items() if atom != chosen}, interval.lower - form.constant)
        value = build(rest, context) * sign
        dims = [ax.dim(i, context) for i in range(m.num_dims)]
        symbols = [ax.symbol(i, context) for i in range(m.num_symbols)]
        symbols[position] = value
        results = [ax.substitute(e, dims, symbols) for e in m.results]
        out = m.replace(affine_map=_affine_map(m.num_dims, m.num_symbols, results, context), constraints={})
        for other, other_interval in m.constraints.items():
            if other != expr:
                out = out.add_constraint(ax.substitute(other, dims, symbols), other_interval)
        out = out.add_constraint(value, m.range_vars[position].bounds)
        return remove_unused_symbols(out.simplify())
    return None
