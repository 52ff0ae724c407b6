"""Rows of enumerated points (:meth:`~hlo_indexing.maps.indexing_map.IndexingMap.enumerate`'s,
or columns derived from them) numbered as integers, for counting and grouping them with
one-dimensional numpy operations."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["numbered_rows"]


def numbered_rows(points: np.ndarray) -> tuple[np.ndarray, int]:
    """A number per row of ``points`` (a non-empty ``[rows, columns]`` integer array;
    equal rows, equal numbers) and a bound on the numbers: the rows' place in the box of
    their columns' ranges when the rows fill at least a quarter of it (numbers no row
    has count nothing), else their rank among the distinct rows."""
    low = points.min(axis=0)
    spans = tuple(int(n) for n in points.max(axis=0) - low + 1)
    if math.prod(spans) <= 4 * len(points):
        return np.ravel_multi_index(tuple((points - low).T), spans), math.prod(spans)
    distinct, number = np.unique(points, axis=0, return_inverse=True)
    return number.reshape(-1), len(distinct)
