"""Symbolic tile expressions evaluated over many candidate tilings, each distinct
expression and each distinct tile once (the cost models' checks and estimates read the
same tiles). One :class:`TileArrays` may serve every fusion whose tiling parameters
have the same sizes (the same candidates): fusions of a model share tiles, and
:meth:`TileArrays.memo` keeps whatever else a backend derives from them. Values at
candidates where an expression divides by zero are unspecified (such candidates break
the fusion's constraints and are never ranked)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import numpy as np

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps import affine_expr as ax

_T = TypeVar("_T")


def padded(sizes: np.ndarray) -> np.ndarray:
    """Every size rounded up to the next power of two (``llvm::PowerOf2Ceil``; 0 stays 0)."""
    sizes = np.asarray(sizes, np.int64)
    mantissa, exponent = np.frexp(sizes.astype(np.float64))
    return np.where(mantissa == 0.5, sizes, np.left_shift(np.int64(1), exponent.astype(np.int64)) * (sizes > 0))


#: What :meth:`TileArrays.memo` finds under a key it does not hold (None is a value).
_MISSING = object()


def failing(ok: np.ndarray) -> np.ndarray | None:
    """``ok`` (per candidate, whether it passes a check) when some candidate fails, else
    None: what a memo keeps of a check, so that a check every candidate passes costs a
    lookup."""
    return None if np.count_nonzero(ok) == ok.size else ok


class TileArrays:
    """Expressions of the tiling parameters evaluated at every candidate
    (``flat_sizes``: per parameter, its size at each candidate). ``facts``: what the
    backends derive from fusions whatever the candidates (:meth:`fact`), shared by the
    TileArrays of every grid of one module when they are given the same dict."""

    def __init__(self, flat_sizes: Sequence[np.ndarray], facts: dict[object, object] | None = None):
        self.flat = [np.asarray(sizes, np.int64) for sizes in flat_sizes]
        self.facts: dict[object, object] = facts if facts is not None else {}
        self.count = len(self.flat[0]) if self.flat else 1
        self._exprs: dict[ir.AffineExpr, np.ndarray] = {}
        self._columns: dict[tuple[ir.AffineExpr, ...], np.ndarray] = {}
        self._padded: dict[tuple[ir.AffineExpr, ...], np.ndarray] = {}
        self._padded_exprs: dict[ir.AffineExpr, np.ndarray] = {}
        self._elements: dict[tuple[ir.AffineExpr, ...], np.ndarray] = {}
        self._memo: dict[object, object] = {}  # each key's value of the type its caller computes

    def memo(self, key: object, compute: Callable[[], _T]) -> _T:
        """``compute()``, computed once per ``key`` for these candidates (a backend's
        figures that depend only on tiles and on what ``key`` names)."""
        found = self._memo.get(key, _MISSING)
        if found is _MISSING:
            found = self._memo[key] = compute()
        return cast(_T, found)

    def fact(self, key: object, compute: Callable[[], _T]) -> _T:
        """``compute()``, computed once per ``key`` for every TileArrays sharing these
        facts (what does not depend on the candidates: element types, a reshape's own
        tile constraints)."""
        found = self.facts.get(key, _MISSING)
        if found is _MISSING:
            found = self.facts[key] = compute()
        return cast(_T, found)

    def get(self, key: object) -> Any:
        """What :meth:`memo` or :meth:`put` keeps under ``key``, or None."""
        return self._memo.get(key)

    def put(self, key: object, value: Any) -> None:
        """Keep ``value`` under ``key`` (figures computed several at once)."""
        self._memo[key] = value

    def value(self, expr: ir.AffineExpr) -> np.ndarray:
        """``expr`` at every candidate."""
        found = self._exprs.get(expr)
        if found is None:
            typed = ax.typed(expr)
            if isinstance(typed, ax.Dim):
                found = self.flat[typed.position]
            elif isinstance(typed, ax.Const):
                found = np.full(self.count, typed.value, np.int64)
            else:
                defined = np.ones(self.count, bool)
                found = np.broadcast_to(ax.evaluate_array(expr, self.flat, [], defined), (self.count,)).astype(np.int64)
            self._exprs[expr] = found
        return found

    def columns(self, exprs: Sequence[ir.AffineExpr]) -> np.ndarray:
        """``[candidates, len(exprs)]``: one column per expression."""
        key = tuple(exprs)
        found = self._columns.get(key)
        if found is None:
            if key:
                found = np.array([self.value(e) for e in key]).T
            else:
                found = np.ones((self.count, 0), np.int64)
            self._columns[key] = found
        return found

    def padded_value(self, expr: ir.AffineExpr) -> np.ndarray:
        """``expr`` at every candidate, rounded up to a power of two."""
        found = self._padded_exprs.get(expr)
        if found is None:
            found = self._padded_exprs[expr] = padded(self.value(expr))
        return found

    def padded_columns(self, exprs: Sequence[ir.AffineExpr]) -> np.ndarray:
        """:meth:`columns` with every size rounded up to a power of two."""
        key = tuple(exprs)
        found = self._padded.get(key)
        if found is None:
            if key:
                found = np.array([self.padded_value(e) for e in key]).T
            else:
                found = np.ones((self.count, 0), np.int64)
            self._padded[key] = found
        return found

    def padded_elements(self, exprs: Sequence[ir.AffineExpr]) -> np.ndarray:
        """Per candidate, the product of the padded sizes (each expression padded once
        for all the tiles it appears in)."""
        key = tuple(exprs)
        found = self._elements.get(key)
        if found is None:
            found = self.padded_value(key[0]) if key else np.ones(self.count, np.int64)
            for expr in key[1:]:
                found = found * self.padded_value(expr)
            self._elements[key] = found
        return found
