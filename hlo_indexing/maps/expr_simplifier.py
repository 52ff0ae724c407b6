"""Range-aware simplification of one affine expression: :class:`ExprSimplifier` rewrites
an expression over fixed dimension and symbol ranges (the rules are listed in
:mod:`hlo_indexing.maps.simplifier`, which applies it to every result and constraint of a
map) and presents the result in its smallest form (:meth:`ExprSimplifier.compact`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypeGuard, cast

from hlo_indexing.dialect_glue.bindings import AffineExpr, Context, ir
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.linear_form import Linear, LinearForms, atom_order, build, linearize

BinaryExpr = ir.AffineBinaryExpr

#: Largest constant the presentation pass writes into a ``floordiv`` numerator (int64-safe).
MAX_COMPACTED_CONSTANT = 1 << 48


class ExprSimplifier:
    """Simplifies expressions over fixed variable ranges (memoised per instance)."""

    def __init__(
        self, dim_ranges: Sequence[Interval], symbol_ranges: Sequence[Interval], context: Context, forms: LinearForms | None = None
    ):
        self.dim_ranges = list(dim_ranges)
        self.symbol_ranges = list(symbol_ranges)
        self.context = context
        #: Linear forms (range-independent): may be shared by the simplifiers of one map's rounds.
        self.forms = forms if forms is not None else LinearForms()
        self._memo: dict[AffineExpr, AffineExpr] = {}
        self._bounds_memo: dict[AffineExpr, Interval] = {}
        self._compact_memo: dict[AffineExpr, AffineExpr] = {}
        #: Set when this instance built a form :meth:`compact` may shrink: a ``floordiv``
        #: whose numerator has a constant, or a sum with a term ``c*(x mod k)``, ``c > 1``.
        self._compactable = False

    def bounds(self, expr: AffineExpr) -> Interval:
        """An interval holding every value of ``expr`` over the ranges (memoised)."""
        return ax.bounds(expr, self.dim_ranges, self.symbol_ranges, self._bounds_memo)

    def linear_bounds(self, linear: Linear) -> Interval:
        """An interval holding every value of the linear form ``linear`` over the ranges."""
        lower = upper = linear.constant
        dims, symbols = self.dim_ranges, self.symbol_ranges
        atom: Any  # typed by the bindings: dispatch on its class
        for atom, coeff in linear.terms.items():
            kind = type(atom)
            bounds = dims[atom.position] if kind is ax.Dim else symbols[atom.position] if kind is ax.Sym else self.bounds(atom)
            at_lower, at_upper = bounds.lower * coeff, bounds.upper * coeff  # Interval * coeff, summed as Interval.__add__
            lower += min(at_lower, at_upper)
            upper += max(at_lower, at_upper)
        return Interval(lower, upper)

    def const(self, value: int) -> AffineExpr:
        """The constant expression ``value`` in this simplifier's context."""
        return ax.constant(value, self.context)

    def __call__(self, expr: AffineExpr) -> AffineExpr:
        found = self._memo.get(expr)
        if found is None:
            found = self._simplify(ax.typed(expr))
            self._memo[expr] = found
            self._memo.setdefault(found, found)
        return found

    def _simplify(self, expr: Any) -> AffineExpr:
        # ``expr`` is typed: dispatch on its class (cheaper than ``isinstance`` tests
        # against the bindings' classes, which are slow when they fail).
        kind = type(expr)
        if kind is ax.Const:
            return cast(AffineExpr, expr)
        if kind is ax.Dim or kind is ax.Sym:
            interval = self.bounds(expr)
            return self.const(interval.lower) if interval.is_point else cast(AffineExpr, expr)
        is_sum = kind is ax.Add or (kind is ax.Mul and _has_constant_factor(expr))
        if is_sum:
            variables = self.forms.variable_sum(expr)
            if variables is not None:
                return self._simplify_variable_sum(variables)
            linear = self.forms.of(expr)
        interval = self.bounds(expr)
        if interval.is_point:
            return self.const(interval.lower)
        if is_sum:
            return self.simplify_sum(linear.copy())
        if kind is ax.Mul:  # semi-affine product
            return ax.mul(self(expr.lhs), self(expr.rhs))
        assert isinstance(expr, ax.Binary)  # constants, variables and sums are handled above
        lhs, rhs = self(expr.lhs), self(expr.rhs)
        divisor = ax.constant_value(rhs)
        if divisor is None or divisor <= 0:
            return ax.rebuild(expr, lhs, rhs)
        if kind is ax.Mod:
            return self.simplify_mod(lhs, divisor)
        if kind is ax.FloorDiv:
            return self.simplify_floordiv(lhs, divisor)
        return self.simplify_ceildiv(lhs, divisor)

    # -- presentation

    def compact(self, expr: AffineExpr) -> AffineExpr:
        """The smallest equivalent form of the simplified ``expr`` reachable by moving
        constants into ``floordiv`` numerators and factors into ``mod`` (see the module
        docstring); ``expr`` itself when no candidate has fewer nodes. Equal over all
        integers, not only the ranges. Kept only when the simplifier maps the new form back
        to ``expr``, so that simplifying a simplified map changes nothing.
        Example: ``((d1 + 5) floordiv 7) * 3 - 3`` -> ``((d1 - 2) floordiv 7) * 3``."""
        if not self._compactable:
            return expr
        compacted = self._compacted(expr)
        return compacted if compacted == expr or self(compacted) == expr else expr

    def _compacted(self, expr: AffineExpr) -> AffineExpr:
        found = self._compact_memo.get(expr)
        if found is None:
            found = self._compact(ax.typed(expr))
            self._compact_memo[expr] = found
        return found

    def _compact(self, expr: AffineExpr) -> AffineExpr:
        if not isinstance(expr, ax.Binary):
            return expr
        if isinstance(expr, ax.Add) or (isinstance(expr, ax.Mul) and _has_constant_factor(expr)):
            return self._compact_sum(expr, linearize(expr), None)
        if isinstance(expr, ax.Mod) and (ax.constant_value(expr.rhs) or 0) > 0:
            modulus = ax.rhs_constant(expr)
            numerator = ax.typed(expr.lhs)
            compacted = self._compact_sum(numerator, linearize(numerator), modulus)
            return expr if compacted == numerator else ax.mod(compacted, modulus)
        lhs, rhs = self._compacted(expr.lhs), self._compacted(expr.rhs)
        return expr if (lhs, rhs) == (expr.lhs, expr.rhs) else ax.rebuild(expr, lhs, rhs)

    def _compact_sum(self, expr: AffineExpr, linear: Linear, modulus: int | None) -> AffineExpr:
        """``expr`` (whose linear form is ``linear``; its constant may move by
        ``modulus`` when given) with compacted atoms and, when that is smaller, its
        constant absorbed by one ``floordiv`` atom. Ties: the input form, then the
        smallest absolute numerator constant, then the first atom in term order."""
        atoms = Linear(constant=linear.constant)
        changed = False
        for atom, coeff in linear.terms.items():
            compacted = self._compacted(atom) if isinstance(atom, ax.Binary) else atom
            if compacted == atom:
                atoms.add(atom, coeff)
            else:
                changed = True
                atoms.add_linear(linearize(compacted), coeff)
        for atom, coeff in list(atoms.terms.items()):
            merged = self._scaled_mod(atom, coeff)
            if merged is not None:
                atoms.add(atom, -coeff)
                atoms.add(merged, 1)
                changed = True
        best = build(atoms, self.context) if changed else expr
        if not linear.constant:
            return best
        best_key = (ax.node_count(best), -1)  # a candidate must be smaller to win
        shifts = (0,) if modulus is None else (0, -modulus, modulus)
        for atom in sorted(atoms.terms, key=atom_order):
            coeff = atoms.terms[atom]
            if not _positive_divisor(atom, ax.FloorDiv):
                continue
            numerator = linearize(atom.lhs)
            if not numerator.terms or not numerator.constant:
                continue  # moving the constant in would only move a node
            for shift in shifts:
                total = atoms.constant + shift
                if total % coeff:
                    continue
                numerator_constant = numerator.constant + (total // coeff) * ax.rhs_constant(atom)
                if abs(numerator_constant) > MAX_COMPACTED_CONSTANT:
                    continue
                candidate = atoms.copy()
                candidate.constant = 0
                candidate.add(atom, -coeff)
                candidate.add(ax.floordiv(build(Linear(numerator.terms, numerator_constant), self.context), atom.rhs), coeff)
                built = build(candidate, self.context)
                key = (ax.node_count(built), abs(numerator_constant))
                if key < best_key:
                    best, best_key = built, key
        return best

    def _scaled_mod(self, atom: AffineExpr, coeff: int) -> AffineExpr | None:
        """``(c*x) mod (c*k)`` for the term ``c*(x mod k)`` (``c > 1``) when that has fewer
        nodes and simplifies back to the term, else None (``c*(x mod k) = (c*x) mod (c*k)``
        for every integer ``x``)."""
        if coeff <= 1 or not _positive_divisor(atom, ax.Mod):
            return None
        scaled = Linear()
        scaled.add_linear(linearize(atom.lhs), coeff)
        modulus = ax.rhs_constant(atom) * coeff
        largest = max([abs(scaled.constant), modulus, *(abs(c) for c in scaled.terms.values())])
        if largest > MAX_COMPACTED_CONSTANT:
            return None
        merged = ax.mod(build(scaled, self.context), modulus)
        if ax.node_count(merged) >= ax.node_count(atom) + 2 or self(merged) != self(ax.mul(atom, coeff)):
            return None
        return merged

    # -- sums

    def build(self, linear: Linear) -> AffineExpr:
        """The expression of ``linear`` (:func:`~hlo_indexing.maps.linear_form.build`,
        remembered with its linear form); a sum of variables has its bounds noted
        (exactly what :meth:`bounds` finds on the built sum of scaled variables)."""
        expr = self.forms.build(linear, self.context)
        if expr not in self._bounds_memo and self.forms.variable_sum(expr) is not None:
            self._bounds_memo[expr] = self.linear_bounds(linear)
        return expr

    def _simplify_variable_sum(self, linear: Linear) -> AffineExpr:
        """:meth:`simplify_sum` of a sum of dimensions and symbols (:func:`is_variable_sum`),
        without building the expression twice: the expression of :meth:`fold_variables`."""
        out = self.fold_variables(linear)
        return self.build(out) if out.terms else self.const(out.constant)

    def fold_variables(self, linear: Linear) -> Linear:
        """The linear form of the simplified sum of dimensions and symbols ``linear``
        (:func:`is_variable_sum`; a new object): variables of a single value become
        constants, and no other rewrite applies to such a sum. Its bounds are those of
        the linear form (exact for distinct variables), so a sum of one value is that
        constant, as :meth:`_simplify` folds any expression of a point range."""
        out = Linear(constant=linear.constant)
        atom: Any  # a dimension or a symbol (typed by the bindings)
        for atom, coeff in linear.terms.items():
            interval = self.dim_ranges[atom.position] if type(atom) is ax.Dim else self.symbol_ranges[atom.position]
            if interval.is_point:
                out.constant += coeff * interval.lower
            else:
                out.terms[atom] = coeff
        return out

    def simplify_sum(self, linear: Linear) -> AffineExpr:
        """The simplified expression of ``linear``: each atom simplified, then the sum rewrites
        (see :mod:`hlo_indexing.maps.simplifier`) applied until none applies."""
        out = Linear(constant=linear.constant)
        for atom, coeff in linear.terms.items():
            simplified = self(atom)
            out.add_linear(linearize(simplified), coeff)
        for _ in range(len(out.terms) + 1):
            if not self._recombine(out):
                break
        self._note_scaled_mods(out)
        return build(out, self.context)

    def _recombine(self, linear: Linear) -> bool:
        """Apply one sum rewrite (see the module docstring); True if one applied."""
        atoms = list(linear.terms.items())
        mods = [(a, c) for a, c in atoms if isinstance(a, ax.Mod) and ax.constant_value(a.rhs)]
        divs = [(a, c) for a, c in atoms if isinstance(a, ax.FloorDiv) and ax.constant_value(a.rhs)]
        for mod_atom, c1 in mods:
            k = ax.rhs_constant(mod_atom)
            if k <= 0:
                continue
            quotient = None
            for div_atom, c2 in divs:
                if c2 != c1 * k:
                    continue
                quotient = quotient if quotient is not None else self.canonical_quotient(mod_atom.lhs, k)
                if self.canonical_quotient(div_atom.lhs, ax.rhs_constant(div_atom)) == quotient:
                    linear.add(mod_atom, -c1)
                    linear.add(div_atom, -c2)
                    linear.add_linear(linearize(mod_atom.lhs), c1)
                    return True
            for other, c2 in mods:
                m = ax.rhs_constant(other)
                if other == mod_atom or c2 != c1 * k or not isinstance(other.lhs, ax.FloorDiv):
                    continue
                if not ax.constant_value(other.lhs.rhs):
                    continue
                quotient = quotient if quotient is not None else self.canonical_quotient(mod_atom.lhs, k)
                if self.canonical_quotient(other.lhs.lhs, ax.rhs_constant(other.lhs)) == quotient:
                    linear.add(mod_atom, -c1)
                    linear.add(other, -c2)
                    merged = self(ax.mod(mod_atom.lhs, k * m))
                    linear.add_linear(linearize(merged), c1)
                    return True
        for div_atom, c2 in divs:
            k = ax.rhs_constant(div_atom)
            if k <= 0 or c2 % k:
                continue
            c = -c2 // k
            numerator = linearize(div_atom.lhs)
            if not numerator.terms or not all(
                linear.terms.get(a, 0) * (c * x) > 0 for a, x in numerator.terms.items()
            ):
                continue
            linear.add(div_atom, -c2)
            linear.add_linear(numerator, -c)
            linear.add_linear(linearize(self(ax.mod(div_atom.lhs, k))), c)
            return True
        return False

    def canonical_quotient(self, numerator: AffineExpr, divisor: int) -> AffineExpr:
        """``numerator floordiv divisor`` in simplified form (nested divisions are
        flattened), so that two quotients are the same value when the forms are equal."""
        return self.simplify_floordiv(self(numerator), divisor)

    # -- mod, floordiv, ceildiv with a positive constant divisor

    def simplify_mod(self, lhs: AffineExpr, k: int) -> AffineExpr:
        """``lhs mod k`` simplified, for a simplified ``lhs`` and ``k > 0``: multiples of ``k``
        dropped, folded when ``lhs`` stays within one period, nested ``mod`` merged, a small
        remainder split off by a common factor."""
        if k == 1:
            return self.const(0)
        linear = linearize(lhs)
        for atom in [a for a, c in linear.terms.items() if c % k == 0]:
            del linear.terms[atom]
        linear.constant %= k
        interval = self.linear_bounds(linear)
        if interval.lower // k == interval.upper // k:
            linear.constant -= (interval.lower // k) * k
            return build(linear, self.context)
        if len(linear.terms) == 1 and linear.constant == 0:
            (atom, coeff), = linear.terms.items()
            if coeff == 1 and isinstance(atom, ax.Mod):
                inner = ax.constant_value(atom.rhs)
                if inner and inner % k == 0:  # (x mod c) mod k = x mod k when k divides c != 0
                    return self(ax.mod(atom.lhs, k))
        split = self._split_by_factor(linear, k)
        if split is not None:
            g, multiples, remainder = split
            if multiples.terms:
                high = self.simplify_mod(build(multiples, self.context), k // g)
                return self.simplify_sum(Linear({high: g}) if remainder is None else _plus(Linear({high: g}), remainder))
        return ax.mod(build(linear, self.context), k)

    def simplify_floordiv(self, lhs: AffineExpr, k: int) -> AffineExpr:
        """``lhs floordiv k`` simplified, for a simplified ``lhs`` and ``k > 0``: multiples of
        ``k`` pulled out, folded when ``lhs`` stays within one period, nested divisions
        merged, a small remainder dropped by a common factor."""
        if k == 1:
            return lhs
        linear = linearize(lhs)
        quotient = Linear(constant=linear.constant // k)
        linear.constant %= k
        for atom, coeff in list(linear.terms.items()):
            if coeff % k == 0:
                quotient.add(atom, coeff // k)
                del linear.terms[atom]
        interval = self.linear_bounds(linear)
        if interval.lower // k == interval.upper // k:
            quotient.constant += interval.lower // k
            return build(quotient, self.context)
        rest = self._floordiv_of_remainder(linear, k)
        quotient.add_linear(linearize(rest))
        self._note_scaled_mods(quotient)
        return build(quotient, self.context) if quotient.terms or quotient.constant else rest

    def _note_scaled_mods(self, linear: Linear) -> None:
        """Mark this instance compactable when ``linear`` has a term ``c*(x mod k)``, ``c > 1``."""
        if not self._compactable:
            self._compactable = any(c > 1 and isinstance(a, ax.Mod) for a, c in linear.terms.items())

    def _floordiv_of_remainder(self, linear: Linear, k: int) -> AffineExpr:
        nested = [a for a, c in linear.terms.items() if c == 1 and _positive_divisor(a, ax.FloorDiv)]
        if len(nested) == 1:
            # (A + Z floordiv g) floordiv k == (A*g + Z) floordiv (g*k)
            atom = nested[0]
            g = ax.rhs_constant(atom)
            flattened = Linear()
            flattened.add_linear(linear, g)
            flattened.add(atom, -g)
            flattened.add_linear(linearize(atom.lhs))
            return self.simplify_floordiv(self.simplify_sum(flattened), k * g)
        split = self._split_by_factor(linear, k)
        if split is not None:
            g, multiples, _ = split
            return self.simplify_floordiv(build(multiples, self.context), k // g)
        self._compactable |= linear.constant != 0
        return ax.floordiv(build(linear, self.context), k)

    def _split_by_factor(self, linear: Linear, k: int) -> tuple[int, Linear, Linear | None] | None:
        """The largest ``g`` with ``1 < g``, ``g | k`` such that the terms whose
        coefficient ``g`` divides (divided by ``g``) and a remainder in ``[0, g - 1]``
        make up ``linear``; returns ``(g, multiples / g, remainder or None)``."""
        candidates = sorted({math.gcd(c, k) for c in linear.terms.values()} - {1}, reverse=True)
        for g in candidates:
            multiples, remainder = Linear(), Linear(constant=linear.constant)
            for atom, coeff in linear.terms.items():
                if coeff % g == 0:
                    multiples.add(atom, coeff // g)
                else:
                    remainder.add(atom, coeff)
            if not multiples.terms:
                continue
            if Interval(0, g - 1).contains(self.linear_bounds(remainder)):
                has_remainder = remainder.terms or remainder.constant
                return g, multiples, remainder if has_remainder else None
        return None

    def simplify_ceildiv(self, lhs: AffineExpr, k: int) -> AffineExpr:
        """``lhs ceildiv k`` for ``k > 0``: a constant when ``lhs`` stays within one period,
        else unchanged."""
        interval = self.bounds(lhs)
        if -((-interval.lower) // k) == -((-interval.upper) // k):
            return self.const(-((-interval.lower) // k))
        return ax.ceildiv(lhs, k)


def _positive_divisor(expr: AffineExpr, kind: type[BinaryExpr]) -> TypeGuard[BinaryExpr]:
    """Whether ``expr`` is a ``kind`` (Mod/FloorDiv) by a positive constant."""
    return isinstance(expr, kind) and (ax.constant_value(expr.rhs) or 0) > 0


def _plus(a: Linear, b: Linear) -> Linear:
    out = a.copy()
    out.add_linear(b)
    return out


def _has_constant_factor(expr: BinaryExpr) -> bool:
    return type(expr.rhs) is ax.Const or type(expr.lhs) is ax.Const  # children are typed
