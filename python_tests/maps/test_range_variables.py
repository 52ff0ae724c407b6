"""Merging summed range variables and projecting out those only constraints use
(:mod:`hlo_indexing.maps.range_variables`): the relation never changes.

Each map is given as XLA text; both it and its reduction are enumerated point by point
with the tests' own evaluator (:func:`helpers.image_sets`), each over its own ranges."""

from __future__ import annotations

import random

import pytest

from hlo_indexing import IndexingMap
from hlo_indexing.maps.range_variables import (
    merge_summed_variables,
    project_constraint_variables,
    reduce_range_variables,
)
from helpers import image_sets


def relation(m: IndexingMap) -> dict:
    """dims -> images, enumerated over ``m``'s own ranges."""
    boxes = [range(v.bounds.lower, v.bounds.upper + 1) for v in m.dim_vars + m.symbol_vars]
    return image_sets(m, boxes[: m.num_dims], boxes[m.num_dims :])


def same_relation(before: IndexingMap, after: IndexingMap) -> None:
    # A dimension range the reduction narrowed leaves out points without image only.
    assert before.dim_vars == after.dim_vars or all(
        a.bounds.lower >= b.bounds.lower and a.bounds.upper <= b.bounds.upper
        for a, b in zip(after.dim_vars, before.dim_vars)
    )
    assert relation(after) == relation(before)


def test_a_chain_of_windows_reads_through_one_variable_per_dimension():
    m = IndexingMap.parse(
        "(d0, d1)[s0, s1, s2, s3] -> (d0 + s0 + s2, d1 + s1 + s3), "
        "domain: d0 in [0, 5], d1 in [0, 5], s0 in [0, 2], s1 in [0, 2], s2 in [0, 2], s3 in [0, 2]"
    )
    reduced = reduce_range_variables(m)
    assert [(v.bounds.lower, v.bounds.upper) for v in reduced.range_vars] == [(0, 4), (0, 4)]
    same_relation(m, reduced)


def test_a_padded_chains_nested_bounds_collapse_one_by_one():
    # Three padded windows composed: each inner partial sum must stay inside its tensor.
    m = IndexingMap.parse(
        "(d0)[s0, s1, s2, s3] -> (s0 + s1 + s2 + s3 - 3), domain: d0 in [0, 3], "
        "s0 in [0, 2], s1 in [0, 2], s2 in [0, 2], s3 in [0, 7], "
        "s2 + s3 in [1, 8], s1 + s2 + s3 in [2, 9], s0 + s1 + s2 + s3 in [3, 10]"
    )
    reduced = reduce_range_variables(m)
    assert len(reduced.range_vars) == 1 and not reduced.constraints
    same_relation(m, reduced)


#: (what the case shows, the rewrite, the map, range variables left).
REDUCED = [
    (
        # a weight gradient through a strided padded chain: the chain's positions are
        # existential, their sum's parity fixed by the stride
        "a strided chain inside a mod is absorbed",
        reduce_range_variables,
        "(d0)[s0, s1, s2, s3] -> (s0), domain: d0 in [0, 2], s0 in [0, 2], s1 in [0, 2], s2 in [0, 2], "
        "s3 in [0, 7], (s1 + s2 + s3) mod 2 in [0, 0], d0 + s3 in [1, 8], s2 + s3 in [1, 8], s1 + s2 + s3 in [2, 9]",
        1,
    ),
    (
        # taps two apart: every window variable is a term 2 * s of its sums
        "a dilated padded chain collapses",
        reduce_range_variables,
        "(d0)[s0, s1, s2] -> (d0 + s0 * 2 + s1 * 2 + s2 * 2 - 6), domain: d0 in [0, 7], "
        "s0 in [0, 2], s1 in [0, 2], s2 in [0, 2], "
        "d0 + s2 * 2 in [2, 9], d0 + s1 * 2 + s2 * 2 in [4, 11], d0 + s0 * 2 + s1 * 2 + s2 * 2 in [6, 13]",
        1,
    ),
    (
        # 2 * s1 in two constraints: the real shadow is not the integer one (r = 1 has no s1)
        "a variable in two scaled constraints is kept",
        project_constraint_variables,
        "(d0)[s0, s1] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 3], s1 in [0, 3], "
        "s0 + s1 * 2 in [1, 2], d0 - s1 * 2 in [-3, -1]",
        2,
    ),
    (
        "a variable only constraints use is projected out",
        project_constraint_variables,
        "(d0)[s0, s1] -> (d0 + s0), domain: d0 in [0, 9], s0 in [0, 2], s1 in [0, 1], "
        "s0 - s1 in [1, 1], d0 + s1 in [0, 5]",
        1,
    ),
]


@pytest.mark.parametrize("rewrite, text, left", [case[1:] for case in REDUCED], ids=[case[0] for case in REDUCED])
def test_reductions_keep_the_relation(rewrite, text, left):
    m = IndexingMap.parse(text)
    reduced = rewrite(m)
    assert len(reduced.range_vars) == left
    same_relation(m, reduced)


def test_a_variable_an_equality_fixes_is_replaced_by_its_value():
    m = IndexingMap.parse("(d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 31], d1 in [0, 9], s0 in [0, 31], -d0 + s0 in [0, 0]")
    reduced = reduce_range_variables(m)
    assert not reduced.range_vars and reduced.is_identity
    same_relation(m, reduced)


def test_projection_finds_an_empty_map():
    m = IndexingMap.parse("(d0)[s0] -> (d0), domain: d0 in [0, 9], s0 in [0, 2], d0 + s0 in [20, 30]")
    reduced = project_constraint_variables(m)
    assert reduced.is_known_empty()
    assert relation(m) == {}


@pytest.mark.parametrize(
    "text",
    [
        # 3 * s1 in an interval 2 wide: some values of s0 have no integer s1 (the real shadow is wider)
        "(d0)[s0, s1] -> (d0 + s0), domain: d0 in [0, 9], s0 in [0, 4], s1 in [0, 1], s0 + s1 * 3 in [4, 5]",
        # s1 inside a mod
        "(d0)[s0, s1] -> (d0 + s0), domain: d0 in [0, 9], s0 in [0, 4], s1 in [0, 3], (s0 + s1) mod 2 in [0, 0]",
        # s0 and s1 summed with different coefficients
        "(d0)[s0, s1] -> (d0 + s0 + s1 * 2), domain: d0 in [0, 9], s0 in [0, 1], s1 in [0, 3]",
        # s0 also alone
        "(d0)[s0, s1] -> (d0 + s0 + s1, s0), domain: d0 in [0, 9], s0 in [0, 1], s1 in [0, 3]",
        # runtime variables are values read at run time: never merged
        "(d0){rt0, rt1} -> (d0 + rt0 + rt1), domain: d0 in [0, 9], rt0 in [0, 1], rt1 in [0, 3]",
    ],
)
def test_what_cannot_be_reduced_exactly_is_kept(text):
    m = IndexingMap.parse(text)
    assert reduce_range_variables(m) is m


def test_merging_leaves_variables_of_different_sums_alone():
    m = IndexingMap.parse(
        "(d0)[s0, s1, s2] -> ((d0 + s0 + s1) floordiv 2, s2), domain: d0 in [0, 9], s0 in [0, 1], s1 in [0, 3], s2 in [0, 4]"
    )
    merged = merge_summed_variables(m)
    assert len(merged.range_vars) == 2
    same_relation(m, merged)


# ------------------------------------------------------------ random maps


def _term(rng: random.Random, names: list[str]) -> str:
    name = rng.choice(names)
    kind = rng.random()
    if kind < 0.1:
        return f"({name} mod 3)"
    if kind < 0.2:
        return f"{name} * 2"
    return f"{name} * -1" if kind < 0.35 else name


def random_map(rng: random.Random) -> IndexingMap:
    """Sums of range variables in results and constraints, a few non-unit terms."""
    dims = [f"d{i}" for i in range(rng.randint(1, 2))]
    symbols = [f"s{i}" for i in range(rng.randint(2, 5))]
    summed = rng.sample(symbols, rng.randint(0, len(symbols)))
    first = " + ".join([dims[0]] + summed)
    results = [first if rng.random() < 0.7 else f"({first}) floordiv 2", dims[-1]]
    domain = [f"{d} in [0, {rng.randint(0, 4)}]" for d in dims]
    domain += [f"{s} in [{rng.randint(-1, 1)}, {rng.randint(1, 3)}]" for s in symbols]
    for _ in range(rng.randint(0, 4)):
        terms = [_term(rng, symbols)] + [_term(rng, dims + symbols) for _ in range(rng.randint(0, 3))]
        lower = rng.randint(-3, 4)
        domain.append(f"{' + '.join(terms)} in [{lower}, {lower + rng.randint(0, 5)}]")
    return IndexingMap.parse(f"({', '.join(dims)})[{', '.join(symbols)}] -> ({', '.join(results)}), domain: {', '.join(domain)}")


def random_chain(rng: random.Random) -> IndexingMap:
    """A composed chain of padded windows: the result reads ``d0 * c + s0 + ... + sk``,
    and each suffix sum of the chain is bounded (a position inside a padded tensor)."""
    symbols = [f"s{i}" for i in range(rng.randint(2, 4))]
    scale = rng.choice([1, 1, 2])
    dilation = rng.choice([1, 1, 2, 3])  # a dilated window's taps
    terms = [f"d0 * {scale}"] + [f"{s} * {dilation}" if rng.random() < 0.85 else f"{s} * 2" for s in symbols]
    domain = [f"d0 in [0, {rng.randint(1, 5)}]"] + [f"{s} in [0, {rng.randint(1, 2)}]" for s in symbols]
    for k in range(len(symbols)):
        if rng.random() < 0.8:
            lower = rng.randint(0, 2 + len(symbols) - k)
            domain.append(f"{' + '.join([terms[0]] + terms[1 + k:])} in [{lower}, {lower + rng.randint(2, 8)}]")
    if rng.random() < 0.3:  # a strided window's parity
        domain.append(f"({' + '.join(terms[1:])}) mod 2 in [0, 0]")
    return IndexingMap.parse(f"(d0)[{', '.join(symbols)}] -> ({' + '.join(terms)} - 2), domain: {', '.join(domain)}")


def test_reductions_of_random_maps_keep_their_relation():
    rng = random.Random(20261128)
    reduced_count = 0
    for k in range(400):
        try:
            m = random_map(rng) if k % 4 else random_chain(rng)
        except ValueError:  # e.g. a constraint the parser folds to an empty range
            continue
        reduced = reduce_range_variables(m)
        if reduced.num_symbols < m.num_symbols:
            reduced_count += 1
        same_relation(m, reduced)
    assert reduced_count > 100  # the generator exercises the rewrites
