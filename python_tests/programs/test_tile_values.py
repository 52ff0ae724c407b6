"""The check one runtime value at a time (``benchmarks/tile_values.py``): its sampling of
runtime values and its box containment, against ``Box.contains`` (the tile picture's
definition of a box) on random boxes."""

from __future__ import annotations

import numpy as np
import pytest

import tile_values  # noqa: E402  (benchmarks/ is on the tests' path: pytest's pythonpath)

from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.symbolic_tiling.tile_picture import Box, ValueBoxes


def test_runtime_values_are_all_when_few_else_first_last_and_between() -> None:
    few = IndexingMap.parse("(d0){rt0} -> (rt0, d0), domain: d0 in [0, 3], rt0 in [2, 4]")
    assert tile_values.sample_values(few, 16) == [(2,), (3,), (4,)]
    many = IndexingMap.parse("(d0){rt0} -> (rt0, d0), domain: d0 in [0, 3], rt0 in [0, 299]")
    picked = tile_values.sample_values(many, 4)
    assert picked == [(0,), (100,), (199,), (299,)]
    two = IndexingMap.parse("(d0){rt0, rt1} -> (rt0, rt1), domain: d0 in [0, 3], rt0 in [1, 3], rt1 in [10, 14]")
    every = tile_values.sample_values(two, 15)
    assert every == [(a, b) for a in range(1, 4) for b in range(10, 15)]
    sampled = tile_values.sample_values(two, 3)
    assert sampled == [(1, 10), (2, 12), (3, 14)]
    assert tile_values.sample_values(IndexingMap.parse("(d0) -> (d0), domain: d0 in [0, 3]"), 4) == [()]


def test_a_pinned_map_reads_at_its_value_only() -> None:
    m = IndexingMap.parse("(d0){rt0} -> (rt0, d0), domain: d0 in [0, 3], rt0 in [0, 299]")
    _, images = tile_values.pinned(m, (7,)).enumerate()
    assert sorted(map(tuple, images.tolist())) == [(7, d) for d in range(4)]


@pytest.mark.parametrize("seed", range(4))
def test_box_containment_agrees_with_box_contains(seed: int) -> None:
    """Random boxes (sizes 0-3, strides 0-2, offsets over and off the edge) and elements:
    the painted grid (_covered) and the per-box test (_inside) say what Box.contains says."""
    rng = np.random.default_rng(seed)
    for _ in range(300):
        rank = int(rng.integers(1, 4))
        sizes = tuple(int(x) for x in rng.integers(0, 4, rank))
        strides = tuple(int(x) for x in rng.integers(0, 3, rank))
        offsets = rng.integers(-3, 8, (int(rng.integers(1, 4)), rank))
        boxes = ValueBoxes("x", sizes, strides, np.zeros((len(offsets), 0), np.int64), offsets)
        elements = rng.integers(0, 10, (int(rng.integers(1, 30)), rank))
        want = [any(Box(tuple(map(int, o)), sizes, strides).contains(tuple(map(int, e))) for o in offsets)
                for e in elements]
        assert tile_values._covered(elements, boxes, np.arange(len(offsets))).tolist() == want
        each = np.zeros(len(elements), dtype=bool)
        for o in offsets:
            each |= tile_values._inside(elements - o, boxes)
        assert each.tolist() == want
