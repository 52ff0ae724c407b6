"""Distinct values and rows by sorting (``hlo_indexing.maps.points``) against
``np.unique``, whose results they stand in for, on generated integer arrays: empty,
one column, repeated rows, values near int64's limits."""

from __future__ import annotations

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")  # the test extra installs it
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from hlo_indexing.maps.points import distinct, distinct_rows, numbered_rows, ranks, row_ranks  # noqa: E402

BUDGET = settings(max_examples=200, deadline=None)

#: Small value sets make repeats likely; the int64 limits check that keys do not overflow.
VALUES = st.one_of(
    st.integers(-3, 3),
    st.sampled_from([np.iinfo(np.int64).min, -1, 0, 1, np.iinfo(np.int64).max]),
    st.integers(-(1 << 40), 1 << 40),
)


def integer_arrays(dims: int) -> st.SearchStrategy[np.ndarray]:
    shape = hnp.array_shapes(min_dims=dims, max_dims=dims, min_side=0 if dims == 1 else 1, max_side=40)
    if dims == 2:
        shape = st.tuples(st.integers(0, 40), st.integers(1, 4))
    return hnp.arrays(np.int64, shape, elements=VALUES)


@BUDGET
@given(integer_arrays(1))
def test_distinct_values_and_their_ranks_are_numpys(values: np.ndarray) -> None:
    expected, inverse = np.unique(values, return_inverse=True)
    assert np.array_equal(distinct(values), expected)
    found, count = ranks(values)
    assert count == len(expected)
    assert np.array_equal(found, inverse.reshape(-1))


@BUDGET
@given(integer_arrays(2))
def test_distinct_rows_are_numpys(rows: np.ndarray) -> None:
    expected, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    found, found_first, found_inverse = distinct_rows(rows)
    assert np.array_equal(found, expected)
    assert np.array_equal(found_first, first)
    assert np.array_equal(found_inverse, inverse.reshape(-1))
    number, count = row_ranks(rows)
    assert count == len(expected) and np.array_equal(number, found_inverse)


@BUDGET
@given(integer_arrays(2).filter(len))
def test_numbered_rows_number_equal_rows_alike_and_stay_below_the_bound(rows: np.ndarray) -> None:
    number, bound = numbered_rows(rows)
    assert number.min() >= 0 and number.max() < bound
    _, inverse = np.unique(rows, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    # equal rows get equal numbers and different rows different numbers
    assert np.array_equal(inverse[:, None] == inverse[None, :], number[:, None] == number[None, :])
