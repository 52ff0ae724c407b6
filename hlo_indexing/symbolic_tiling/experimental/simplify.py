"""Simplification of tile expressions under variable bounds (XLA's
``TilingSpace::SimplifyExpression`` for tile ids in ``[0, ceil(size / ts) - 1]`` and
runtime variables in their bounds).

Rules, applied bottom-up, each value-preserving on the given bounds:

* sums are kept as linear forms (terms with integer coefficients plus a constant),
  printed runtime variables first, then tile ids, then tile sizes (XLA's order);
* ``a / c`` and ``a mod c`` with ``c > 0``: a common factor ``g`` of every coefficient
  and ``c`` is divided out of a division, the constant rounded down
  (``(x * 2) / 10 -> x / 5``, ``(x * 8 + 7) / 32 -> x / 4``); a
  remainder of an expression known in ``[0, c - 1]`` is the expression itself, terms
  whose coefficient is a multiple of ``c`` leave a remainder, and a common factor comes
  out of one (``(x * 16) mod 64 -> (x mod 4) * 16``). Like XLA, a division is not
  folded to ``0`` from ranges alone (XLA's tests expect ``tid_1 / 5`` to stay);
* ``min``/``max`` of expressions with ordered ranges pick the smaller/larger one.
"""

from __future__ import annotations

import math
from typing import Mapping

from hlo_indexing.symbolic_tiling.experimental.tile_expr import Expr, binary

Bounds = Mapping[str, tuple[int, int]]


def expr_range(e: Expr, bounds: Bounds) -> tuple[int, int] | None:
    """Inclusive value range of ``e`` (None when unbounded or unknown)."""
    if e.is_const:
        return e.value, e.value
    if e.op == "var":
        return bounds.get(e.name)
    assert e.lhs is not None and e.rhs is not None
    a, b = expr_range(e.lhs, bounds), expr_range(e.rhs, bounds)
    if a is None or b is None:
        return None
    if e.op == "add":
        return a[0] + b[0], a[1] + b[1]
    if e.op == "mul":
        products = [x * y for x in a for y in b]
        return min(products), max(products)
    if e.op in ("min", "max"):
        f = min if e.op == "min" else max
        return f(a[0], b[0]), f(a[1], b[1])
    if b[0] != b[1] or b[0] <= 0:
        return None
    c = b[0]
    if e.op == "floordiv":
        return a[0] // c, a[1] // c
    if e.op == "ceildiv":
        return -((-a[0]) // c), -((-a[1]) // c)
    if e.op == "mod":
        return (a[0] % c, a[1] % c) if a[0] // c == a[1] // c else (0, c - 1)
    return None


def _linear(e: Expr) -> tuple[list[tuple[Expr, int]], int]:
    """``e`` as ``sum(term * coefficient) + constant`` (terms in first-seen order)."""
    if e.is_const:
        return [], e.value
    if e.op == "add" and e.lhs is not None and e.rhs is not None:
        t1, c1 = _linear(e.lhs)
        t2, c2 = _linear(e.rhs)
        terms = list(t1)
        for term, coef in t2:
            for i, (seen, k) in enumerate(terms):
                if seen == term:
                    terms[i] = (seen, k + coef)
                    break
            else:
                terms.append((term, coef))
        return [(t, k) for t, k in terms if k], c1 + c2
    if e.op == "mul" and e.rhs is not None and e.rhs.is_const and e.lhs is not None:
        terms, c = _linear(e.lhs)
        return [(t, k * e.rhs.value) for t, k in terms], c * e.rhs.value
    return [(e, 1)], 0


_KIND = {"rt": 0, "tid": 1, "ts": 2}


def _term_key(term: Expr) -> tuple[int, int, str]:
    """Runtime variables first, then tile ids, then tile sizes, by index (XLA's order)."""
    keys = []
    for name in term.variables():
        kind, _, index = name.rpartition("_")
        keys.append((_KIND.get(kind, 3), int(index) if index.isdigit() else 0, name))
    return min(keys) if keys else (4, 0, "")


def _rebuild(terms: list[tuple[Expr, int]], constant: int) -> Expr:
    out = Expr.const(0)
    for term, coef in sorted(terms, key=lambda tc: _term_key(tc[0])):
        out = out + term * coef
    return out + constant


def simplify(e: Expr, bounds: Bounds) -> Expr:
    """``e`` simplified under ``bounds`` (see module doc); the value never changes."""
    if e.op in ("const", "var"):
        return e
    assert e.lhs is not None and e.rhs is not None
    a, b = simplify(e.lhs, bounds), simplify(e.rhs, bounds)
    if e.op in ("floordiv", "mod") and b.is_const and b.value > 0:
        c = b.value
        terms, constant = _linear(a)
        if e.op == "floordiv":  # (g*y + g*q + r) / (g*m) = (y + q) / m for 0 <= r < g
            g = math.gcd(c, *(k for _, k in terms))
            if g > 1:
                terms, constant, c = [(t, k // g) for t, k in terms], constant // g, c // g
        else:
            terms = [(t, k) for t, k in terms if k % c]
            constant %= c
        a = _rebuild(terms, constant)
        r = expr_range(a, bounds)
        if e.op == "mod" and r is not None and 0 <= r[0] and r[1] < c:
            return a
        g = math.gcd(c, constant, *(k for _, k in terms)) if e.op == "mod" else 1
        if g > 1:  # (g * x) mod (g * m) = (x mod m) * g
            inner = _rebuild([(t, k // g) for t, k in terms], constant // g)
            return binary("mul", binary("mod", inner, Expr.const(c // g)), Expr.const(g))
        return binary(e.op, a, Expr.const(c))
    if e.op in ("min", "max"):
        ra, rb = expr_range(a, bounds), expr_range(b, bounds)
        if ra is not None and rb is not None:
            if ra[1] <= rb[0]:
                return a if e.op == "min" else b
            if rb[1] <= ra[0]:
                return b if e.op == "min" else a
    if e.op == "add":
        terms, constant = _linear(binary("add", a, b))
        return _rebuild(terms, constant)
    return binary(e.op, a, b)
