"""Symbolic tile expressions evaluated over many candidate tilings, each distinct
expression and each distinct tile once (the cost models' checks and estimates read the
same tiles). One :class:`TileArrays` may serve every fusion whose tiling parameters
have the same sizes (the same candidates): fusions of a model share tiles, and
:meth:`TileArrays.memo` keeps whatever else a backend derives from them. Values at
candidates where an expression divides by zero are unspecified (such candidates break
the fusion's constraints and are never ranked)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar, cast

import numpy as np

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps import affine_expr as ax

_T = TypeVar("_T")


def padded(sizes: np.ndarray) -> np.ndarray:
    """Every size rounded up to the next power of two (``llvm::PowerOf2Ceil``; 0 stays 0)."""
    sizes = np.asarray(sizes, np.int64)
    mantissa, exponent = np.frexp(sizes.astype(np.float64))
    return np.where(mantissa == 0.5, sizes, np.left_shift(np.int64(1), exponent.astype(np.int64)) * (sizes > 0))


class TileArrays:
    """Expressions of the tiling parameters evaluated at every candidate
    (``flat_sizes``: per parameter, its size at each candidate)."""

    def __init__(self, flat_sizes: Sequence[np.ndarray]):
        self.flat = [np.asarray(sizes, np.int64) for sizes in flat_sizes]
        self.count = len(self.flat[0]) if self.flat else 1
        self._exprs: dict[ir.AffineExpr, np.ndarray] = {}
        self._columns: dict[tuple[ir.AffineExpr, ...], np.ndarray] = {}
        self._padded: dict[tuple[ir.AffineExpr, ...], np.ndarray] = {}
        self._elements: dict[tuple[ir.AffineExpr, ...], np.ndarray] = {}
        self._memo: dict[object, object] = {}  # each key's value of the type its caller computes

    def memo(self, key: object, compute: Callable[[], _T]) -> _T:
        """``compute()``, computed once per ``key`` for these candidates (a backend's
        figures that depend only on tiles and on what ``key`` names)."""
        if key in self._memo:
            return cast(_T, self._memo[key])
        found = self._memo[key] = compute()
        return found

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
                found = np.stack([self.value(e) for e in key], axis=1)
            else:
                found = np.ones((self.count, 0), np.int64)
            self._columns[key] = found
        return found

    def padded_columns(self, exprs: Sequence[ir.AffineExpr]) -> np.ndarray:
        """:meth:`columns` with every size rounded up to a power of two."""
        key = tuple(exprs)
        found = self._padded.get(key)
        if found is None:
            found = self._padded[key] = padded(self.columns(key))
        return found

    def padded_elements(self, exprs: Sequence[ir.AffineExpr]) -> np.ndarray:
        """Per candidate, the product of the padded sizes."""
        key = tuple(exprs)
        found = self._elements.get(key)
        if found is None:
            found = self._elements[key] = np.prod(self.padded_columns(key), axis=1, dtype=np.int64)
        return found
