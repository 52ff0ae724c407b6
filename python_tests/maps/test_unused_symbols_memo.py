"""remove_unused_symbols with the context's tables warm (the variables of each
expression, the verdicts on groups of constraints over symbols no result uses, shared
by every map of the context) gives exactly what it gives with them empty, for groups
that are satisfiable and groups that are not (the map is then known empty), over
ranges that change the verdict; and the map keeps its relation."""

from __future__ import annotations

import itertools

from hlo_indexing.dialect_glue.context import context_memo
from hlo_indexing.maps.algebra import remove_unused_symbols
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.memo import SATISFIABLE_TABLE, clear_memo

from helpers import image_sets

#: Constraints over s1, s2 (no result uses them): satisfiable or not depending on ranges.
DETACHED = ["s1 + s2 in [5, 5]", "s1 * 2 - s2 in [3, 3]", "(s1 + s2) mod 3 in [2, 2]", "s1 - s2 in [4, 9]"]
RANGES = ["[0, 1]", "[0, 3]", "[1, 6]"]


def maps() -> list[IndexingMap]:
    found = []
    for s1, s2 in itertools.product(RANGES, repeat=2):
        for first, second in itertools.combinations(DETACHED, 2):
            text = f"(d0)[s0, s1, s2] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1], s1 in {s1}, s2 in {s2}, d0 + s0 in [0, 3], {first}, {second}"
            found.append(IndexingMap.parse(text))
    return found


def test_warm_tables_give_the_cold_result_and_the_relation() -> None:
    all_maps = maps()
    cold = []
    for m in all_maps:
        clear_memo()
        cold.append(remove_unused_symbols(m, remember=False))
    clear_memo()
    warm = [remove_unused_symbols(m, remember=False) for m in all_maps]
    verdicts = context_memo(all_maps[0].context, SATISFIABLE_TABLE)
    assert True in verdicts.values() and False in verdicts.values()  # both kinds of group were decided
    empty = 0
    for m, expected, got in zip(all_maps, cold, warm):
        assert got == expected and str(got) == str(expected), str(m)
        assert got.num_symbols == 1 or got.is_known_empty(), str(got)
        assert image_sets(got, [range(4)], [range(7)] * got.num_symbols) == image_sets(m, [range(4)], [range(7)] * 3), str(m)
        empty += got.is_known_empty()
    assert 0 < empty < len(all_maps)
