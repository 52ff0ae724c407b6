"""The symbolic tile of an indexing map (XLA's ``SymbolicTile::FromIndexingMap``).

Given an indexing map from a tiled index space (``d0..``) to the elements of an operand,
and a tile of the tiled space at offset 0 with sizes ``t0..`` (one per dimension), the
elements the map reads form, per operand dimension ``i``, the strided interval
``offset_i + stride_i * iota(size_i)``, where ``offset``, ``size`` and ``stride`` are
expressions in the tile sizes (``offset`` may use the map's runtime variables, kept
symbolic). That holds only under :class:`~.constraints.ConstraintExpression`
constraints on the tile sizes (e.g. a tile of ``d0 * 8 + d1`` must not leave gaps).

:func:`symbolic_tile` returns a :class:`SymbolicTile` or a :class:`NotATile` saying why
(e.g. ``d0 floordiv d1``, a reshape that cannot be tiled, or, as in XLA, constraints in
the map that are not plain truncations of a result at its upper end). With
``any_constraints`` (option ``allow-pad``, beyond XLA), every constraint is accepted:
constraints only narrow what the map reads (left padding, a convolution's padded window
``d0 + d4 in [1, 32]``), so the tile of the map without them holds it, clipped later to
the operand's bounds; which programs have the tile is decided with their offsets
(:mod:`~.tiled_computation`: a program has it when its box meets the constraints).

Algorithm (the one XLA uses; written from its description): simplify the map; offsets
are the results at dims = 0 and range variables = 0; each result minus its offset is a
sum of strided terms (``d``, ``s`` over ``[0, n)``, ``c * term``, ``d floordiv c``,
``d mod c``, ``(d floordiv c) mod k``); sizes multiply; the stride of a sum is the stride
of its minor-most term whose size is not 1, valid when the sizes follow
``(1*, partial?, full*, 1*)`` from major to minor (terms ordered by the magnitude of
their strides, so reversed dimensions combine too) with the varying terms' strides of
one sign (``-d0 + 3 * d1`` reads 0, -1, -2, 3, 2, 1: no progression), which becomes the
constraints. Terms
that do not nest but all step by one constant (a convolution's output position plus its
window tap, ``d0 + d3``) combine as a window: sizes add, minus one per extra term, the
stride is the common one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.limits import MAX_NESTING_DEPTH
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.symbolic_tiling.constraints import ConstraintExpression

ONE = Interval(1, 1)
ZERO = Interval(0, 0)


@dataclass(frozen=True)
class NotATile:
    """The map's image of a tile is not a tile (or we cannot prove it is): ``reason``."""

    reason: str

    def __str__(self) -> str:
        return f"not a tile: {self.reason}"


@dataclass(frozen=True)
class SymbolicTile:
    """Offsets, sizes and strides of the tile an indexing map reads, as expressions of
    the tile sizes ``d<i>`` (each in ``tile_size_bounds[i]``); offsets may use runtime
    variables ``s<j>`` (bounds in ``runtime_vars``). Valid where ``constraints`` hold."""

    offsets: tuple[ir.AffineExpr, ...]
    sizes: tuple[ir.AffineExpr, ...]
    strides: tuple[ir.AffineExpr, ...]
    tile_size_bounds: tuple[Interval, ...]
    runtime_vars: tuple[Variable, ...]
    constraints: ConstraintExpression

    @property
    def rank(self) -> int:
        """The number of operand dimensions the tile has."""
        return len(self.offsets)

    def evaluate(
        self, tile_sizes: Sequence[int], runtime_values: Sequence[int] = ()
    ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """``(offsets, sizes, strides)`` at concrete tile sizes (and runtime values;
        their lower bounds by default). Strides are evaluated at the sizes clamped to
        their bounds (:meth:`clamped`)."""
        tile_sizes = list(tile_sizes)
        rt = list(runtime_values) or [v.bounds.lower for v in self.runtime_vars]
        offsets = tuple(ax.evaluate(e, tile_sizes, rt) for e in self.offsets)
        sizes = tuple(ax.evaluate(e, tile_sizes, []) for e in self.sizes)
        clamped = self.clamped(tile_sizes)
        strides = tuple(ax.evaluate(e, clamped, []) for e in self.strides)
        return offsets, sizes, strides

    def clamped(self, tile_sizes: Sequence[int]) -> list[int]:
        """``tile_sizes`` with each size above its bound (a tile larger than its
        dimension, e.g. 8 along a dimension of 5) lowered to the bound. The stride of a
        sum (a collapsed or expanded reshape) tests "is this size 1" with an expression
        valid up to the bound; past it the tile holds the whole dimension, as at the
        bound, so strides are evaluated at the clamped sizes (as XLA does)."""
        return [min(t, b.upper) for t, b in zip(tile_sizes, self.tile_size_bounds)]

    def satisfies_constraints(self, tile_sizes: Sequence[int]) -> bool:
        """Whether the tile sizes satisfy :attr:`constraints`."""
        return self.constraints.is_satisfied_by(tile_sizes)

    def _header(self) -> str:
        return "(" + ", ".join(f"d{i}" for i in range(len(self.tile_size_bounds))) + ")"

    def _map_text(self, exprs: Sequence[ir.AffineExpr], with_rt: bool) -> str:
        symbols = ""
        if with_rt and self.runtime_vars:
            symbols = "[" + ", ".join(f"s{j}" for j in range(len(self.runtime_vars))) + "]"
        return f"{self._header()}{symbols} -> (" + ", ".join(str(ax.typed(e)) for e in exprs) + ")"

    def __str__(self) -> str:
        lines = [
            "Symbolic tile with ",
            f"\toffset_map: {self._map_text(self.offsets, True)}",
            f"\tsize_map: {self._map_text(self.sizes, False)}",
            f"\tstride_map: {self._map_text(self.strides, False)}",
        ]
        if self.runtime_vars:
            lines.append("\trt_vars: " + "".join(f"s{j} in {v.bounds}, " for j, v in enumerate(self.runtime_vars)))
        if not self.constraints.is_always_satisfied:
            lines.append(f"\tconstraints: {self.constraints}")
        return "\n".join(lines)


@dataclass(frozen=True)
class _Strided:
    """One strided term: ``size`` values, ``stride`` apart, under ``constraints``."""

    size: ir.AffineExpr
    stride: ir.AffineExpr
    constraints: ConstraintExpression = ConstraintExpression()


class _Failure(Exception):
    pass


def symbolic_tile(
    indexing_map: IndexingMap, *, simplified: bool = False, any_constraints: bool = False
) -> SymbolicTile | NotATile:
    """The symbolic tile of ``indexing_map`` (see the module docstring), or why there is
    none. The map's dimensions are the tiled dimensions; its range variables are read
    whole; its runtime variables stay symbolic in the offsets. ``simplified``: the
    caller knows the map to be its own simplification (it is not simplified again
    unless a dimension has one point, where simplifying widens it). ``any_constraints``:
    accept every constraint of the map, not only XLA's (module docstring)."""
    if indexing_map.is_undefined:
        return NotATile(f"the indexing map is undefined ({indexing_map.reason})")
    if indexing_map.is_known_empty():
        return NotATile("the indexing map's domain is empty")
    own = simplified and not any(v.bounds.is_point for v in indexing_map.dim_vars)
    reduced = indexing_map if own else simplify_preserving_points(indexing_map)
    if reduced.is_known_empty():
        return NotATile("the indexing map's domain is empty")
    deepest = reduced.depth  # remembered per expression across maps
    if deepest > MAX_NESTING_DEPTH:  # the derivation below recurses through the expression
        return NotATile(f"an expression is nested {deepest} levels deep, more than limits.MAX_NESTING_DEPTH ({MAX_NESTING_DEPTH})")
    try:
        if not any_constraints:
            _check_constraints(reduced)
        return _derive(reduced, resimplify=bool(indexing_map.constraints))
    except _Failure as failure:
        return NotATile(str(failure))


def simplify_preserving_points(m: IndexingMap) -> IndexingMap:
    """``m.simplify()``, except that dimensions whose range is one point stay dimensions
    (XLA's ``SimplifyPointDimensions::kPreserve``: a tile size along them is still a
    parameter): they are widened by one for the simplification, which is then still an
    identity on the real domain."""
    if not any(v.bounds.is_point for v in m.dim_vars):
        return m.simplify()  # nothing to widen (simplifying never widens a range)
    widened = [Variable(Interval(v.bounds.lower, v.bounds.lower + 1), v.name, v.origin) if v.bounds.is_point else v for v in m.dim_vars]
    out = m.replace(dims=widened).simplify()
    if out.is_known_empty():
        return out
    return out.replace(dims=[Variable(o.bounds.intersect(w.bounds), w.name, w.origin) for o, w in zip(m.dim_vars, out.dim_vars)])


def _check_constraints(m: IndexingMap) -> None:
    """Constraints are allowed where they depend on runtime variables (an update placed
    at a runtime offset, whatever the expression: a bitcast of the update makes it a sum
    that is no result), or, on a result, where they cut it at its upper end (right
    padding): the tile is then a superset of what the map reads, clipped later by the
    operand's bounds. XLA's own maps carry neither kind for these ops."""
    if not m.constraints:
        return
    results = set(m.results)
    first_runtime = m.num_symbols - len(m.runtime_vars)
    for expr, interval in m.constraints.items():
        dims: set[int] = set()
        symbols: set[int] = set()
        ax.used_variables(expr, dims, symbols)
        if any(s >= first_runtime for s in symbols):
            continue
        if expr not in results:
            raise _Failure(f"the map constrains '{expr}', which is not one of its results "
                           "(allow-pad tiles it without a device)")
        lowest = m.expr_bounds(expr).lower
        if interval.lower > lowest:
            raise _Failure(f"the constraint '{expr} in {interval}' removes the low end of a result "
                           "(left padding; allow-pad tiles it without a device)")


def _derive(m: IndexingMap, *, resimplify: bool) -> SymbolicTile:
    """The tile of ``m``, a simplified map. ``resimplify``: the map it was simplified
    from had constraints. Without any, the simplification rewrote each result alone
    over the same ranges, so a result simplified again over them is itself (the
    simplifier is idempotent, ``python_tests/maps/test_map_algebra_random.py``): a
    result whose offset is 0 is not simplified again (XLA's ``SimplifyAffineExpr`` of
    it, one simplification per result, half of a bitcast's tile)."""
    ctx = m.context
    n_dims, n_range = m.num_dims, len(m.range_vars)
    constrained = bool(m.constraints)
    zero, one = ax.constant(0, ctx), ax.constant(1, ctx)
    # Offsets: dims and range variables at 0 (runtime variables renumbered below).
    zero_dims = [zero] * n_dims
    offset_symbols = [zero] * n_range + [ax.symbol(n_range + j, ctx) for j in range(len(m.runtime_vars))]
    dim_ranges = m.dim_ranges
    symbol_ranges = m.symbol_ranges
    constraints = ConstraintExpression.always()
    offsets: list[ir.AffineExpr] = []
    sizes: list[ir.AffineExpr] = []
    strides: list[ir.AffineExpr] = []
    for result in m.results:
        plain = None if constrained else ax.typed(result)
        if isinstance(plain, ax.Sym) and (plain.position >= n_range or symbol_ranges[plain.position].is_point):
            plain = None  # a runtime variable, or a range variable simplifying folds to its value
        if isinstance(plain, ax.Dim):  # what simplifying would leave: offset 0, the whole tile size, stride 1
            offsets.append(zero)
            sizes.append(plain)
            strides.append(one)
            continue
        if isinstance(plain, ax.Sym):  # offset 0, the variable
            offset, strided = zero, _extract(plain, dim_ranges, symbol_ranges, ctx)
        elif isinstance(plain, ax.Const):  # offset the constant, one element
            offsets.append(plain)
            sizes.append(one)
            strides.append(zero)
            continue
        else:
            offset = ax.substitute(result, zero_dims, offset_symbols)
            if not isinstance(offset, ax.Const):  # a constant simplifies to itself
                offset = _simplify_expr(m, offset)
            strided_expr = ax.add(result, ax.mul(offset, -1))
            if resimplify or strided_expr != result:
                strided_expr = _simplify_expr(m, strided_expr)
            strided = _extract(strided_expr, dim_ranges, symbol_ranges, ctx)
        offsets.append(offset)
        sizes.append(strided.size)
        strides.append(strided.stride)
        constraints = constraints & strided.constraints
    # Renumber the runtime variables of the offsets (symbols n_range.. -> s0..); without
    # range variables the numbering is already that (no rewriting).
    if n_range and m.runtime_vars:
        rt_symbols = [zero] * n_range + ax.symbol_list(len(m.runtime_vars), ctx)
        offset_dims = ax.dim_list(n_dims, ctx)
        offsets = [ax.substitute(e, offset_dims, rt_symbols) for e in offsets]
    bounds = tuple(Interval(r.lower + 1, r.upper + 1) for r in dim_ranges)
    return SymbolicTile(tuple(offsets), tuple(sizes), tuple(strides), bounds, tuple(m.runtime_vars), constraints.simplify())


def _simplify_expr(m: IndexingMap, expr: ir.AffineExpr) -> ir.AffineExpr:
    """``expr`` (over ``m``'s variables) simplified with ``m``'s ranges."""
    single = m.replace(affine_map=ir.AffineMap.get(m.num_dims, m.num_symbols, [expr], m.context))
    out = simplify_preserving_points(single)
    return out.results[0] if not out.is_known_empty() else expr


def _extract(expr: ir.AffineExpr, dims: Sequence[Interval], symbols: Sequence[Interval], ctx: ir.Context) -> _Strided:
    """Size and stride of the values ``expr`` takes over a tile at offset 0."""
    expr = ax.typed(expr)
    if isinstance(expr, ax.Const):
        return _Strided(ax.constant(1, ctx), ax.constant(0, ctx))
    if isinstance(expr, ax.Dim):
        return _Strided(expr, ax.constant(1, ctx))
    if isinstance(expr, ax.Sym):
        interval = symbols[expr.position]
        if interval.lower != 0:
            raise _Failure(f"symbol s{expr.position} does not start at 0 ({interval})")
        return _Strided(ax.constant(interval.upper + 1, ctx), ax.constant(1, ctx))
    if isinstance(expr, ax.Mul):
        factor = ax.constant_value(expr.rhs)
        if factor is None:
            raise _Failure(f"'{expr}' is not a multiple of a constant")
        inner = _extract(expr.lhs, dims, symbols, ctx)
        return _Strided(inner.size, ax.mul(inner.stride, factor), inner.constraints)
    if isinstance(expr, ax.Mod):
        return _extract_mod(expr, dims, symbols, ctx)
    if isinstance(expr, ax.FloorDiv):
        divisor = ax.constant_value(expr.rhs)
        lhs = ax.typed(_without_unit_terms(expr.lhs, dims))
        if divisor is not None and divisor > 0 and isinstance(lhs, ax.Mod) and isinstance(ax.typed(lhs.lhs), ax.Dim):
            modulus = ax.constant_value(lhs.rhs)
            if modulus is not None and modulus > 0 and modulus % divisor == 0:
                # (d mod (c * k)) floordiv c = (d floordiv c) mod k: the simplifier writes a
                # split of a split either way.
                return _extract_mod(ir.AffineModExpr(ax.mod(ax.floordiv(lhs.lhs, divisor), modulus // divisor)), dims, symbols, ctx)
        if divisor is None or not isinstance(lhs, ax.Dim) or divisor <= 0:
            raise _Failure(f"'{expr}' is not a dimension divided by a positive constant")
        return _Strided(ax.floordiv(ax.add(lhs, divisor - 1), divisor), ax.constant(1, ctx))
    if isinstance(expr, ax.Add):
        summands = _summands(expr)
        return _combine([_extract(term, dims, symbols, ctx) for term in summands], dims, ctx, _independent(summands))
    raise _Failure(f"'{expr}' is not a strided expression (ceildiv)")


def _extract_mod(expr: ir.AffineModExpr, dims: Sequence[Interval], symbols: Sequence[Interval], ctx: ir.Context) -> _Strided:
    modulus = ax.constant_value(expr.rhs)
    if modulus is None or modulus <= 0:
        raise _Failure(f"'{expr}' has no positive constant modulus")
    lhs = ax.typed(_without_unit_terms(expr.lhs, dims))
    if isinstance(lhs, ax.Mul) and ax.constant_value(lhs.rhs) and modulus % ax.rhs_constant(lhs) == 0:
        # (c * x) mod (c * k) = c * (x mod k): the simplifier may write it either way.
        factor = ax.rhs_constant(lhs)
        inner = _extract_mod(ir.AffineModExpr(ax.mod(lhs.lhs, modulus // factor)), dims, symbols, ctx)
        return _Strided(inner.size, ax.mul(inner.stride, factor), inner.constraints)
    count: ir.AffineExpr
    if isinstance(lhs, ax.Dim):
        count = lhs
    elif isinstance(lhs, ax.FloorDiv) and isinstance(ax.typed(lhs.lhs), ax.Dim) and (ax.constant_value(lhs.rhs) or 0) > 0:
        divisor = ax.rhs_constant(lhs)
        count = ax.floordiv(ax.add(lhs.lhs, divisor - 1), divisor)
    else:
        raise _Failure(f"'{expr}' is not 'd mod c' or '(d floordiv c) mod k'")
    # n values of x mod k from a tile of n: n if k % n == 0, k if n % k == 0.
    size = ax.add(count, ax.mul(ax.mul(ax.floordiv(ax.add(count, -1), modulus), modulus), -1))
    k = ax.constant(modulus, ctx)
    constraints = ConstraintExpression.of(ax.mod(k, count), ZERO) | ConstraintExpression.of(ax.mod(count, modulus), ZERO)
    return _Strided(size, ax.constant(1, ctx), constraints)


def _without_unit_terms(expr: ir.AffineExpr, dims: Sequence[Interval]) -> ir.AffineExpr:
    """``expr`` without the summands over a dimension of one value, 0 (a unit dimension
    of a bitcast: ``(d0 + d1) mod 2`` with ``d1`` in ``[0, 0]`` is ``d0 mod 2``)."""
    terms = _summands(expr)
    kept = [t for t in terms if not _is_zero_term(t, dims)]
    if len(kept) == len(terms) or not kept:
        return expr
    out = kept[0]
    for term in kept[1:]:
        out = ax.add(out, term)
    return out


def _is_zero_term(term: ir.AffineExpr, dims: Sequence[Interval]) -> bool:
    """Whether ``term`` is ``d`` or ``d * c`` of a dimension whose range is ``[0, 0]``."""
    term = ax.typed(term)
    if isinstance(term, ax.Mul) and ax.constant_value(term.rhs) is not None:
        term = ax.typed(term.lhs)
    return isinstance(term, ax.Dim) and dims[term.position].lower == 0 and dims[term.position].upper == 0


def _is_unit_size(size: ir.AffineExpr, dims: Sequence[Interval]) -> bool:
    """Whether ``size`` is 1 at every tile: the constant 1, or the tile size of a
    dimension whose range is ``[0, 0]``."""
    size = ax.typed(size)
    if isinstance(size, ax.Dim):
        return dims[size.position] == ZERO
    return ax.constant_value(size) == 1


def _summands(expr: ir.AffineExpr) -> list[ir.AffineExpr]:
    expr = ax.typed(expr)
    if isinstance(expr, ax.Add):
        return _summands(expr.lhs) + _summands(expr.rhs)
    return [expr]


def _range_size(size: ir.AffineExpr, dims: Sequence[Interval]) -> int:
    """The largest value of a size that is a constant or a tile size."""
    size = ax.typed(size)
    value = ax.constant_value(size)
    if value is not None:
        return value
    if not isinstance(size, ax.Dim):
        raise _Failure(f"cannot combine a sum whose term has size '{size}'")
    interval = dims[size.position]
    if interval.lower != 0:
        raise _Failure(f"cannot combine a sum over d{size.position}, whose range {interval} does not start at 0")
    return interval.upper + 1


def _if_not_one(value: ir.AffineExpr, then: ir.AffineExpr, otherwise: ir.AffineExpr, upper: int) -> ir.AffineExpr:
    """``then if value != 1 else otherwise`` for ``value`` in ``[1, upper]``:
    ``(upper + 1 - value) floordiv upper`` is 1 exactly when ``value`` is 1."""
    is_one = ax.floordiv(ax.add(ax.mul(value, -1), upper + 1), upper)
    return ax.add(ax.typed(is_one * otherwise), ax.typed(ax.add(ax.mul(is_one, -1), 1) * then))


def _independent(summands: Sequence[ir.AffineExpr]) -> bool:
    """Whether no variable occurs in two of the summands (``d0 + d1``, not
    ``d0 + d0 floordiv 2``)."""
    seen: set[tuple[str, int]] = set()
    for summand in summands:
        dims: set[int] = set()
        symbols: set[int] = set()
        ax.used_variables(summand, dims, symbols)
        used = {("d", i) for i in dims} | {("s", j) for j in symbols}
        if used & seen:
            return False
        seen |= used
    return True


def _combine(terms: list[_Strided], dims: Sequence[Interval], ctx: ir.Context, independent: bool) -> _Strided:
    """Size and stride of a sum of strided terms (see the module docstring); terms over
    distinct variables (``independent``) whose strides do not nest but are all one
    constant combine as a window (:func:`_window_sum`)."""
    constraints = ConstraintExpression.always()
    for term in terms:
        constraints = constraints & term.constraints
    try:
        return _nested_sum(terms, dims, ctx, constraints)
    except _Failure:
        window = _window_sum(terms, constraints) if independent else None
        if window is None:
            raise
        return window


def _window_sum(terms: list[_Strided], constraints: ConstraintExpression) -> _Strided | None:
    """A sum of two or more terms over distinct variables that all step by one nonzero
    constant ``c`` (a convolution's ``d + s``: output position plus window tap): from a
    tile at offset 0, term ``i`` takes every ``0, c, ..., (n_i - 1) * c`` whatever the
    others take, so the sum takes every multiple of ``c`` from 0 to
    ``(sum of n_i - count) * c``: ``sum of n_i - (count - 1)`` values, stride ``c``, under
    the terms' own constraints (XLA's ``CombineSizesAndStrides`` when ``CombineStrides``
    fails; XLA does not ask for distinct variables). None when the strides differ."""
    strides = {ax.constant_value(t.stride) for t in terms}
    if len(terms) < 2 or len(strides) != 1 or None in strides or 0 in strides:
        return None
    size = terms[0].size
    for term in terms[1:]:
        size = ax.add(size, term.size)
    return _Strided(ax.add(size, -(len(terms) - 1)), terms[0].stride, constraints)


def _nested_sum(terms: list[_Strided], dims: Sequence[Interval], ctx: ir.Context, constraints: ConstraintExpression) -> _Strided:
    """A sum whose terms nest: sizes multiply; the stride is the minor-most varying
    term's (see the module docstring)."""
    size = ax.constant(1, ctx)
    for term in terms:
        size = ax.typed(size * term.size)
        if ax.constant_value(term.stride) is None:
            raise _Failure(f"cannot combine the non-constant stride '{term.stride}'")
        if ax.constant_value(term.size) is None and not isinstance(ax.typed(term.size), ax.Dim):
            if all(other is term or _is_unit_size(other.size, dims) for other in terms):
                # The others are over unit dimensions, always 0: the sum is this term
                # (beyond XLA, which refuses the sum).
                return _Strided(term.size, term.stride, constraints)
            raise _Failure(f"cannot combine the size '{term.size}' (neither a constant nor a tile size)")
    # A term over a variable of one value (a unit dimension: a bitcast of 8 to 8x1 reads
    # 'd0 + d1' with d1 in [0, 0]) is always 0: it takes no part in the nesting.
    varying = [t for t in terms if _range_size(t.size, dims) != 1]
    if not varying:
        return _Strided(size, ax.constant(0, ctx), constraints)
    ordered = sorted(varying, key=lambda t: abs(ax.constant_value(t.stride) or 0))
    for previous, current in zip(ordered, ordered[1:]):
        expected = _range_size(previous.size, dims) * abs(ax.constant_value(previous.stride) or 0)
        if expected != abs(ax.constant_value(current.stride) or 0):
            raise _Failure(f"strides of the sum do not nest: {expected} != {current.stride}")
    stride = ax.constant(0, ctx)
    for term in reversed(ordered):
        stride = _if_not_one(term.size, term.stride, stride, _range_size(term.size, dims))
    return _Strided(size, stride, constraints & _sum_constraints(ordered[::-1], dims))


def _sum_constraints(major_first: list[_Strided], dims: Sequence[Interval]) -> ConstraintExpression:
    """Sizes must read, major to minor, ``(1*, partial?, full*, 1*)``, the terms that
    vary (partial and full) stepping in one direction: ``-d0 + 3 * d1`` over a 3x2 tile
    reads 0, -1, -2, 3, 2, 1, no progression, although the magnitudes nest."""
    result = ConstraintExpression.never()
    n = len(major_first)
    positive = [(ax.constant_value(term.stride) or 0) > 0 for term in major_first]
    for partial in range(n):
        for full in range(n - partial):
            if len(set(positive[partial : partial + full + 1])) > 1:
                continue
            conjunction = ConstraintExpression.always()
            try:
                for index, term in enumerate(major_first):
                    if index < partial or index > partial + full:
                        conjunction = conjunction & ConstraintExpression.of(term.size, ONE)
                    elif index > partial:
                        top = _range_size(term.size, dims)
                        conjunction = conjunction & ConstraintExpression.of(term.size, Interval(top, top))
            except _Failure:
                continue
            result = result | conjunction
    return result
