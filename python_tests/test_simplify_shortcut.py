"""IndexingMap.simplify gives a map back at once when the simplifier has nothing to
rewrite in it (IndexingMap._plain); over every small map built from a few result forms,
ranges (points and empty ones included) and constraints, that must be exactly what the
simplifier itself returns."""

from __future__ import annotations

import itertools

import pytest

from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.simplifier import simplify_parts
from hlo_indexing.maps.variables import MapParts

RESULTS = ["d0", "d1", "s0", "3", "d0 + d1", "d1 mod 2", "s0 floordiv 2"]
RANGES = ["[0, 0]", "[0, 3]", "[2, 5]", "[3, 2]"]
CONSTRAINTS = ["", ", d0 mod 2 in [0, 0]", ", d1 + s0 in [0, 100]"]


def maps():
    for count in (0, 1, 2):
        for results in itertools.product(RESULTS, repeat=count):
            for d0, d1, s0 in itertools.product(RANGES, repeat=3):
                for constraint in CONSTRAINTS:
                    text = f"(d0, d1)[s0] -> ({', '.join(results)}), domain: d0 in {d0}, d1 in {d1}, s0 in {s0}{constraint}"
                    yield IndexingMap.parse(text, allow_empty_ranges=True)


def _simplified_in_full(m: IndexingMap) -> IndexingMap:
    """What the simplifier itself makes of ``m`` (no shortcut, no memo)."""
    if m.is_known_empty():
        return m
    parts = MapParts(m.affine_map, m.dim_vars, m.range_vars, m.runtime_vars, dict(m.constraints))
    simplified = simplify_parts(parts)
    if simplified is None:
        return IndexingMap.known_empty(m.num_dims, m.num_symbols, m.num_results, m.context)
    return m if simplified is parts else IndexingMap(*simplified)


@pytest.mark.slow
def test_shortcut_agrees_with_the_simplifier() -> None:
    plain = 0
    for m in maps():
        expected = _simplified_in_full(m)
        got = m.simplify()
        assert got == expected and str(got) == str(expected), str(m)
        plain += m._plain()
    assert plain > 100  # the shortcut is taken, not only refused
