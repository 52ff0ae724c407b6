"""Constraints on tile sizes: XLA's ``ConstraintExpression``, kept factored.

A :class:`ConstraintExpression` is a conjunction of *factors*, each a disjunction of
conjunctions of ``expr in [lo, hi]``, where ``expr`` is an ``ir.AffineExpr`` over the
tile sizes (``d0, d1, ...``; ``6 mod d0`` is allowed: the divisor may be a tile size).
XLA multiplies the disjunctions out into one disjunction of conjunctions; the tiles of a
fusion each bring their own disjunction (a reshape's ``6 mod d0 in [0, 0] || d0 mod 6 in
[0, 0]``), so that product grows as 2**(number of tiles) (a 41-instruction layer-norm
backward fusion ran past 1.5 GB). Kept factored, ``&`` costs the size of its operands:
single-conjunction factors merge into one conjunction (bounds on one expression
intersect), equal factors are kept once, and a factor one of whose conjunctions the
merged conjunction implies is dropped (it holds), one whose conjunctions it contradicts
loses them. ``|`` multiplies out the factors of its operands (the derivation only joins
single factors). Two special values: :meth:`ConstraintExpression.always` (no
constraint, prints nothing) and :meth:`ConstraintExpression.never` (known unsatisfiable;
an expression whose factors cannot hold together without this being visible from the
merged bounds stays ``satisfiable``, and :meth:`is_satisfied_by` says false everywhere).

Example::

    c = ConstraintExpression.of(mod(d0, 6), Interval(0, 0)) | ConstraintExpression.of(
        mod(constant(6), d0), Interval(0, 0))
    c.is_satisfied_by([3])   # True: 6 mod 3 == 0
    str(c)                   # '6 mod d0 in [0, 0] || d0 mod 6 in [0, 0]'
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.interval import Interval

#: One constraint ``expr in interval``.
Constraint = tuple[ir.AffineExpr, Interval]
#: Constraints that must all hold.
Conjunction = tuple[Constraint, ...]
#: One factor: conjunctions of which one must hold.
Disjunction = tuple[Conjunction, ...]


@dataclass(frozen=True)
class ConstraintExpression:
    """``factors[0] && factors[1] && ...``, each factor ``c0 || c1 || ...`` (see the
    module docstring). ``satisfiable=False`` is the unsatisfiable expression (no
    factors); ``satisfiable=True`` with no factors is "always satisfied". Build with
    :meth:`of`, ``&`` and ``|``: they keep the factored form (at most one factor of a
    single conjunction, first; no factor twice; the others of two conjunctions or more)."""

    factors: tuple[Disjunction, ...] = ()
    satisfiable: bool = True

    @staticmethod
    def always() -> "ConstraintExpression":
        """The expression that holds for every tile size."""
        return ConstraintExpression()

    @staticmethod
    def never() -> "ConstraintExpression":
        """The unsatisfiable expression."""
        return ConstraintExpression((), False)

    @staticmethod
    def of(expr: ir.AffineExpr, interval: Interval) -> "ConstraintExpression":
        """The single constraint ``expr in interval``."""
        if interval.is_empty:
            return ConstraintExpression.never()
        return ConstraintExpression(((((ax.typed(expr), interval),),),))

    @property
    def is_always_satisfied(self) -> bool:
        """True when there is no constraint at all."""
        return self.satisfiable and not self.factors

    @property
    def size(self) -> int:
        """The number of constraints written (over every conjunction of every factor):
        what the expression costs to store and to evaluate."""
        return sum(len(conjunction) for factor in self.factors for conjunction in factor)

    def __and__(self, other: "ConstraintExpression") -> "ConstraintExpression":
        if not self.satisfiable or not other.satisfiable:
            return ConstraintExpression.never()
        if other.is_always_satisfied or other.factors == self.factors:
            return self
        if self.is_always_satisfied:
            return other
        return _factored((*self.factors, *other.factors))

    def __or__(self, other: "ConstraintExpression") -> "ConstraintExpression":
        if self.is_always_satisfied or other.is_always_satisfied:
            return ConstraintExpression.always()
        if not self.satisfiable:
            return other
        if not other.satisfiable:
            return self
        return _factored(((*self._multiplied_out(), *other._multiplied_out()),))

    def _multiplied_out(self) -> Disjunction:
        """The one disjunction equal to the product of the factors (its size is the
        product of theirs: for ``|`` of the derivation's single factors)."""
        out = []
        for choice in itertools.product(*self.factors):
            merged = _intersect(itertools.chain.from_iterable(choice))
            if merged is not None:
                out.append(merged)
        return tuple(out)

    def is_satisfied_by(self, tile_sizes: Sequence[int]) -> bool:
        """Whether the tile sizes (one per ``d<i>``) satisfy the expression. A constraint
        whose expression divides by zero does not hold."""
        if not self.satisfiable:
            return False
        return all(
            any(all(_holds(expr, interval, tile_sizes) for expr, interval in conjunction) for conjunction in factor)
            for factor in self.factors
        )

    def simplify(self) -> "ConstraintExpression":
        """Drop constraints on constants that hold, conjunctions with one that fails
        (a factor left without conjunctions makes the whole expression unsatisfiable),
        duplicate conjunctions, and factors with a conjunction left empty (they always
        hold), as XLA's ``Simplify``."""
        factors = []
        for factor in self.factors:
            kept: dict[frozenset[Constraint], Conjunction] = {}
            holds = False
            for conjunction in factor:
                folded = _fold_constants(conjunction)
                if folded == ():
                    holds = True
                    break
                if folded is not None:
                    kept.setdefault(frozenset(folded), folded)
            if not holds:
                factors.append(tuple(kept.values()))
        return _factored(factors)

    def __str__(self) -> str:
        if self.is_always_satisfied:
            return "always satisfied"
        if not self.satisfiable:
            return "unsatisfiable"
        texts = []
        for factor in self.factors:
            parts = sorted(" && ".join(sorted(f"{ax.typed(e)} in {i}" for e, i in c)) for c in factor)
            text = " || ".join(parts)
            texts.append(f"({text})" if len(factor) > 1 and len(self.factors) > 1 else text)
        return " && ".join(texts)


def _factored(factors: Iterable[Disjunction]) -> ConstraintExpression:
    """The expression ``factors[0] && factors[1] && ...`` in its factored form (see
    :class:`ConstraintExpression`): single-conjunction factors merged, each other factor
    pruned against that merged conjunction until nothing changes (each round removes a
    conjunction, so at most as many rounds as conjunctions), equal factors kept once."""
    units: dict[ir.AffineExpr, Interval] = {}
    others: dict[frozenset[frozenset[Constraint]], Disjunction] = {}
    pending = list(factors)
    while pending:
        for factor in pending:
            if not factor:
                return ConstraintExpression.never()
            if len(factor) == 1:
                for expr, interval in factor[0]:
                    previous = units.get(expr)
                    units[expr] = interval if previous is None else previous.intersect(interval)
                    if units[expr].is_empty:
                        return ConstraintExpression.never()
            else:
                others.setdefault(frozenset(frozenset(c) for c in factor), factor)
        pending = []
        for key, factor in list(others.items()):
            kept = tuple(c for c in factor if not _contradicts(c, units))
            if any(_implied(c, units) for c in kept):
                del others[key]  # it holds wherever the merged conjunction does
            elif len(kept) < len(factor):
                del others[key]
                pending.append(kept)
    out: list[Disjunction] = [((tuple(units.items()),))] if units else []
    return ConstraintExpression((*out, *others.values()))


def _contradicts(conjunction: Conjunction, units: dict[ir.AffineExpr, Interval]) -> bool:
    return any(expr in units and units[expr].intersect(interval).is_empty for expr, interval in conjunction)


def _implied(conjunction: Conjunction, units: dict[ir.AffineExpr, Interval]) -> bool:
    return all(expr in units and interval.contains(units[expr]) for expr, interval in conjunction)


def _fold_constants(conjunction: Conjunction) -> Conjunction | None:
    """``conjunction`` without its constraints on constants that hold and without
    repeats; None when one fails."""
    kept: list[Constraint] = []
    for expr, interval in conjunction:
        value = ax.constant_value(expr)
        if interval.is_empty or (value is not None and not interval.contains(value)):
            return None
        if value is None and (expr, interval) not in kept:
            kept.append((expr, interval))
    return tuple(kept)


def _intersect(constraints: Iterable[Constraint]) -> Conjunction | None:
    """The conjunction of ``constraints``, merging bounds on one expression; None if two
    bounds on one expression do not overlap."""
    merged: dict[ir.AffineExpr, Interval] = {}
    for expr, interval in constraints:
        previous = merged.get(expr)
        merged[expr] = interval if previous is None else previous.intersect(interval)
        if merged[expr].is_empty:
            return None
    return tuple(merged.items())


def _holds(expr: ir.AffineExpr, interval: Interval, tile_sizes: Sequence[int]) -> bool:
    try:
        return interval.contains(ax.evaluate(expr, tile_sizes, []))
    except ax.UndefinedDivisionError:
        return False
