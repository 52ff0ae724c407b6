"""Symbolic tiles of indexing maps, checked by enumeration: for generated maps and every
tile size where the tile's constraints hold, every element the map reads from the tile
``[0, t)`` lies in the derived tile ``offset + stride * iota(size)`` (soundness), and
along each result dimension the derived strided interval holds nothing else
(exactness per dimension, which XLA's constraints promise; a tile is a hyper-rectangle,
so a map reading a diagonal reads only part of it)."""

from __future__ import annotations

import itertools

import pytest

hypothesis = pytest.importorskip("hypothesis")  # test dependency (pyproject's test extra)
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_indexing.maps.algebra import compose
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.symbolic_tiling.constraints import ConstraintExpression
from hlo_indexing.symbolic_tiling.symbolic_tile import NotATile, SymbolicTile, symbolic_tile
from hlo_indexing.symbolic_tiling.tiled_fusion import _selects_results


def read_by_tile(m: IndexingMap, tile_sizes: list[int], runtime: list[int] = ()) -> set[tuple[int, ...]]:
    """Every element the map reads for the dimension points in the tile at offset 0
    (runtime variables at the given values)."""
    points, images = m.enumerate()
    keep = (points[:, : m.num_dims] < [m.dim_ranges[i].lower + t for i, t in enumerate(tile_sizes)]).all(axis=1)
    first_runtime = m.num_dims + len(m.range_vars)
    for j, value in enumerate(runtime):
        keep &= points[:, first_runtime + j] == value
    return {tuple(row) for row in images[keep].tolist()}


def tile_elements(tile: SymbolicTile, tile_sizes: list[int], runtime: list[int]) -> set[tuple[int, ...]]:
    offsets, sizes, strides = tile.evaluate(tile_sizes, runtime)
    axes = [[o + k * s for k in range(n)] for o, n, s in zip(offsets, sizes, strides)]
    return set(itertools.product(*axes))


def check_map(m: IndexingMap) -> int:
    """Soundness and exactness at every tile size where the constraints hold; returns
    how many tile sizes were checked."""
    tile = symbolic_tile(m)
    if isinstance(tile, NotATile):
        return 0
    checked = 0
    for sizes in itertools.product(*(range(1, r.size + 1) for r in m.dim_ranges)):
        if not tile.satisfies_constraints(list(sizes)):
            continue
        read = read_by_tile(m, list(sizes))
        covered = tile_elements(tile, list(sizes), [])
        assert read <= covered, f"{m} at {sizes}: reads {sorted(read - covered)} outside {tile}"
        offsets, got_sizes, strides = tile.evaluate(list(sizes))
        for k, (o, n, s) in enumerate(zip(offsets, got_sizes, strides)):
            values = {element[k] for element in read}
            assert values == {o + s * j for j in range(n)}, f"{m} at {sizes}: result {k} takes {sorted(values)}, tile {tile}"
        checked += 1
    return checked


# Strided terms XLA's derivation handles, and some it refuses (a shifted floordiv).
TERMS = [
    "d{i}",
    "d{i} * {c}",
    "d{i} floordiv {k}",
    "d{i} mod {k}",
    "(d{i} floordiv {k}) mod {m}",
    "(d{i} mod {km}) floordiv {k}",
    "(d{i} mod {m}) floordiv {k}",
    "{c}",
    "(d{i} + {c}) floordiv {k}",
]


@st.composite
def small_maps(draw: st.DrawFn) -> IndexingMap:
    n_dims = draw(st.integers(1, 2))
    sizes = [draw(st.integers(1, 12)) for _ in range(n_dims)]
    results = []
    for _ in range(draw(st.integers(1, 2))):
        terms = []
        for _ in range(draw(st.integers(1, 2))):
            template = draw(st.sampled_from(TERMS))
            k, m = draw(st.sampled_from([2, 3, 4])), draw(st.sampled_from([2, 3]))
            terms.append(
                template.format(
                    i=draw(st.integers(0, n_dims - 1)),
                    j=draw(st.integers(0, n_dims - 1)),
                    c=draw(st.sampled_from([1, 2, 3, 4, -1])),
                    k=k,
                    m=m,
                    km=k * m,
                )
            )
        results.append(" + ".join(terms))
    dims = ", ".join(f"d{i}" for i in range(n_dims))
    domain = ", ".join(f"d{i} in [0, {n - 1}]" for i, n in enumerate(sizes))
    return IndexingMap.parse(f"({dims}) -> ({', '.join(results)}), domain: {domain}")


@settings(max_examples=150, deadline=None)
@given(small_maps())
def test_tiles_of_generated_maps_are_sound_and_exact(m: IndexingMap) -> None:
    check_map(m)


def test_a_sum_whose_terms_step_in_opposite_directions_lets_one_term_vary() -> None:
    """``-d0 + 3 * d1`` over a 3x2 tile reads 0, -1, -2, 3, 2, 1: no progression, although
    the strides' magnitudes nest (hypothesis found the tile claimed valid there, reading
    [-5, 0]). One term may vary, not both."""
    m = IndexingMap.parse("(d0, d1) -> (-d0 + d1 * 3), domain: d0 in [0, 2], d1 in [0, 1]")
    tile = symbolic_tile(m)
    assert not isinstance(tile, NotATile)
    assert not tile.satisfies_constraints([3, 2])
    assert tile.satisfies_constraints([3, 1]) and tile.satisfies_constraints([1, 2])
    assert check_map(m) == 4


@settings(max_examples=100, deadline=None)
@given(small_maps())
def test_a_simplified_map_tiles_the_same_when_the_caller_says_so(m: IndexingMap) -> None:
    """``symbolic_tile(m, simplified=True)`` skips simplifying a map its caller knows to be
    simplified; the tile is the one derived after simplifying (text and constraints)."""
    simplified = m.simplify()
    if simplified.is_known_empty():
        return
    told, derived = symbolic_tile(simplified, simplified=True), symbolic_tile(simplified)
    assert str(told) == str(derived) and told == derived, simplified
    check_map(simplified)


@settings(max_examples=100, deadline=None)
@given(small_maps(), st.data())
def test_a_selection_of_a_simplified_maps_results_is_simplified(m: IndexingMap, data: st.DataObject) -> None:
    """What the tiling analysis relies on to skip simplifying a composition after a
    simplified map that only selects its results (``tiled_fusion._selects_results``):
    such a map is its own simplification."""
    consumer = m.simplify()
    if consumer.is_known_empty() or consumer.constraints or consumer.num_results == 0:
        return
    picks = data.draw(st.lists(st.integers(0, consumer.num_results - 1), max_size=3))
    mids = ", ".join(f"d{i}" for i in range(consumer.num_results))
    results = ", ".join([f"d{k}" for k in picks] + ["0"] * data.draw(st.integers(0, 1)))
    domain = ", ".join(f"d{i} in [{lo}, {hi}]" for i, (lo, hi) in enumerate(
        (b.lower, b.upper) for b in (consumer.expr_bounds(e) for e in consumer.results)))
    producer = IndexingMap.parse(f"({mids}) -> ({results}), domain: {domain}")
    selected = compose(consumer, producer)
    if _selects_results(selected, consumer):
        assert selected.simplify() == selected and str(selected.simplify()) == str(selected), f"{consumer} then {producer}"


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8), st.integers(0, 6), st.sampled_from(["d0 + rt0", "d0 * 2 + rt0", "-d0 + rt0 + 7"]))
def test_runtime_offsets_are_sound_and_exact_at_every_runtime_value(size: int, top: int, result: str) -> None:
    m = IndexingMap.parse(f"(d0){{rt0}} -> ({result}), domain: d0 in [0, {size - 1}], rt0 in [0, {top}]")
    tile = symbolic_tile(m)
    assert isinstance(tile, SymbolicTile), tile
    for sizes in range(1, size + 1):
        for rt in range(top + 1):
            assert read_by_tile(m, [sizes], [rt]) == tile_elements(tile, [sizes], [rt])


@pytest.mark.parametrize(
    "text",
    [
        # reshape 2x3x4 -> 24 (the collapsing reshape XLA's constraints are about)
        "(d0) -> (d0 floordiv 12, (d0 floordiv 4) mod 3, d0 mod 4), domain: d0 in [0, 23]",
        # reshape 24 -> 4x6
        "(d0, d1) -> (d0 * 6 + d1), domain: d0 in [0, 3], d1 in [0, 5]",
        # reverse of a combining reshape (negative strides)
        "(d0, d1) -> (-(d0 * 6) - d1 + 23), domain: d0 in [0, 3], d1 in [0, 5]",
        # reduction with a range variable and a slice
        "(d0)[s0] -> (s0, d0 * 2 + 1), domain: d0 in [0, 4], s0 in [0, 3]",
        # bitcast 8 -> 8x1 as XLA:CPU compiles a keepdims mean (a unit dimension in a sum;
        # it was refused: 'strides of the sum do not nest: 8 != 1')
        "(d0, d1) -> (d0 + d1), domain: d0 in [0, 7], d1 in [0, 0]",
        "(d0, d1, d2) -> (d0 * 4 + d1 + d2), domain: d0 in [0, 2], d1 in [0, 3], d2 in [0, 0]",
        "(d0, d1)[s0] -> (d1 * 3 + d0 + s0), domain: d0 in [0, 0], d1 in [0, 4], s0 in [0, 2]",
        # Issue #28: a split of a split as the simplifier writes it, (d mod 32) floordiv 16
        # = (d floordiv 16) mod 2 (reshape chains), and a unit dimension under a mod or a
        # floordiv (XLA:CPU's bitcasts in diffrax and jax-md programs).
        "(d0) -> ((d0 mod 32) floordiv 16, d0 mod 16), domain: d0 in [0, 63]",
        "(d0) -> ((d0 mod 12) floordiv 4), domain: d0 in [0, 23]",
        "(d0, d1) -> (0, (d0 + d1) mod 2), domain: d0 in [0, 1], d1 in [0, 0]",
        "(d0, d1) -> ((d0 + d1 * 5) floordiv 4, (d0 + d1) mod 4), domain: d0 in [0, 15], d1 in [0, 0]",
        # a unit dimension's term beside a split (XLA:CPU's bitcast f32[2,2]{1,0} ->
        # f32[4,1]{0,1} in a jax-md program, and a keras one): XLA refuses the sum,
        # 'cannot combine the size (d0 + 1) floordiv 2'; the unit term is always 0
        "(d0, d1) -> (d1 * 2 + d0 floordiv 2, d0 mod 2), domain: d0 in [0, 3], d1 in [0, 0]",
        "(d0, d1, d2) -> (d1 * 4 + d0 floordiv 8, d0 mod 8, d2), domain: d0 in [0, 31], d1 in [0, 0], d2 in [0, 2]",
    ],
)
def test_tiles_of_reshape_like_maps(text: str) -> None:
    assert check_map(IndexingMap.parse(text)) > 0


@pytest.mark.parametrize(
    "text",
    [
        # a convolution's input read with the window tap a tiling parameter (XLA's
        # SimpleConvolutionWithRegions: '(0, d0 + d3, 0)'): the strides do not nest, the
        # tile is the window, t0 + t3 - 1 elements
        "(d0, d1) -> (d0 + d1), domain: d0 in [0, 2], d1 in [0, 5]",
        # the window read whole (a range variable), a strided output, three taps
        "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 2]",
        "(d0, d1) -> (d0 * 2 + d1 * 2), domain: d0 in [0, 3], d1 in [0, 2]",
        "(d0, d1, d2) -> (d0 + d1 + d2, d2), domain: d0 in [0, 2], d1 in [0, 1], d2 in [0, 3]",
    ],
)
def test_tiles_of_window_sums(text: str) -> None:
    assert check_map(IndexingMap.parse(text)) > 0


@pytest.mark.parametrize(
    "text",
    [
        # strides 1 and -1 (a reversed window) or 1 and 2 neither nest nor share a step
        "(d0, d1) -> (d0 - d1 + 2), domain: d0 in [0, 2], d1 in [0, 2]",
        "(d0, d1) -> (d0 + d1 * 2), domain: d0 in [0, 2], d1 in [0, 2]",
    ],
)
def test_sums_that_neither_nest_nor_share_a_stride_are_not_tiles(text: str) -> None:
    assert isinstance(symbolic_tile(IndexingMap.parse(text)), NotATile)


def test_a_map_that_is_not_a_tile_says_why() -> None:
    tile = symbolic_tile(IndexingMap.parse("(d0) -> (d0 mod 4 + d0 floordiv 2), domain: d0 in [0, 7]"))
    assert isinstance(tile, NotATile) and tile.reason


def test_runtime_variables_stay_in_the_offsets() -> None:
    m = IndexingMap.parse("(d0){rt0} -> (d0 + rt0), domain: d0 in [0, 3], rt0 in [0, 5]")
    tile = symbolic_tile(m)
    assert isinstance(tile, SymbolicTile)
    for rt in range(6):
        assert tile.evaluate([2], [rt]) == ((rt,), (2,), (1,))
    assert "rt_vars: s0 in [0, 5]" in str(tile)


def test_constraint_expressions_combine_as_disjunctions_of_conjunctions() -> None:
    from hlo_indexing.dialect_glue.context import default_context
    from hlo_indexing.maps import affine_expr as ax
    from hlo_indexing.maps.interval import Interval

    d0 = ax.dim(0, default_context())
    even = ConstraintExpression.of(ax.mod(d0, 2), Interval(0, 0))
    small = ConstraintExpression.of(d0, Interval(1, 3))
    both, either = even & small, even | small
    for value in range(1, 9):
        assert both.is_satisfied_by([value]) == (value % 2 == 0 and value <= 3)
        assert either.is_satisfied_by([value]) == (value % 2 == 0 or value <= 3)
    assert not (small & ConstraintExpression.of(d0, Interval(5, 6))).satisfiable
    assert (even | ConstraintExpression.always()).is_always_satisfied
    assert str(either) == "d0 in [1, 3] || d0 mod 2 in [0, 0]"


def test_constraint_conjunctions_stay_factored() -> None:
    # A fusion's constraints are the conjunction of its tiles' disjunctions; multiplied
    # out they grow as 2**k (issue #28). Kept factored: linear, and the same truth table.
    from hlo_indexing.dialect_glue.context import default_context
    from hlo_indexing.maps import affine_expr as ax
    from hlo_indexing.maps.interval import Interval

    ctx = default_context()
    d = [ax.dim(i, ctx) for i in range(3)]
    zero = Interval(0, 0)

    def divides_or_multiple(size: object, n: int) -> ConstraintExpression:
        return ConstraintExpression.of(ax.mod(ax.constant(n, ctx), size), zero) | ConstraintExpression.of(ax.mod(size, n), zero)

    factors = [divides_or_multiple(d[i % 3], n) for i, n in enumerate([2, 3, 4, 6, 8, 12, 16, 24, 32])]
    combined = ConstraintExpression.always()
    for factor in factors + factors:  # each twice: kept once
        combined = combined & factor
    assert combined.size == sum(f.size for f in factors)
    for sizes in itertools.product(range(1, 13), repeat=3):
        assert combined.is_satisfied_by(list(sizes)) == all(f.is_satisfied_by(list(sizes)) for f in factors)
    # A bound implying one alternative drops the factor; one contradicting an
    # alternative removes it (a factor left with one alternative becomes a bound).
    small = ConstraintExpression.of(d[0], Interval(1, 4))
    implied = small & (ConstraintExpression.of(d[0], Interval(1, 8)) | ConstraintExpression.of(d[1], Interval(2, 2)))
    assert str(implied) == "d0 in [1, 4]"
    pruned = small & (ConstraintExpression.of(d[0], Interval(6, 8)) | ConstraintExpression.of(d[1], Interval(2, 2)))
    assert str(pruned) == "d0 in [1, 4] && d1 in [2, 2]"
    assert not (small & (ConstraintExpression.of(d[0], Interval(6, 8)) | ConstraintExpression.of(d[0], Interval(9, 9)))).satisfiable
    assert str(small & factors[0]) == "d0 in [1, 4] && (2 mod d0 in [0, 0] || d0 mod 2 in [0, 0])"
