"""Piecewise-affine integer functions of a Pallas grid: the values an index map computes.

A Pallas index map is integer code over the grid indices (``+ - * // %``, ``min``/``max``,
comparisons and ``select``, scalars read from prefetched arrays), read from its jaxpr
(:mod:`hlo_indexing.pallas.index_maps`) or from the Mosaic kernel of an exported call
(:mod:`hlo_indexing.ops.mosaic_index_functions`). Each value it computes
is held here as :data:`Cases`: a tuple of ``(region, value)`` pairs whose regions are
disjoint and cover the whole :class:`Space`, each value an affine expression of the grid
indices (``d0, d1, ...``) and *unknowns* (``s0, s1, ...``: values the analysis cannot
follow, such as a prefetched scalar) or a truth value. A :class:`Region` is what an
:class:`~hlo_indexing.maps.indexing_map.IndexingMap` needs as a domain: narrowed variable
ranges and constraints ``expr in [lo, hi]``; a comparison of two affine values splits a
region in two (``b - a >= 1`` and ``b - a <= 0``), a ``select`` then takes one side per
region. Splits that the ranges decide are not made, regions the ranges prove empty are
dropped, and a value equal on every region becomes one case again.

Arithmetic follows XLA's integer semantics (``div``/``rem`` round toward zero, which
``jnp``'s ``//`` and ``%`` correct with a sign test: that test is interpreted like any
other, so ``i // 2`` on a grid index ends as ``d0 floordiv 2``). Values are exact
integers: int32 wrap-around is not modelled (index maps of real kernels stay far from it;
an operand whose block index may leave the int32 range is reported not decided).
A value with more than :data:`~hlo_indexing.limits.MAX_INDEX_MAP_CASES` cases, or an
operation outside affine arithmetic (the product of two grid-dependent values, a division
by one), becomes a new unknown, named by what it came from: the checks then say what
they could not decide instead of guessing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Union

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.limits import INT64_MAX, INT64_MIN, MAX_INDEX_MAP_CASES
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.linear_form import linearize

#: The value of one case: an affine expression or a truth value.
Value = Union[ir.AffineExpr, bool]

#: Bounds of an unknown 32-bit integer (prefetched scalars are int32).
INT32_RANGE = Interval(-(2**31), 2**31 - 1)
_AT_LEAST_ONE = Interval(1, INT64_MAX)
_AT_LEAST_ZERO = Interval(0, INT64_MAX)
_AT_MOST_ZERO = Interval(INT64_MIN, 0)
_AT_MOST_MINUS_ONE = Interval(INT64_MIN, -1)
_ZERO = Interval(0, 0)


class TooManyCases(Exception):
    """A value would have more than :data:`MAX_INDEX_MAP_CASES` cases (internal: the
    interpreter turns the value into an unknown)."""


@dataclass(frozen=True)
class Unknown:
    """An integer the analysis cannot follow (symbol ``s<position>``): its range and
    what it is (``"scalar-prefetch operand 0 read at [i]"``)."""

    bounds: Interval
    origin: str


@dataclass(frozen=True)
class Region:
    """A part of the space: the range of every dimension, the ranges of the unknowns
    narrowed so far (``(position, interval)``, the others keep their own bounds) and
    constraints ``expr in interval`` over any variables."""

    dims: tuple[Interval, ...]
    symbols: tuple[tuple[int, Interval], ...] = ()
    constraints: tuple[tuple[ir.AffineExpr, Interval], ...] = ()


#: A value over the whole space: disjoint regions covering it, one value each.
Cases = tuple[tuple[Region, Value], ...]


class Space:
    """The grid (dimension ``d_k`` in ``[0, grid[k] - 1]``) and the unknowns met so
    far; the operations on :data:`Cases` live here since bounds need both."""

    def __init__(self, grid: Sequence[int], context: ir.Context):
        self.context = context
        self.dim_ranges = tuple(Interval(0, n - 1) for n in grid)
        self.unknowns: list[Unknown] = []
        self.whole = Region(self.dim_ranges)

    # ------------------------------------------------------------------ values

    def constant(self, value: int | bool) -> Cases:
        """A constant over the whole space."""
        if isinstance(value, bool):
            return ((self.whole, value),)
        return ((self.whole, ax.constant(int(value), self.context)),)

    def dim(self, position: int) -> Cases:
        """The grid index ``d<position>``."""
        return ((self.whole, ax.dim(position, self.context)),)

    def unknown(self, origin: str, bounds: Interval = INT32_RANGE) -> Cases:
        """A new unknown integer (a fresh symbol)."""
        self.unknowns.append(Unknown(bounds, origin))
        return ((self.whole, ax.symbol(len(self.unknowns) - 1, self.context)),)

    def unknown_bool(self, origin: str) -> Cases:
        """A new unknown truth value: ``u >= 1`` of a new unknown ``u`` in ``[0, 1]``."""
        ((_, u),) = self.unknown(origin, Interval(0, 1))
        assert not isinstance(u, bool)
        return tuple(self.split(self.whole, u, Interval(1, 1)))

    # ------------------------------------------------------------------ regions

    def symbol_ranges(self, region: Region) -> list[Interval]:
        """The range of every unknown in ``region``."""
        ranges = [u.bounds for u in self.unknowns]
        for position, bounds in region.symbols:
            ranges[position] = bounds
        return ranges

    def bounds(self, region: Region, expr: ir.AffineExpr) -> Interval:
        """An interval holding every value of ``expr`` over ``region``'s ranges (its
        constraints are not used: sound, maybe loose)."""
        return ax.bounds(expr, region.dims, self.symbol_ranges(region))

    def restrict(self, region: Region, expr: ir.AffineExpr, interval: Interval) -> Region | None:
        """``region`` where ``expr`` lies in ``interval``; None when the ranges prove it
        empty. A bound on a bare variable narrows its range; one the ranges imply is not
        kept."""
        expr = ax.typed(expr)
        if isinstance(expr, ax.Const):
            return region if interval.contains(expr.value) else None
        bounds = self.bounds(region, expr)
        narrowed = bounds.intersect(interval)
        if narrowed.is_empty:
            return None
        if narrowed == bounds:
            return region
        single = _single_variable(expr)
        if single is not None:
            variable, coefficient, offset = single
            return self._narrow(region, variable, _solve(coefficient, offset, narrowed))
        constraints = dict(region.constraints)
        previous = constraints.get(expr)
        constraints[expr] = narrowed if previous is None else previous.intersect(narrowed)
        if constraints[expr].is_empty:
            return None
        return Region(region.dims, region.symbols, tuple(constraints.items()))

    def _narrow(self, region: Region, variable: ir.AffineDimExpr | ir.AffineSymbolExpr, interval: Interval) -> Region | None:
        """``region`` with the range of one dimension or unknown intersected with ``interval``."""
        if isinstance(variable, ax.Dim):
            dims = list(region.dims)
            dims[variable.position] = dims[variable.position].intersect(interval)
            if dims[variable.position].is_empty:
                return None
            return self._recheck(Region(tuple(dims), region.symbols, region.constraints))
        symbols = dict(region.symbols)
        position = variable.position
        current = symbols.get(position, self.unknowns[position].bounds).intersect(interval)
        if current.is_empty:
            return None
        symbols[position] = current
        return self._recheck(Region(region.dims, tuple(sorted(symbols.items())), region.constraints))

    def _recheck(self, region: Region) -> Region | None:
        """``region`` after a range narrowed: None when a constraint became impossible;
        constraints the ranges now imply are dropped."""
        kept = []
        for expr, interval in region.constraints:
            bounds = self.bounds(region, expr)
            if bounds.intersect(interval).is_empty:
                return None
            if not interval.contains(bounds):
                kept.append((expr, interval))
        return Region(region.dims, region.symbols, tuple(kept))

    def meet(self, first: Region, second: Region) -> Region | None:
        """The intersection of two regions (None when the ranges prove it empty)."""
        if first is second or second is self.whole:
            return first
        if first is self.whole:
            return second
        region: Region | None = first
        for position, bounds in enumerate(second.dims):
            if region is None:
                return None
            if bounds != self.dim_ranges[position]:
                region = self.restrict(region, ax.dim(position, self.context), bounds)
        for position, bounds in second.symbols:
            if region is None:
                return None
            region = self.restrict(region, ax.symbol(position, self.context), bounds)
        for expr, interval in second.constraints:
            if region is None:
                return None
            region = self.restrict(region, expr, interval)
        return region

    # ------------------------------------------------------------------ combining

    def apply(self, arguments: Sequence[Cases], rule: Callable[..., list[tuple[Region, Value]]]) -> Cases:
        """``rule(region, *values)`` on every combination of the arguments' cases whose
        regions meet; ``rule`` returns the cases of the result in that region (it may
        split it). Raises :class:`TooManyCases` past the limit."""
        combos: list[tuple[Region, tuple[Value, ...]]] = [(self.whole, ())]
        for argument in arguments:
            grown = []
            for region, values in combos:
                for case_region, value in argument:
                    met = self.meet(region, case_region)
                    if met is not None:
                        grown.append((met, values + (value,)))
            if len(grown) > MAX_INDEX_MAP_CASES:
                raise TooManyCases()
            combos = grown
        result: list[tuple[Region, Value]] = []
        for region, values in combos:
            result.extend(rule(region, *values))
            if len(result) > MAX_INDEX_MAP_CASES:
                raise TooManyCases()
        return self.merged(result)

    def merged(self, cases: list[tuple[Region, Value]]) -> Cases:
        """The cases with each value rewritten where a variable's range is one point,
        then neighbours merged: two cases with the same value whose regions differ only
        in adjacent ranges of one variable become one; one case over the whole space
        when every value is the same (the regions of a value always cover the space)."""
        cases = [(region, self._pinned(region, value)) for region, value in cases]
        first = cases[0][1]
        if all(_same(value, first) for _, value in cases[1:]):
            return ((self.whole, first),)
        changed = True
        while changed and len(cases) > 1:
            changed = False
            for i in range(len(cases)):
                for j in range(i + 1, len(cases)):
                    if _same(cases[i][1], cases[j][1]):
                        union = _adjacent_union(cases[i][0], cases[j][0])
                        if union is not None:
                            cases[i] = (union, cases[i][1])
                            del cases[j]
                            changed = True
                            break
                if changed:
                    break
        return tuple(cases)

    def _pinned(self, region: Region, value: Value) -> Value:
        """``value`` with the variables whose range in ``region`` is a single point
        replaced by that point."""
        if isinstance(value, bool):
            return value
        if isinstance(value, tuple):  # a tuple of values (the block indices of one piece)
            return tuple(self._pinned(region, v) for v in value)
        symbol_ranges = self.symbol_ranges(region)
        if not any(r.is_point for r in region.dims) and not any(r.is_point for r in symbol_ranges):
            return value
        dims = [ax.constant(r.lower, self.context) if r.is_point else ax.dim(k, self.context) for k, r in enumerate(region.dims)]
        symbols = [ax.constant(r.lower, self.context) if r.is_point else ax.symbol(k, self.context) for k, r in enumerate(symbol_ranges)]
        return ax.substitute(value, dims, symbols)

    def split(self, region: Region, expr: ir.AffineExpr, interval: Interval) -> list[tuple[Region, Value]]:
        """``region`` split by whether ``expr`` lies in ``interval`` (True inside, False
        outside, below and above); parts the ranges prove empty are left out."""
        parts: list[tuple[Region, Value]] = []
        inside = self.restrict(region, expr, interval)
        if inside is not None:
            parts.append((inside, True))
        if interval.lower > INT64_MIN:
            below = self.restrict(region, expr, Interval(INT64_MIN, interval.lower - 1))
            if below is not None:
                parts.append((below, False))
        if interval.upper < INT64_MAX:
            above = self.restrict(region, expr, Interval(interval.upper + 1, INT64_MAX))
            if above is not None:
                parts.append((above, False))
        return parts

    # ------------------------------------------------------------------ operations

    def compare(self, kind: str, lhs: Cases, rhs: Cases) -> Cases:
        """``lhs <kind> rhs`` for ``kind`` one of ``lt le gt ge eq ne``."""

        def rule(region: Region, a: Value, b: Value) -> list[tuple[Region, Value]]:
            return self._compare_exprs(region, kind, self._as_expr(a), self._as_expr(b))

        return self.apply([lhs, rhs], rule)

    def _as_expr(self, value: Value) -> ir.AffineExpr:
        return ax.constant(int(value), self.context) if isinstance(value, bool) else value

    def _compare_exprs(self, region: Region, kind: str, a: ir.AffineExpr, b: ir.AffineExpr) -> list[tuple[Region, Value]]:
        difference = ax.add(b, ax.mul(a, -1))  # b - a
        if kind in ("eq", "ne"):
            parts = self.split(region, difference, _ZERO)
            return parts if kind == "eq" else [(r, not v) for r, v in parts]
        if kind in ("gt", "ge"):
            difference = ax.mul(difference, -1)  # a - b
        interval = _AT_LEAST_ONE if kind in ("lt", "gt") else _AT_LEAST_ZERO
        return self.split(region, difference, interval)

    def select(self, predicate: Cases, choices: Sequence[Cases]) -> Cases:
        """``choices[predicate]`` (a truth value selects ``choices[0]`` when false, as
        ``lax.select_n``); an integer predicate outside the choices is an unknown."""
        result: list[tuple[Region, Value]] = []
        for region, which in predicate:
            if isinstance(which, bool):
                index = int(which)
            else:
                constant = ax.constant_value(which)
                if constant is None or not 0 <= constant < len(choices):
                    raise TooManyCases()  # a grid-dependent case index: not followed
                index = constant
            for case_region, value in choices[index]:
                met = self.meet(region, case_region)
                if met is not None:
                    result.append((met, value))
            if len(result) > MAX_INDEX_MAP_CASES:
                raise TooManyCases()
        return self.merged(result)

    def as_integer(self, value: Cases) -> Cases:
        """``value`` as an integer: a truth value becomes 0 or 1."""
        if not is_truth(value):
            return value
        return self.select(value, [self.constant(0), self.constant(1)])

    def logic(self, kind: str, arguments: Sequence[Cases]) -> Cases:
        """``and``/``or``/``xor``/``not`` of truth values (integers: a new unknown is
        the caller's business)."""
        table: dict[str, Callable[..., bool]] = {
            "and": lambda a, b: a and b,
            "or": lambda a, b: a or b,
            "xor": lambda a, b: a != b,
            "not": lambda a: not a,
        }
        return self.apply(arguments, lambda region, *values: [(region, table[kind](*values))])

    def arithmetic(self, kind: str, arguments: Sequence[Cases]) -> Cases:
        """``add sub mul neg max min sign abs div rem`` (XLA semantics: ``div`` and
        ``rem`` round toward zero). Raises :class:`NotAffine` for a product of two
        variable values or a division by one."""
        return self.apply(arguments, lambda region, *values: self._arithmetic(kind, region, [self._as_expr(v) for v in values]))

    def _arithmetic(self, kind: str, region: Region, values: list[ir.AffineExpr]) -> list[tuple[Region, Value]]:
        if kind == "add":
            return [(region, ax.add(values[0], values[1]))]
        if kind == "sub":
            return [(region, ax.add(values[0], ax.mul(values[1], -1)))]
        if kind == "neg":
            return [(region, ax.mul(values[0], -1))]
        if kind == "mul":
            a, b = values
            if ax.constant_value(a) is None and ax.constant_value(b) is None:
                raise NotAffine("the product of two values that vary")
            return [(region, ax.mul(a, b))]
        if kind in ("min", "max"):
            a, b = values
            parts = self._compare_exprs(region, "le", a, b)  # a <= b
            keep_a = kind == "min"
            return [(r, a if truth == keep_a else b) for r, truth in parts]
        if kind == "sign":
            (a,) = values
            out: list[tuple[Region, Value]] = []
            for interval, sign in ((_AT_LEAST_ONE, 1), (_ZERO, 0), (_AT_MOST_MINUS_ONE, -1)):
                part = self.restrict(region, a, interval)
                if part is not None:
                    out.append((part, ax.constant(sign, self.context)))
            return out
        if kind == "abs":
            (a,) = values
            return [(r, a if nonnegative else ax.mul(a, -1)) for r, nonnegative in self.split(region, a, _AT_LEAST_ZERO)]
        if kind in ("div", "rem"):
            a, b = values
            divisor = ax.constant_value(b)
            if divisor is None:
                raise NotAffine("a division by a value that varies")
            if divisor == 0:
                raise NotAffine("a division by zero")
            return self._truncating(kind, region, a, divisor)
        raise NotAffine(f"'{kind}'")

    def _truncating(self, kind: str, region: Region, a: ir.AffineExpr, divisor: int) -> list[tuple[Region, Value]]:
        """``a div divisor`` / ``a rem divisor`` rounding toward zero, split on the sign
        of ``a`` when the ranges do not decide it."""
        magnitude, negate_quotient = abs(divisor), divisor < 0
        out: list[tuple[Region, Value]] = []
        for part, nonnegative in self.split(region, a, _AT_LEAST_ZERO):
            positive_a = a if nonnegative else ax.mul(a, -1)
            if kind == "div":
                quotient = ax.floordiv(positive_a, magnitude)
                value = quotient if nonnegative != negate_quotient else ax.mul(quotient, -1)
            else:
                remainder = ax.mod(positive_a, magnitude)
                value = remainder if nonnegative else ax.mul(remainder, -1)
            out.append((part, value))
        return out


def is_truth(value: Cases) -> bool:
    """Whether every case of ``value`` is a truth value."""
    return all(isinstance(v, bool) for _, v in value)


class NotAffine(Exception):
    """An operation the cases cannot express (internal: the interpreter turns the result
    into an unknown named after it)."""


def _single_variable(expr: ir.AffineExpr) -> tuple[ir.AffineDimExpr | ir.AffineSymbolExpr, int, int] | None:
    """``(v, a, c)`` when ``expr`` is ``a * v + c`` of one dimension or unknown ``v``."""
    form = linearize(expr)
    if len(form.terms) != 1:
        return None
    ((atom, coefficient),) = form.terms.items()
    atom = ax.typed(atom)
    if not isinstance(atom, (ax.Dim, ax.Sym)):
        return None
    return atom, coefficient, form.constant


def _solve(coefficient: int, offset: int, interval: Interval) -> Interval:
    """The values of ``v`` with ``coefficient * v + offset`` in ``interval`` (an interval
    of integers; empty when none)."""
    low, high = interval.lower - offset, interval.upper - offset
    if coefficient < 0:
        coefficient, low, high = -coefficient, -high, -low
    return Interval(-((-low) // coefficient), high // coefficient)


def _adjacent_union(first: Region, second: Region) -> Region | None:
    """The union of two regions when it is a region: equal but for the range of one
    variable, or the interval of one constraint, the two adjacent or overlapping."""
    if first.constraints != second.constraints:
        if first.dims != second.dims or first.symbols != second.symbols:
            return None
        return _constraint_union(first, second)
    ranges_a = list(first.dims) + [r for _, r in first.symbols]
    ranges_b = list(second.dims) + [r for _, r in second.symbols]
    if [p for p, _ in first.symbols] != [p for p, _ in second.symbols]:
        return None
    different = [k for k, (a, b) in enumerate(zip(ranges_a, ranges_b)) if a != b]
    if len(different) != 1:
        return None
    (k,) = different
    union = _joined(ranges_a[k], ranges_b[k])
    if union is None:
        return None
    if k < len(first.dims):
        dims = list(first.dims)
        dims[k] = union
        return Region(tuple(dims), first.symbols, first.constraints)
    symbols = list(first.symbols)
    position = symbols[k - len(first.dims)][0]
    symbols[k - len(first.dims)] = (position, union)
    return Region(first.dims, tuple(symbols), first.constraints)


def _constraint_union(first: Region, second: Region) -> Region | None:
    table_a, table_b = dict(first.constraints), dict(second.constraints)
    if table_a.keys() != table_b.keys():
        return None
    different = [expr for expr in table_a if table_a[expr] != table_b[expr]]
    if len(different) != 1:
        return None
    (expr,) = different
    union = _joined(table_a[expr], table_b[expr])
    if union is None:
        return None
    table_a[expr] = union
    return Region(first.dims, first.symbols, tuple(table_a.items()))


def _joined(a: Interval, b: Interval) -> Interval | None:
    """The union of two intervals when it is one (they overlap or touch)."""
    if a.upper + 1 < b.lower or b.upper + 1 < a.lower:
        return None
    return Interval(min(a.lower, b.lower), max(a.upper, b.upper))


def _same(a: Value, b: Value) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return bool(a == b)
