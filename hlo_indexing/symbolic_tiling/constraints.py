"""Constraints on tile sizes: XLA's ``ConstraintExpression``.

A :class:`ConstraintExpression` is a disjunction of conjunctions of
``expr in [lo, hi]``, where ``expr`` is an ``ir.AffineExpr`` over the tile sizes
(``d0, d1, ...``; ``6 mod d0`` is allowed: the divisor may be a tile size). Two special
values: :meth:`ConstraintExpression.always` (no constraint, prints nothing) and
:meth:`ConstraintExpression.never` (unsatisfiable).

Example::

    c = ConstraintExpression.of(mod(d0, 6), Interval(0, 0)) | ConstraintExpression.of(
        mod(constant(6), d0), Interval(0, 0))
    c.is_satisfied_by([3])   # True: 6 mod 3 == 0
    str(c)                   # '6 mod d0 in [0, 0] || d0 mod 6 in [0, 0]'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.interval import Interval

#: One constraint ``expr in interval``.
Constraint = tuple[ir.AffineExpr, Interval]


@dataclass(frozen=True)
class ConstraintExpression:
    """``conjunctions[0] || conjunctions[1] || ...``, each a tuple of constraints that
    must all hold. ``satisfiable=False`` is the unsatisfiable expression (no
    conjunctions); ``satisfiable=True`` with no conjunctions is "always satisfied"."""

    conjunctions: tuple[tuple[Constraint, ...], ...] = ()
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
        return ConstraintExpression((((ax.typed(expr), interval),),))

    @property
    def is_always_satisfied(self) -> bool:
        """True when there is no constraint at all."""
        return self.satisfiable and not self.conjunctions

    def __and__(self, other: "ConstraintExpression") -> "ConstraintExpression":
        if not self.satisfiable or not other.satisfiable:
            return ConstraintExpression.never()
        if self.is_always_satisfied:
            return other
        if other.is_always_satisfied:
            return self
        out = []
        for first in self.conjunctions:
            for second in other.conjunctions:
                merged = _intersect(first, second)
                if merged is not None:
                    out.append(merged)
        return ConstraintExpression(tuple(out), bool(out))

    def __or__(self, other: "ConstraintExpression") -> "ConstraintExpression":
        if self.is_always_satisfied or other.is_always_satisfied:
            return ConstraintExpression.always()
        if not self.satisfiable:
            return other
        if not other.satisfiable:
            return self
        return ConstraintExpression(self.conjunctions + other.conjunctions)

    def is_satisfied_by(self, tile_sizes: Sequence[int]) -> bool:
        """Whether the tile sizes (one per ``d<i>``) satisfy the expression. A constraint
        whose expression divides by zero does not hold."""
        if not self.conjunctions:
            return self.satisfiable
        return any(all(_holds(expr, interval, tile_sizes) for expr, interval in c) for c in self.conjunctions)

    def simplify(self) -> "ConstraintExpression":
        """Drop constraints on constants that hold, conjunctions with one that fails,
        and duplicate conjunctions; a conjunction left empty makes the whole
        expression always satisfied (as XLA's ``Simplify``)."""
        if not self.conjunctions:
            return self
        seen: dict[frozenset[Constraint], tuple[Constraint, ...]] = {}
        for conjunction in self.conjunctions:
            kept: list[Constraint] = []
            dead = False
            for expr, interval in conjunction:
                value = ax.constant_value(expr)
                if interval.is_empty or (value is not None and not interval.contains(value)):
                    dead = True
                    break
                if value is None and (expr, interval) not in kept:
                    kept.append((expr, interval))
            if dead:
                continue
            if not kept:
                return ConstraintExpression.always()
            seen.setdefault(frozenset(kept), tuple(kept))
        return ConstraintExpression(tuple(seen.values()), bool(seen))

    def __str__(self) -> str:
        if self.is_always_satisfied:
            return "always satisfied"
        if not self.satisfiable:
            return "unsatisfiable"
        parts = sorted(
            " && ".join(sorted(f"{ax.typed(e)} in {i}" for e, i in conjunction)) for conjunction in self.conjunctions
        )
        return " || ".join(parts)


def _intersect(first: Iterable[Constraint], second: Iterable[Constraint]) -> tuple[Constraint, ...] | None:
    """The conjunction of both, merging bounds on one expression; None if two bounds on
    one expression do not overlap."""
    merged: dict[ir.AffineExpr, Interval] = {}
    for expr, interval in (*first, *second):
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
