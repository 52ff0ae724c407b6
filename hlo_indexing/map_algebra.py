"""Operations that restructure indexing maps: composition, removal of unused
variables, symbol rescaling and symbol-to-dimension conversion.

Each function takes and returns :class:`IndexingMap` and preserves the relation
``{(d, f(d, s))}`` (composition builds the relation of the composite)."""

from __future__ import annotations

from hlo_indexing import affine_expr as ax
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.indexing_map import IndexingMap, Variable
from hlo_indexing.interval import Interval


def _affine_map(n_dims: int, n_symbols: int, results, context) -> "ir.AffineMap":
    return ir.AffineMap.get(n_dims, n_symbols, list(results), context)


def compose(consumer: IndexingMap, producer: IndexingMap) -> IndexingMap:
    """``x -> producer(consumer(x))``.

    Symbols of the result, in order: producer range vars, consumer range vars, producer
    runtime vars, consumer runtime vars (XLA's order). The domain is the consumer's;
    constraints are the consumer's, the producer's (with its dimensions replaced by the
    consumer's results) and ``consumer result i in producer dim range i`` where that
    range is not already implied."""
    if consumer.is_undefined:
        return consumer
    if producer.is_undefined:
        return producer
    if consumer.num_results != producer.num_dims:
        raise ValueError(
            f"cannot compose: the consumer has {consumer.num_results} results, the producer {producer.num_dims} dimensions"
        )
    if consumer.is_known_empty() or producer.is_known_empty():
        return IndexingMap.known_empty(
            consumer.num_dims, consumer.num_symbols + producer.num_symbols, producer.num_results, consumer.context
        )
    context = consumer.context
    pr, cr = len(producer.range_vars), len(consumer.range_vars)
    prt, crt = len(producer.runtime_vars), len(consumer.runtime_vars)
    # New symbol positions: [producer ranges | consumer ranges | producer rts | consumer rts].
    producer_symbols = [ax.symbol(i, context) for i in range(pr)] + [ax.symbol(pr + cr + i, context) for i in range(prt)]
    consumer_symbols = [ax.symbol(pr + i, context) for i in range(cr)] + [
        ax.symbol(pr + cr + prt + i, context) for i in range(crt)
    ]
    consumer_dims = [ax.dim(i, context) for i in range(consumer.num_dims)]
    inner_memo: dict = {}
    inner = [ax.substitute(e, consumer_dims, consumer_symbols, inner_memo) for e in consumer.results]
    outer_memo: dict = {}
    results = [ax.substitute(e, inner, producer_symbols, outer_memo) for e in producer.results]
    n_symbols = pr + cr + prt + crt
    composed = IndexingMap._make(
        _affine_map(consumer.num_dims, n_symbols, results, context),
        consumer.dim_vars,
        producer.range_vars + consumer.range_vars,
        producer.runtime_vars + consumer.runtime_vars,
        {},
    )
    for expr, interval in consumer.constraints.items():
        composed = composed.add_constraint(ax.substitute(expr, consumer_dims, consumer_symbols, inner_memo), interval)
    for expr, interval in producer.constraints.items():
        composed = composed.add_constraint(ax.substitute(expr, inner, producer_symbols, outer_memo), interval)
    dim_ranges, symbol_ranges = composed.dim_ranges, composed.symbol_ranges
    for expr, var in zip(inner, producer.dim_vars):
        if not var.bounds.contains(ax.bounds(expr, dim_ranges, symbol_ranges)):
            composed = composed.add_constraint(expr, var.bounds)
    return composed


def _used(m: IndexingMap, include_constraints: bool = True) -> tuple[set[int], set[int]]:
    dims: set[int] = set()
    symbols: set[int] = set()
    for e in m.results:
        ax.used_variables(e, dims, symbols)
    if include_constraints:
        for e in m.constraints:
            ax.used_variables(e, dims, symbols)
    return dims, symbols


def remove_unused_symbols(m: IndexingMap) -> IndexingMap:
    """Drop every symbol that no result uses. A constraint that mentions only such
    symbols is dropped with them when it is satisfiable on its own (checked by
    enumeration when small, otherwise kept with its symbols)."""
    if m.is_undefined or m.is_known_empty():
        return m
    _, used_by_results = _used(m, include_constraints=False)
    keep = set(used_by_results)
    # Symbols tied by constraints to kept variables must stay.
    changed = True
    while changed:
        changed = False
        for e in m.constraints:
            dims: set[int] = set()
            symbols: set[int] = set()
            ax.used_variables(e, dims, symbols)
            if (dims or symbols & keep) and not symbols <= keep:
                keep |= symbols
                changed = True
    if len(keep) == m.num_symbols:
        return m
    dropped_constraints = {}
    for e, c in m.constraints.items():
        dims: set[int] = set()
        symbols: set[int] = set()
        ax.used_variables(e, dims, symbols)
        if not dims and not symbols & keep:
            dropped_constraints[e] = c
    if dropped_constraints and not _satisfiable(m, dropped_constraints):
        return IndexingMap.known_empty(m.num_dims, len(keep), m.num_results, m.context)
    return _keep_symbols(m, sorted(keep), excluded=dropped_constraints)


def _satisfiable(m: IndexingMap, constraints: dict) -> bool:
    """Whether some symbol assignment meets ``constraints`` (which use symbols only)."""
    probe = IndexingMap._make(
        _affine_map(0, m.num_symbols, [], m.context), (), m.range_vars, m.runtime_vars, constraints
    )
    try:
        points, _ = probe.enumerate(max_points=1_000_000)
    except Exception:  # too large to decide: assume satisfiable, as XLA does
        return True
    return len(points) > 0


def _keep_symbols(m: IndexingMap, keep: list[int], excluded: dict | None = None) -> IndexingMap:
    context = m.context
    index = {old: new for new, old in enumerate(keep)}
    zero = ax.constant(0, context)
    replacement = [ax.symbol(index[i], context) if i in index else zero for i in range(m.num_symbols)]
    dims = [ax.dim(i, context) for i in range(m.num_dims)]
    results = [ax.substitute(e, dims, replacement) for e in m.results]
    symbols = m.symbol_vars
    n_range = len(m.range_vars)
    ranges = [symbols[i] for i in keep if i < n_range]
    runtimes = [symbols[i] for i in keep if i >= n_range]
    constraints = {
        ax.substitute(e, dims, replacement): c for e, c in m.constraints.items() if not excluded or e not in excluded
    }
    return IndexingMap._make(_affine_map(m.num_dims, len(keep), results, context), m.dim_vars, ranges, runtimes, constraints)


def remove_unused_dims(m: IndexingMap) -> IndexingMap:
    """Drop every dimension used neither by a result nor by a constraint."""
    if m.is_undefined or m.is_known_empty():
        return m
    used, _ = _used(m)
    keep = sorted(used)
    if len(keep) == m.num_dims:
        return m
    context = m.context
    index = {old: new for new, old in enumerate(keep)}
    zero = ax.constant(0, context)
    replacement = [ax.dim(index[i], context) if i in index else zero for i in range(m.num_dims)]
    symbols = [ax.symbol(i, context) for i in range(m.num_symbols)]
    results = [ax.substitute(e, replacement, symbols) for e in m.results]
    constraints = {ax.substitute(e, replacement, symbols): c for e, c in m.constraints.items()}
    dims = [m.dim_vars[i] for i in keep]
    return IndexingMap._make(
        _affine_map(len(keep), m.num_symbols, results, context), dims, m.range_vars, m.runtime_vars, constraints
    )


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
    memo: dict = {}
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
