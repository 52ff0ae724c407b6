"""The simplifier's table of normalized constraints (a constraint is normalized once
per context over the same ranges of its variables; later rounds and maps take the
outcome): a map simplified after many others that share its constraints, over other
ranges of the variables they use or not, is exactly the map simplified with the table
empty, and its relation is the input's."""

from __future__ import annotations

import itertools

from hlo_indexing.dialect_glue.context import context_memo
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.memo import NORMALIZED_CONSTRAINTS_TABLE, clear_memo
from hlo_indexing.maps.simplifier import simplify_parts

from helpers import image_sets

RANGES = ["[0, 3]", "[2, 9]", "[0, 15]"]
CONSTRAINTS = [
    "d0 + s0 in [0, 7]",
    "(d0 + s0) mod 4 in [0, 0]",
    "d1 floordiv 2 + s0 in [1, 5]",
    "d0 * 2 + d1 in [3, 9]",
    "s0 mod 3 in [1, 1]",
    "d1 * 4 + s0 * 4 + 2 in [4, 42]",
]


def maps() -> list[IndexingMap]:
    found = []
    for d0, d1, s0 in itertools.product(RANGES, repeat=3):
        for first, second in itertools.combinations(CONSTRAINTS, 2):
            text = f"(d0, d1)[s0] -> (d0 + s0, d1 floordiv 4), domain: d0 in {d0}, d1 in {d1}, s0 in {s0}, {first}, {second}"
            found.append(IndexingMap.parse(text))
    return found


def simplified(m: IndexingMap) -> IndexingMap:
    """``simplify_parts`` of ``m`` as a map (the known-empty map when it finds none)."""
    parts = m._parts()
    result = simplify_parts(parts)
    if result is None:
        return IndexingMap.known_empty(m.num_dims, m.num_symbols, m.num_results, m.context)
    return m if result is parts else IndexingMap._make(*result)


def test_a_warm_table_gives_the_cold_result() -> None:
    all_maps = maps()
    cold = []
    for m in all_maps:
        clear_memo()
        cold.append(simplified(m))
    clear_memo()
    warm = [simplified(m) for m in all_maps]
    table = context_memo(all_maps[0].context, NORMALIZED_CONSTRAINTS_TABLE)
    assert len(table) > 10  # the table is filled, so later maps find their constraints in it
    for m, expected, got in zip(all_maps, cold, warm):
        assert got == expected and str(got) == str(expected), str(m)


def test_simplified_maps_keep_their_relation() -> None:
    clear_memo()
    boxes = ([range(0, 16)] * 2, [range(0, 16)])
    for m in maps()[::7]:
        assert image_sets(simplified(m), *boxes) == image_sets(m, *boxes), str(m)
