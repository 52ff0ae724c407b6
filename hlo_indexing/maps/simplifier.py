"""Range-aware simplification of indexing maps.

Upstream MLIR folds affine expressions without knowing variable ranges, so it cannot
remove ``mod``/``floordiv``. This simplifier uses the map's ranges (as intervals) to:

* fold ``x mod k`` to ``x - m*k`` and ``x floordiv k`` to ``m`` when ``x`` stays within
  one period ``[m*k, m*k + k - 1]``;
* pull multiples of ``k`` out of ``floordiv``/``mod`` (``(16a + b) floordiv 8 =
  2a + b floordiv 8``), and split off a small remainder by a common factor ``g | k``
  (``(g*a + b) floordiv k = a floordiv (k/g)`` when ``0 <= b < g``);
* merge nested divisions (``(x floordiv a) floordiv b = x floordiv (a*b)``);
* recombine sums: ``c*(x mod k) + c*k*(x floordiv k) = c*x``,
  ``c*(x mod k) + c*k*((x floordiv k) mod m) = c*(x mod k*m)`` and
  ``c*x - c*k*(x floordiv k) = c*(x mod k)``;
* replace variables whose range is a single point by that constant;
* present each result in its smallest form: the simplifier works on a canonical form
  whose ``floordiv``/``mod`` numerators carry a constant in ``[0, k - 1]`` (so equal
  quotients compare equal), and a final pass moves a sum's constant into a ``floordiv``
  when that gives fewer nodes: ``(d1 + 4) floordiv 7 - 1`` becomes ``(d1 - 3) floordiv 7``
  (``c*((x + r) floordiv k) + c*j = c*((x + r + j*k) floordiv k)``; inside ``x mod K``
  the sum's constant may first move by ``K``), and writes ``c*(x mod k)`` as
  ``(c*x) mod (c*k)`` when smaller; ties keep the canonical form;
* tighten variable ranges from constraints, merge ``mod`` constraints on one variable,
  drop constraints implied by the ranges, and detect an empty domain (``KNOWN EMPTY``).

Every rewrite is an identity over the map's domain, so the relation never changes.
The rewrite recurses through the ``mod``/``floordiv``/``ceildiv``/product levels of an
expression (~7 frames each; sums are flattened): a map nested too deep for Python's
recursion limit (composition builds such maps, ~100 levels and more) is returned as it
is, exact but not simplified (``RecursionError`` never escapes).
It works on a map's parts (:class:`~hlo_indexing.maps.variables.MapParts`):
``IndexingMap.simplify`` is built on :func:`simplify_parts` and remembers its results
per map (maps are immutable and hashable).

Example::

    IndexingMap.parse("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), "
                      "domain: d0 in [0, 6], d1 in [0, 14]").simplify()
    # (d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]
"""

from __future__ import annotations

import math

from hlo_indexing.dialect_glue.bindings import AffineExpr, ir
from hlo_indexing.errors import IntegerOverflowError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.expr_simplifier import ExprSimplifier
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.linear_form import Linear, LinearForms
from hlo_indexing.maps.memo import EXPRESSION_VARIABLES_TABLE, NORMALIZED_CONSTRAINTS_TABLE, bounded_table
from hlo_indexing.maps.variables import MapParts, Variable

#: Constraint-tightening rounds before giving up on a fixed point (each round is linear).
MAX_ROUNDS = 8
#: Largest modulus for which two ``mod`` constraints on one variable are merged.
MAX_MERGED_MODULUS = 1 << 20


def _tighten(variable: Variable, interval: Interval) -> Variable:
    return Variable(variable.bounds.intersect(interval), variable.name, variable.origin)


def _values_in_mod_class(bounds: Interval, k: int, residues: Interval) -> Interval:
    """The smallest interval inside ``bounds`` holding every ``v`` with
    ``v mod k`` in ``residues`` (a sub-interval of ``[0, k - 1]``; empty if none).
    Constant time: ``k`` may be as large as int64 (a tile of ``2147483648`` elements)."""
    if residues.is_empty or bounds.is_empty:
        return Interval(0, -1)
    base, rest = divmod(bounds.lower, k)
    lower = base * k + max(rest, residues.lower) if rest <= residues.upper else (base + 1) * k + residues.lower
    base, rest = divmod(bounds.upper, k)
    upper = base * k + min(rest, residues.upper) if rest >= residues.lower else (base - 1) * k + residues.upper
    if lower > bounds.upper or upper < bounds.lower or lower > upper:
        return Interval(0, -1)
    return Interval(lower, upper)


class _MapState:
    """Mutable working copy of a map during :func:`simplify`."""

    def __init__(self, parts: MapParts):
        self.parts = parts
        self.context = parts.affine_map.context
        self.dims = list(parts.dims)
        self.symbols = list(parts.ranges + parts.runtimes)
        self.n_range = len(parts.ranges)
        self.constraints = dict(parts.constraints)
        self.empty = False
        self.forms = LinearForms()  # shared by the rounds: they rewrite the same expressions
        #: The rounds' simplifier, kept while no range narrows (its memos hold for the
        #: ranges it was made with; :meth:`narrow` drops it).
        self.round_simplifier: ExprSimplifier | None = None
        #: The constraints the next round normalizes (the last round's rewritten or
        #: joined ones); None: all of them (first round, or a range narrowed).
        self.recheck: set[AffineExpr] | None = None

    def simplifier(self) -> ExprSimplifier:
        """A new simplifier over the current ranges."""
        return ExprSimplifier([v.bounds for v in self.dims], [v.bounds for v in self.symbols], self.context, self.forms)

    def narrow(self, variable: ir.AffineDimExpr | ir.AffineSymbolExpr, interval: Interval) -> bool:
        """Intersect ``variable``'s range with ``interval`` (an empty result marks the map
        empty); True if the range changed."""
        table = self.dims if isinstance(variable, ax.Dim) else self.symbols
        old = table[variable.position]
        new = _tighten(old, interval)
        if new.bounds.is_empty:
            self.empty = True
            return True
        if new.bounds != old.bounds:
            table[variable.position] = new
            self.round_simplifier = None
            return True
        return False

    def round(self) -> bool:
        """One pass over the constraints; True if anything changed.

        A constraint normalized before (by this map's rounds or another map's) over the
        same ranges of the variables it uses (all a normalization reads) takes the
        outcome remembered in the context's table of normalized constraints, unless a
        range narrowed earlier in this round (the rewrite reads the ranges as they were
        when the round began; outcomes that narrow a range are not remembered). So a
        round that changes nothing costs a lookup per constraint, and maps that share
        constraints (compositions through one producer) normalize them once.

        After a round that narrowed no range, the next one reuses its simplifier (same
        ranges, so its memos hold) and normalizes only the constraints that round
        rewrote or joined (:attr:`recheck`) until a range narrows: the others are what
        the same constraint over the same ranges gave before, themselves. A round with
        nothing to recheck changes nothing and is skipped."""
        recheck = self.recheck
        if recheck is not None and not recheck:
            return False
        simplify = self.round_simplifier
        if simplify is None:
            simplify = self.round_simplifier = self.simplifier()
        normalized = bounded_table(self.context, NORMALIZED_CONSTRAINTS_TABLE)
        used = bounded_table(self.context, EXPRESSION_VARIABLES_TABLE)
        dim_bounds = [(v.bounds.lower, v.bounds.upper) for v in self.dims]
        symbol_bounds = [(v.bounds.lower, v.bounds.upper) for v in self.symbols]
        changed = narrowed_before = False
        updated: dict[AffineExpr, Interval] = {}
        touched: set[AffineExpr] = set()  # the constraints the next round must normalize again
        new_expr: AffineExpr | None
        for expr, interval in self.constraints.items():
            if recheck is not None and not narrowed_before and expr not in recheck:
                new_expr, new_interval, narrowed = expr, interval, False
            else:
                if narrowed_before:
                    key = None
                else:  # the constraint and the ranges of its variables, as plain ints (cheap to hash)
                    variables = used.get(expr) or ax.remembered_variables(expr, used)
                    key = (
                        expr,
                        interval.lower,
                        interval.upper,
                        tuple([dim_bounds[i] for i in variables[0]]),
                        tuple([symbol_bounds[i] for i in variables[1]]),
                    )
                outcome = normalized.get(key) if key is not None else None
                if outcome is not None:
                    new_expr, new_interval = outcome
                    narrowed = False
                elif _may_divide_by_zero(expr, simplify):
                    # the constraint also excludes the points where it is undefined (a divisor
                    # of 0, as enumeration treats them): kept as written, never dropped as implied
                    previous = updated.get(expr)
                    updated[expr] = interval if previous is None else previous.intersect(interval)
                    touched.add(expr)  # (rare: normalized again each round, as it was)
                    continue
                else:
                    variables = simplify.forms.variable_sum(expr)
                    if variables is not None:  # what simplify(expr) gives, without building it
                        new_expr, new_interval, narrowed = self._normalize_linear(
                            simplify.fold_variables(variables), interval, simplify
                        )
                    else:
                        new_expr, new_interval, narrowed = self._normalize(simplify(expr), interval, simplify)
                    if self.empty:
                        return True
                    narrowed_before |= narrowed
                    if key is not None and not narrowed:
                        normalized[key] = (new_expr, new_interval)
            if narrowed or new_expr is None or new_expr != expr or new_interval != interval:
                changed = True
                if new_expr is None:
                    continue
                touched.add(new_expr)
            previous = updated.get(new_expr)
            if previous is not None:
                touched.add(new_expr)
            updated[new_expr] = new_interval if previous is None else previous.intersect(new_interval)
            if updated[new_expr].is_empty:
                self.empty = True
                return True
        merged = self._merge_mods(updated)
        changed |= merged
        self.constraints = updated
        # a narrowed range (a merge of mod constraints narrows one) makes every constraint suspect
        self.recheck = None if narrowed_before or merged else touched
        return changed

    def _normalize(
        self, expr: AffineExpr, interval: Interval, simplify: ExprSimplifier
    ) -> tuple[AffineExpr | None, Interval, bool]:
        """Move constants and factors into the interval, turn constraints on a single
        variable into range narrowing; returns (expr or None if dropped, interval, narrowed)."""
        return self._normalize_linear(simplify.forms.of(expr).copy(), interval, simplify)

    def _normalize_linear(
        self, linear: Linear, interval: Interval, simplify: ExprSimplifier
    ) -> tuple[AffineExpr | None, Interval, bool]:
        """:meth:`_normalize` of the expression whose linear form is ``linear`` (changed here)."""
        interval = interval + (-linear.constant)
        linear.constant = 0
        if len(linear.terms) == 1:
            (atom, coeff), = linear.terms.items()
            if coeff < 0:
                coeff, interval = -coeff, -interval
            interval = Interval(-((-interval.lower) // coeff), interval.upper // coeff)
            linear = Linear({atom: 1})
        elif linear.terms:
            interval, linear = self._factor_out_small_remainder(linear, interval, simplify)
        if not linear.terms:
            self.empty |= not interval.contains(0)
            return None, interval, False
        if len(linear.terms) == 1:
            (atom, coeff), = linear.terms.items()
            if coeff == 1 and isinstance(atom, (ax.Dim, ax.Sym)):
                return None, interval, self.narrow(atom, interval)
            divisor = ax.constant_value(atom.rhs) if isinstance(atom, ax.FloorDiv) else None
            if coeff == 1 and divisor and isinstance(atom, ax.FloorDiv):
                # lo <= x floordiv k <= hi  <=>  x in [lo*k, hi*k + k - 1] (k > 0), mirrored for k < 0.
                if divisor > 0:
                    inner = Interval(interval.lower * divisor, interval.upper * divisor + divisor - 1)
                else:
                    inner = Interval(interval.upper * divisor + divisor + 1, interval.lower * divisor)
                return self._normalize(simplify(atom.lhs), inner, simplify)
        narrowed = False
        if len(linear.terms) == 1:
            (atom, coeff), = linear.terms.items()
            k = ax.constant_value(atom.rhs) if isinstance(atom, ax.Mod) else None
            if coeff == 1 and k and k > 0 and isinstance(atom, ax.Mod) and isinstance(atom.lhs, (ax.Dim, ax.Sym)):
                interval = interval.intersect(Interval(0, k - 1))
                table = self.dims if isinstance(atom.lhs, ax.Dim) else self.symbols
                bounds = table[atom.lhs.position].bounds
                narrowed = self.narrow(atom.lhs, _values_in_mod_class(bounds, k, interval))
                if self.empty:
                    return None, interval, True
        new_expr = simplify.build(linear)
        value_bounds = simplify.bounds(new_expr)
        if interval.contains(value_bounds):
            return None, interval, narrowed
        if value_bounds.intersect(interval).is_empty:
            self.empty = True
            return None, interval, narrowed
        return new_expr, interval, narrowed

    def _factor_out_small_remainder(
        self, linear: Linear, interval: Interval, simplify: ExprSimplifier
    ) -> tuple[Interval, Linear]:
        """Rewrite ``k*A + R in [lo, hi]``, where ``R`` stays within ``[0, k - 1]``, to the
        equivalent ``A in [lo / k, hi div k]`` when ``lo mod k == 0`` and
        ``hi mod k == k - 1``; otherwise divide the sum by the gcd of its coefficients.
        Returns the new (interval, linear form)."""
        g = 0
        for coeff in linear.terms.values():
            g = math.gcd(g, coeff)
        candidates = sorted({abs(c) for c in linear.terms.values()}, reverse=True)
        for k in candidates:
            if k == 1 or interval.lower % k != 0 or interval.upper % k != k - 1:
                continue  # (k = 1 leaves no remainder to split off)
            big, small = Linear(), Linear()
            for atom, coeff in linear.terms.items():
                if coeff % k == 0:
                    big.add(atom, coeff // k)
                else:
                    small.add(atom, coeff)
            if not small.terms or not big.terms:
                continue
            if Interval(0, k - 1).contains(simplify.linear_bounds(small)):
                return Interval(interval.lower // k, interval.upper // k), big
        if g > 1:
            return Interval(-((-interval.lower) // g), interval.upper // g), Linear({a: c // g for a, c in linear.terms.items()})
        return interval, linear

    def _merge_mods(self, constraints: dict[AffineExpr, Interval]) -> bool:
        """Merge ``x mod a in [r, r]`` and ``x mod b in [q, q]`` into one constraint
        ``x mod lcm(a, b) in [t, t]`` (Chinese remainders), or detect emptiness."""
        by_variable: dict[ir.AffineDimExpr | ir.AffineSymbolExpr, list[ir.AffineModExpr]] = {}
        for expr, interval in constraints.items():
            if isinstance(expr, ax.Mod) and isinstance(expr.lhs, (ax.Dim, ax.Sym)) and interval.is_point:
                if (ax.constant_value(expr.rhs) or 0) > 0:
                    by_variable.setdefault(expr.lhs, []).append(expr)
        changed = False
        for variable, exprs in by_variable.items():
            if len(exprs) < 2:
                continue
            modulus, residue = 1, 0
            for expr in exprs:
                k, r = ax.rhs_constant(expr), constraints[expr].lower
                lcm = modulus * k // math.gcd(modulus, k)
                if lcm > MAX_MERGED_MODULUS:
                    break
                solution = next((v for v in range(residue, lcm, modulus) if v % k == r), None)
                if solution is None:
                    self.empty = True
                    return True
                modulus, residue = lcm, solution
            else:
                for expr in exprs:
                    del constraints[expr]
                merged = ax.mod(variable, modulus)
                constraints[merged] = Interval.point(residue)
                table = self.dims if isinstance(variable, ax.Dim) else self.symbols
                self.narrow(variable, _values_in_mod_class(table[variable.position].bounds, modulus, Interval.point(residue)))
                changed = True
        return changed

    def result(self) -> MapParts | None:
        """The simplified parts (``self.parts`` itself when nothing changed), or None
        when the domain is empty."""
        parts = self.parts
        if self.empty or any(v.bounds.is_empty for v in self.dims + self.symbols):
            return None
        simplify = self.simplifier()
        originals = list(parts.affine_map.results)
        results = [simplify.compact(simplify(e)) for e in originals]
        if results == originals and self._unchanged():
            return parts  # already simplified: the same map, its hash and text already computed
        affine_map = ir.AffineMap.get(len(self.dims), len(self.symbols), results, self.context)
        return MapParts(
            affine_map, tuple(self.dims), tuple(self.symbols[: self.n_range]), tuple(self.symbols[self.n_range :]), self.constraints
        )


    def _unchanged(self) -> bool:
        """Whether the variables and constraints are still the map's own (only the
        constraint rounds change them, and they run only when there are constraints)."""
        parts = self.parts
        if not self.constraints and not parts.constraints:
            return True
        return (
            all(a is b for a, b in zip(self.dims, parts.dims))
            and all(a is b for a, b in zip(self.symbols, parts.ranges + parts.runtimes))
            and self.constraints == parts.constraints
        )


def _may_divide_by_zero(expr: AffineExpr, simplify: ExprSimplifier) -> bool:
    """Whether a ``floordiv``/``ceildiv``/``mod`` of ``expr`` has a divisor that is not a
    constant and may be 0 over the ranges (a semi-affine expression undefined somewhere)."""
    if simplify.forms.variable_sum(expr) is not None:
        return False  # no division at all
    found = False

    def visit(node: AffineExpr) -> None:
        nonlocal found
        if not found and isinstance(node, (ax.FloorDiv, ax.CeilDiv, ax.Mod)) and ax.constant_value(node.rhs) is None:
            found = simplify.bounds(node.rhs).contains(0)

    ax.walk(expr, visit)
    return found


def simplify_parts(parts: MapParts) -> MapParts | None:
    """The simplified parts of a defined, not known-empty map (same relation; see the
    module docstring): ``parts`` itself when nothing simplifies, None when the domain
    is found empty. Not cached here: ``IndexingMap.simplify`` remembers results keyed on
    the map and its variable names (equal maps may carry different names)."""
    try:
        state = _MapState(parts)
        for _ in range(MAX_ROUNDS if parts.constraints else 0):  # a round without constraints changes nothing
            if not state.round() or state.empty:
                break
        return state.result()
    except IntegerOverflowError:
        return parts  # an intermediate value left int64: the map as given is the simplest exact form we have
    except RecursionError:
        return parts  # nested too deep for the recursive rewrite (module docstring): the map as given is exact
