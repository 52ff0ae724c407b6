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
Results are cached per map (maps are immutable and hashable).

Example::

    IndexingMap.parse("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), "
                      "domain: d0 in [0, 6], d1 in [0, 14]").simplify()
    # (d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import IntegerOverflowError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval, check_int64

#: Constraint-tightening rounds before giving up on a fixed point (each round is linear).
MAX_ROUNDS = 8
#: Largest modulus for which two ``mod`` constraints on one variable are merged.
MAX_MERGED_MODULUS = 1 << 20
#: Largest constant the presentation pass writes into a ``floordiv`` numerator (int64-safe).
MAX_COMPACTED_CONSTANT = 1 << 48


# --------------------------------------------------------------------- linear forms


class Linear:
    """``sum(coeff * atom) + constant``: an expression as a sum of non-sum atoms."""

    __slots__ = ("terms", "constant")

    def __init__(self, terms: dict | None = None, constant: int = 0):
        self.terms: dict = terms if terms is not None else {}
        self.constant = constant

    def add(self, atom, coeff: int) -> None:
        value = self.terms.get(atom, 0) + coeff
        if value:
            self.terms[atom] = value
        else:
            self.terms.pop(atom, None)

    def add_linear(self, other: "Linear", scale: int = 1) -> None:
        for atom, coeff in other.terms.items():
            self.add(atom, coeff * scale)
        self.constant += other.constant * scale

    def copy(self) -> "Linear":
        return Linear(dict(self.terms), self.constant)


def linearize(expr) -> Linear:
    """The linear form of ``expr`` (sums and products by constants are flattened)."""
    out = Linear()
    _linearize_into(ax.typed(expr), 1, out)
    return out


def _linearize_into(expr, scale: int, out: Linear) -> None:
    if isinstance(expr, ax.Const):
        out.constant += expr.value * scale
    elif isinstance(expr, ax.Add):
        _linearize_into(expr.lhs, scale, out)
        _linearize_into(expr.rhs, scale, out)
    elif isinstance(expr, ax.Mul) and isinstance(expr.rhs, ax.Const):
        _linearize_into(expr.lhs, scale * expr.rhs.value, out)
    elif isinstance(expr, ax.Mul) and isinstance(expr.lhs, ax.Const):
        _linearize_into(expr.rhs, scale * expr.lhs.value, out)
    else:
        out.add(expr, scale)


def _atom_order(atom) -> tuple:
    if isinstance(atom, ax.Dim):
        return (0, atom.position, "")
    if isinstance(atom, ax.Sym):
        return (1, atom.position, "")
    return (2, 0, str(atom))


def build(linear: Linear, context) -> object:
    """The ``ir.AffineExpr`` of a linear form, terms in a deterministic order."""
    expr = None
    check_int64(linear.constant, "constant of a simplified expression")
    for atom in sorted(linear.terms, key=_atom_order):
        coeff = check_int64(linear.terms[atom], "coefficient of a simplified expression")
        term = atom if coeff == 1 else atom * coeff
        expr = term if expr is None else expr + term
    if expr is None:
        return ax.constant(linear.constant, context)
    return _left_associated(ax.typed(expr + linear.constant if linear.constant else expr))


def _left_associated(expr):
    """The tree MLIR builds when it parses the printed form of ``expr``: the summands in
    printed order, added left to right (repeated until MLIR's folding is stable), so
    that equal texts give equal (uniqued) expressions."""
    for _ in range(4):
        summands: list = []
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, ax.Add):
                stack.append(node.rhs)
                stack.append(node.lhs)
            else:
                summands.append(node)
        rebuilt = summands[0]
        for term in summands[1:]:
            rebuilt = rebuilt + term
        rebuilt = ax.typed(rebuilt)
        if rebuilt == expr:
            break
        expr = rebuilt
    return expr


# --------------------------------------------------------------------- expressions


class ExprSimplifier:
    """Simplifies expressions over fixed variable ranges (memoised per instance)."""

    def __init__(self, dim_ranges: Sequence[Interval], symbol_ranges: Sequence[Interval], context):
        self.dim_ranges = list(dim_ranges)
        self.symbol_ranges = list(symbol_ranges)
        self.context = context
        self._memo: dict = {}
        self._bounds_memo: dict = {}
        self._compact_memo: dict = {}
        #: Set when this instance built a form :meth:`compact` may shrink: a ``floordiv``
        #: whose numerator has a constant, or a sum with a term ``c*(x mod k)``, ``c > 1``.
        self._compactable = False

    def bounds(self, expr) -> Interval:
        return ax.bounds(expr, self.dim_ranges, self.symbol_ranges, self._bounds_memo)

    def linear_bounds(self, linear: Linear) -> Interval:
        total = Interval.point(linear.constant)
        for atom, coeff in linear.terms.items():
            total = total + self.bounds(atom) * coeff
        return total

    def const(self, value: int):
        return ax.constant(value, self.context)

    def __call__(self, expr):
        found = self._memo.get(expr)
        if found is None:
            found = self._simplify(ax.typed(expr))
            self._memo[expr] = found
            self._memo.setdefault(found, found)
        return found

    def _simplify(self, expr):
        if isinstance(expr, ax.Const):
            return expr
        if isinstance(expr, (ax.Dim, ax.Sym)):
            interval = self.bounds(expr)
            return self.const(interval.lower) if interval.is_point else expr
        interval = self.bounds(expr)
        if interval.is_point:
            return self.const(interval.lower)
        if isinstance(expr, (ax.Add, ax.Mul)) and (isinstance(expr, ax.Add) or _has_constant_factor(expr)):
            return self.simplify_sum(linearize(expr))
        if isinstance(expr, ax.Mul):  # semi-affine product
            return ax.mul(self(expr.lhs), self(expr.rhs))
        lhs, rhs = self(expr.lhs), self(expr.rhs)
        divisor = ax.constant_value(rhs)
        if divisor is None or divisor <= 0:
            return ax.rebuild(expr, lhs, rhs)
        if isinstance(expr, ax.Mod):
            return self.simplify_mod(lhs, divisor)
        if isinstance(expr, ax.FloorDiv):
            return self.simplify_floordiv(lhs, divisor)
        return self.simplify_ceildiv(lhs, divisor)

    # -- presentation

    def compact(self, expr):
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

    def _compacted(self, expr):
        found = self._compact_memo.get(expr)
        if found is None:
            found = self._compact(ax.typed(expr))
            self._compact_memo[expr] = found
        return found

    def _compact(self, expr):
        if not isinstance(expr, ax.Binary):
            return expr
        if isinstance(expr, ax.Add) or (isinstance(expr, ax.Mul) and _has_constant_factor(expr)):
            return self._compact_sum(expr, linearize(expr), None)
        if isinstance(expr, ax.Mod) and (ax.constant_value(expr.rhs) or 0) > 0:
            modulus = expr.rhs.value
            numerator = ax.typed(expr.lhs)
            compacted = self._compact_sum(numerator, linearize(numerator), modulus)
            return expr if compacted == numerator else ax.mod(compacted, modulus)
        lhs, rhs = self._compacted(expr.lhs), self._compacted(expr.rhs)
        return expr if (lhs, rhs) == (expr.lhs, expr.rhs) else ax.rebuild(expr, lhs, rhs)

    def _compact_sum(self, expr, linear: Linear, modulus: int | None):
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
        for atom in sorted(atoms.terms, key=_atom_order):
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
                numerator_constant = numerator.constant + (total // coeff) * atom.rhs.value
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

    def _scaled_mod(self, atom, coeff: int):
        """``(c*x) mod (c*k)`` for the term ``c*(x mod k)`` (``c > 1``) when that has fewer
        nodes and simplifies back to the term, else None (``c*(x mod k) = (c*x) mod (c*k)``
        for every integer ``x``)."""
        if coeff <= 1 or not _positive_divisor(atom, ax.Mod):
            return None
        scaled = Linear()
        scaled.add_linear(linearize(atom.lhs), coeff)
        modulus = atom.rhs.value * coeff
        largest = max([abs(scaled.constant), modulus, *(abs(c) for c in scaled.terms.values())])
        if largest > MAX_COMPACTED_CONSTANT:
            return None
        merged = ax.mod(build(scaled, self.context), modulus)
        if ax.node_count(merged) >= ax.node_count(atom) + 2 or self(merged) != self(ax.mul(atom, coeff)):
            return None
        return merged

    # -- sums

    def simplify_sum(self, linear: Linear):
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
            k = mod_atom.rhs.value
            if k <= 0:
                continue
            quotient = None
            for div_atom, c2 in divs:
                if c2 != c1 * k:
                    continue
                quotient = quotient if quotient is not None else self.canonical_quotient(mod_atom.lhs, k)
                if self.canonical_quotient(div_atom.lhs, div_atom.rhs.value) == quotient:
                    linear.add(mod_atom, -c1)
                    linear.add(div_atom, -c2)
                    linear.add_linear(linearize(mod_atom.lhs), c1)
                    return True
            for other, c2 in mods:
                m = other.rhs.value
                if other == mod_atom or c2 != c1 * k or not isinstance(other.lhs, ax.FloorDiv):
                    continue
                if not ax.constant_value(other.lhs.rhs):
                    continue
                quotient = quotient if quotient is not None else self.canonical_quotient(mod_atom.lhs, k)
                if self.canonical_quotient(other.lhs.lhs, other.lhs.rhs.value) == quotient:
                    linear.add(mod_atom, -c1)
                    linear.add(other, -c2)
                    merged = self(ax.mod(mod_atom.lhs, k * m))
                    linear.add_linear(linearize(merged), c1)
                    return True
        for div_atom, c2 in divs:
            k = div_atom.rhs.value
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

    def canonical_quotient(self, numerator, divisor: int):
        """``numerator floordiv divisor`` in simplified form (nested divisions are
        flattened), so that two quotients are the same value when the forms are equal."""
        return self.simplify_floordiv(self(numerator), divisor)

    # -- mod, floordiv, ceildiv with a positive constant divisor

    def simplify_mod(self, lhs, k: int):
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
            inner = ax.constant_value(atom.rhs) if isinstance(atom, ax.Mod) else None
            if coeff == 1 and inner and inner % k == 0:
                return self(ax.mod(atom.lhs, k))
        split = self._split_by_factor(linear, k)
        if split is not None:
            g, multiples, remainder = split
            if multiples.terms:
                high = self.simplify_mod(build(multiples, self.context), k // g)
                return self.simplify_sum(Linear({high: g}) if remainder is None else _plus(Linear({high: g}), remainder))
        return ax.mod(build(linear, self.context), k)

    def simplify_floordiv(self, lhs, k: int):
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

    def _floordiv_of_remainder(self, linear: Linear, k: int):
        nested = [a for a, c in linear.terms.items() if c == 1 and _positive_divisor(a, ax.FloorDiv)]
        if len(nested) == 1:
            # (A + Z floordiv g) floordiv k == (A*g + Z) floordiv (g*k)
            atom = nested[0]
            g = atom.rhs.value
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

    def _split_by_factor(self, linear: Linear, k: int):
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

    def simplify_ceildiv(self, lhs, k: int):
        interval = self.bounds(lhs)
        if -((-interval.lower) // k) == -((-interval.upper) // k):
            return self.const(-((-interval.lower) // k))
        return ax.ceildiv(lhs, k)


def _positive_divisor(expr, kind) -> bool:
    """Whether ``expr`` is a ``kind`` (Mod/FloorDiv) by a positive constant."""
    return isinstance(expr, kind) and (ax.constant_value(expr.rhs) or 0) > 0


def _plus(a: Linear, b: Linear) -> Linear:
    out = a.copy()
    out.add_linear(b)
    return out


def _has_constant_factor(expr) -> bool:
    return isinstance(expr.rhs, ax.Const) or isinstance(expr.lhs, ax.Const)


# --------------------------------------------------------------------- constraints


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

    def __init__(self, m: IndexingMap):
        self.map = m
        self.context = m.context
        self.dims = list(m.dim_vars)
        self.symbols = list(m.symbol_vars)
        self.n_range = len(m.range_vars)
        self.constraints = dict(m.constraints)
        self.empty = False

    def simplifier(self) -> ExprSimplifier:
        return ExprSimplifier([v.bounds for v in self.dims], [v.bounds for v in self.symbols], self.context)

    def narrow(self, variable, interval: Interval) -> bool:
        table = self.dims if isinstance(variable, ax.Dim) else self.symbols
        old = table[variable.position]
        new = _tighten(old, interval)
        if new.bounds.is_empty:
            self.empty = True
            return True
        if new.bounds != old.bounds:
            table[variable.position] = new
            return True
        return False

    def round(self) -> bool:
        """One pass over the constraints; True if anything changed."""
        simplify = self.simplifier()
        changed = False
        updated: dict = {}
        for expr, interval in self.constraints.items():
            new_expr, new_interval, narrowed = self._normalize(simplify(expr), interval, simplify)
            changed |= narrowed or new_expr is None or new_expr != expr or new_interval != interval
            if self.empty:
                return True
            if new_expr is None:
                changed = True
                continue
            previous = updated.get(new_expr)
            updated[new_expr] = new_interval if previous is None else previous.intersect(new_interval)
            if updated[new_expr].is_empty:
                self.empty = True
                return True
        changed |= self._merge_mods(updated)
        self.constraints = updated
        return changed

    def _normalize(self, expr, interval: Interval, simplify: ExprSimplifier):
        """Move constants and factors into the interval, turn constraints on a single
        variable into range narrowing; returns (expr or None if dropped, interval, narrowed)."""
        linear = linearize(expr)
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
            if coeff == 1 and divisor:
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
            if coeff == 1 and k and k > 0 and isinstance(atom.lhs, (ax.Dim, ax.Sym)):
                interval = interval.intersect(Interval(0, k - 1))
                table = self.dims if isinstance(atom.lhs, ax.Dim) else self.symbols
                bounds = table[atom.lhs.position].bounds
                narrowed = self.narrow(atom.lhs, _values_in_mod_class(bounds, k, interval))
                if self.empty:
                    return None, interval, True
        new_expr = build(linear, self.context)
        value_bounds = simplify.bounds(new_expr)
        if interval.contains(value_bounds):
            return None, interval, narrowed
        if value_bounds.intersect(interval).is_empty:
            self.empty = True
            return None, interval, narrowed
        return new_expr, interval, narrowed

    def _factor_out_small_remainder(self, linear: Linear, interval: Interval, simplify: ExprSimplifier):
        """Rewrite ``k*A + R in [lo, hi]``, where ``R`` stays within ``[0, k - 1]``, to the
        equivalent ``A in [lo / k, hi div k]`` when ``lo mod k == 0`` and
        ``hi mod k == k - 1``; otherwise divide the sum by the gcd of its coefficients.
        Returns the new (interval, linear form)."""
        g = 0
        for coeff in linear.terms.values():
            g = math.gcd(g, coeff)
        candidates = sorted({abs(c) for c in linear.terms.values()}, reverse=True)
        for k in candidates:
            big, small = Linear(), Linear()
            for atom, coeff in linear.terms.items():
                if coeff % k == 0:
                    big.add(atom, coeff // k)
                else:
                    small.add(atom, coeff)
            if not small.terms or not big.terms:
                continue
            if not Interval(0, k - 1).contains(simplify.linear_bounds(small)):
                continue
            if interval.lower % k == 0 and interval.upper % k == k - 1:
                return Interval(interval.lower // k, interval.upper // k), big
        if g > 1:
            return Interval(-((-interval.lower) // g), interval.upper // g), Linear({a: c // g for a, c in linear.terms.items()})
        return interval, linear

    def _merge_mods(self, constraints: dict) -> bool:
        """Merge ``x mod a in [r, r]`` and ``x mod b in [q, q]`` into one constraint
        ``x mod lcm(a, b) in [t, t]`` (Chinese remainders), or detect emptiness."""
        by_variable: dict = {}
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
                k, r = expr.rhs.value, constraints[expr].lower
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

    def result(self) -> IndexingMap:
        m = self.map
        if self.empty or any(v.bounds.is_empty for v in self.dims + self.symbols):
            return IndexingMap.known_empty(m.num_dims, m.num_symbols, m.num_results, self.context)
        simplify = self.simplifier()
        results = [simplify.compact(simplify(e)) for e in m.results]
        affine_map = ir.AffineMap.get(m.num_dims, m.num_symbols, results, self.context)
        return IndexingMap._make(
            affine_map, self.dims, self.symbols[: self.n_range], self.symbols[self.n_range :], self.constraints
        )


def simplify(m: IndexingMap) -> IndexingMap:
    """The simplified form of ``m`` (same relation; see the module docstring).
    Not cached here: :meth:`IndexingMap.simplify` remembers results keyed on the map and
    its variable names (equal maps may carry different names)."""
    if m.is_undefined or m.is_known_empty():
        return m
    try:
        state = _MapState(m)
        for _ in range(MAX_ROUNDS):
            if not state.round() or state.empty:
                break
        return state.result()
    except IntegerOverflowError:
        return m  # an intermediate value left int64: the map as given is the simplest exact form we have
