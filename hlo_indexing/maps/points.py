"""Distinct values and rows of integer arrays (enumerated points, their images, keys
derived from them), found by sorting.

``np.unique`` of numpy 2.4 hashes a one-dimensional array before it sorts the result,
and views rows as opaque records for ``axis=0``: on millions of int64 values both are
5-20x slower than one ``np.sort`` or ``np.argsort`` and a comparison of neighbours (8M
values: 10.4 s against 0.5 s), so the enumerating analyses (coalescing, utilisation,
footprints, exactness) go through these functions. Each returns what ``np.unique``
would: distinct values in increasing order, rows in lexicographic order."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["distinct", "numbered_rows", "ranks", "row_ranks", "distinct_rows"]


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of a one-dimensional array, in increasing order."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def ranks(values: np.ndarray) -> tuple[np.ndarray, int]:
    """The rank of each value of a one-dimensional array among its distinct values
    (equal values, equal ranks; smaller values, smaller ranks) and how many there are."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64), 0
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.empty(len(ordered), dtype=bool)
    starts[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    sorted_ranks = np.cumsum(starts, dtype=np.int64) - 1
    out = np.empty(len(values), dtype=np.int64)
    out[order] = sorted_ranks
    return out, int(sorted_ranks[-1]) + 1


def row_ranks(rows: np.ndarray) -> tuple[np.ndarray, int]:
    """The lexicographic rank of each row of a ``[rows, columns]`` integer array among
    the distinct rows, and how many there are (one row of no columns: rank 0). Columns
    are folded in one at a time, re-ranked after each, so the keys stay below the square
    of the row count whatever the values."""
    if rows.shape[1] == 0:
        return np.zeros(len(rows), dtype=np.int64), min(len(rows), 1)
    number, count = ranks(rows[:, 0])
    for column in range(1, rows.shape[1]):
        column_ranks, column_count = ranks(rows[:, column])
        number, count = ranks(number * column_count + column_ranks)
    return number, count


def distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_index=True, return_inverse=True)``: the distinct
    rows in lexicographic order, the index of each one's first occurrence, and each row's
    place among them."""
    number, count = row_ranks(rows)
    order = np.argsort(number, kind="stable")  # rows of each rank together, first row first
    ordered = number[order]
    starts = np.ones(len(order), dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    first = order[starts]
    return rows[first], first, number


def numbered_rows(points: np.ndarray) -> tuple[np.ndarray, int]:
    """A number per row of ``points`` (a non-empty ``[rows, columns]`` integer array;
    equal rows, equal numbers) and a bound on the numbers: the rows' place in the box of
    their columns' ranges when the rows fill at least a quarter of it (numbers no row
    has count nothing), else their rank among the distinct rows."""
    low = points.min(axis=0)
    spans = tuple(int(high) - int(lowest) + 1 for high, lowest in zip(points.max(axis=0), low))  # no int64 overflow
    if math.prod(spans) <= 4 * len(points):
        return np.ravel_multi_index(tuple((points - low).T), spans), math.prod(spans)
    return row_ranks(points)
