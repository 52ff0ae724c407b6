"""IndexingMap: XLA text format, bad input, attribute form, and the spec's
simplification examples (checked as text and, independently, by enumeration)."""

from __future__ import annotations

import itertools

import pytest

from hlo_indexing import IndexingMap, ParseError
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import IntegerOverflowError
from hlo_indexing.maps.algebra import compose
from hlo_indexing.maps.attributes import indexing_map_from_attribute, indexing_map_to_attribute
from hlo_indexing.maps.variables import Interval, Variable


def images(m: IndexingMap) -> dict:
    """dims -> sorted images, by brute force over the box of ranges (test-side code)."""
    out: dict = {}
    points, values = m.enumerate()
    for point, value in zip(points.tolist(), values.tolist()):
        out.setdefault(tuple(point[: m.num_dims]), set()).add(tuple(value))
    return out


# --------------------------------------------------------------- text format

ROUND_TRIPS = [
    "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 9], d1 in [0, 19], s0 in [0, 255]",
    "() -> ()",
    "UNDEFINED",
    "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 8], s0 in [0, 7], d0 mod 2 in [0, 0]",
    "(d0, d1)[range]{rt0, rt1} -> (d1, d0, range + rt0, rt1), domain: d0 in [0, 99], d1 in [0, 43], "
    "range in [-99, 99], rt0 in [0, 2], rt1 in [0, 7]",
    "(th_x, bl_x)[s0] -> (th_x * 4 + bl_x floordiv 2, s0), domain: th_x in [0, 3], bl_x in [0, 4], s0 in [0, 1]",
    "(bl_x) -> (bl_x floordiv 100663296), domain: bl_x in [0, 2415919103]",
]


@pytest.mark.parametrize("text", ROUND_TRIPS)
def test_print_parse_round_trip(text: str) -> None:
    m = IndexingMap.parse(text)
    assert str(m) == text
    assert IndexingMap.parse(str(m)) == m
    assert hash(IndexingMap.parse(str(m))) == hash(m)


def test_multiline_form_slash_and_unknown_indexing() -> None:
    m = IndexingMap.parse("(d0, d1) -> (d0 / 8,\n d1 mod 8),\ndomain:\nd0 in [0, 31],\nd1 in [0, 7]")
    assert str(m) == "(d0, d1) -> (d0 floordiv 8, d1 mod 8), domain: d0 in [0, 31], d1 in [0, 7]"
    assert IndexingMap.parse("unknown indexing").is_undefined
    assert IndexingMap.parse("KNOWN EMPTY").is_known_empty()


@pytest.mark.parametrize(
    "text, message, column",
    [
        ("(d0) -> (d0 + ), domain: d0 in [0, 9]", "expected an expression, found ')'", 15),
        ("(d0) -> (d0), domain: d0 in [9, 0]", "lower bound exceeds upper bound", 29),
        ("(d0)[s0] -> (d0), domain: d0 in [0, 9]", "expected ', s0 in [lo, hi]'", 39),
        ("(d0) -> (x), domain: d0 in [0, 9]", "unknown variable, found 'x'", 10),
        ("(d0) -> (d0 * d0), domain: d0 in [0, 9]", "non-affine product", 13),
        ("(d0) -> (d0), domain: d0 in [0, 9223372036854775808]", "does not fit in int64", 33),
        ("(d0) -> (d0), domain: d0 in [0, 9] junk", "expected end of indexing map, found 'junk'", 36),
        ("(d0) -> (min(d0, 3)), domain: d0 in [0, 9]", "'min' is not an affine expression", 10),
    ],
)
def test_bad_text_names_token_and_column(text: str, message: str, column: int) -> None:
    # A number outside int64 is the limit's own error (limits.INT64_MAX), located like a parse error.
    with pytest.raises((ParseError, IntegerOverflowError)) as info:
        IndexingMap.parse(text)
    assert message in info.value.message
    assert info.value.location.column == column
    assert str(info.value).startswith(f"<indexing map>:1:{column}: error: ")


def test_empty_range_is_known_empty_only_on_request() -> None:
    m = IndexingMap.parse("(d0) -> (d0), domain: d0 in [10, 0]", allow_empty_ranges=True)
    assert m.is_known_empty() and str(m) == "KNOWN EMPTY"
    assert IndexingMap.parse("(d0) -> (d0), domain: d0 in [0, 49], 0 in [10, 15]").is_known_empty()


def test_constructor_rejects_bad_counts_and_ranges() -> None:
    context = IndexingMap.parse("() -> ()").context
    with context:
        affine_map = ir.AffineMap.get_identity(2)
    with pytest.raises(ValueError, match="2 dimensions but 1 ranges"):
        IndexingMap(affine_map, [(0, 3)])
    with pytest.raises(ValueError, match="empty"):
        IndexingMap(affine_map, [(0, 3), (5, 1)])
    with pytest.raises(ValueError, match="int64"):
        IndexingMap(affine_map, [(0, 3), (0, 2**63)])


# --------------------------------------------------------------- attribute form


@pytest.mark.parametrize("text", ROUND_TRIPS + ["(d0)[s0]{rt0} -> (d0 + rt0), domain: d0 in [0, 3], s0 in [0, 1], rt0 in [0, 5], d0 + s0 in [1, 3]"])
def test_attribute_round_trip_through_mlir_text(text: str) -> None:
    m = IndexingMap.parse(text)
    attribute = indexing_map_to_attribute(m)
    with attribute.context:
        reparsed = ir.Attribute.parse(str(attribute))
    assert indexing_map_from_attribute(reparsed) == m


# --------------------------------------------------------------- simplification (spec)

SPEC_SIMPLIFICATIONS = [
    (
        "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]",
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]",
    ),
    (
        "(d0, d1, d2) -> ((100 * d0 + 10 * d1 + d2) floordiv 100, ((100 * d0 + 10 * d1 + d2) mod 100) floordiv 10, "
        "d2 mod 10), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
        "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
    ),
    (
        "(d0, d1, d2) -> ((16 * d0 + 4 * d1 + d2) floordiv 8, (16 * d0 + 4 * d1 + d2) mod 8), "
        "domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
        "(d0, d1, d2) -> (d0 * 2 + (d1 * 4 + d2) floordiv 8, (d1 * 4 + d2) mod 8), "
        "domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
    ),
    # The spec writes `-(-11 * d0 - d1 + 109) floordiv 11 + 9`; its stated result d0 holds
    # for the negation of the quotient, as XLA's test writes it.
    (
        "(d0, d1) -> (-((-11 * d0 - d1 + 109) floordiv 11) + 9), domain: d0 in [0, 9], d1 in [0, 10]",
        "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 10]",
    ),
]


@pytest.mark.parametrize("text, expected", SPEC_SIMPLIFICATIONS)
def test_spec_simplification_examples(text: str, expected: str) -> None:
    m = IndexingMap.parse(text)
    simplified = m.simplify()
    assert str(simplified) == expected
    assert images(simplified) == images(m)


def test_reshape_chain_cancels() -> None:
    """f32[10,10,10] -> f32[50,20] -> f32[10,10,10]: output -> p0 is the identity."""
    linear = "(d0 * 100 + d1 * 10 + d2)"
    to_50x20 = IndexingMap.parse(
        f"(d0, d1, d2) -> ({linear} floordiv 20, {linear} mod 20), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"
    )
    to_10x10x10 = IndexingMap.parse(
        "(d0, d1) -> ((d0 * 20 + d1) floordiv 100, ((d0 * 20 + d1) mod 100) floordiv 10, (d0 * 20 + d1) mod 10), "
        "domain: d0 in [0, 49], d1 in [0, 19]"
    )
    composed = compose(to_50x20, to_10x10x10).simplify()
    assert str(composed) == "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"
    expected = {p: {p} for p in itertools.product(range(10), repeat=3)}
    assert images(composed) == expected


def test_constraint_tightening_and_known_empty() -> None:
    m = IndexingMap.parse("(d0) -> (d0), domain: d0 in [0, 99], d0 floordiv 8 in [5, 11]").simplify()
    assert str(m) == "(d0) -> (d0), domain: d0 in [40, 95]"
    empty = IndexingMap.parse("(d0)[s0] -> (d0), domain: d0 in [0, 9], s0 in [0, 19], s0 floordiv 20 in [2, 2]")
    assert empty.simplify().is_known_empty()
    merged = IndexingMap.parse(
        "(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [-21, -2], s0 mod 2 in [0, 0], s0 mod 3 in [0, 0]"
    ).simplify()
    assert str(merged) == "(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [-18, -6], s0 mod 6 in [0, 0]"


def test_contains_point_agrees_with_enumerate_where_a_divisor_is_zero(context) -> None:
    m = IndexingMap.parse("(d0)[s0] -> (d0 floordiv s0), domain: d0 in [0, 3], s0 in [0, 2]", context)
    points, _ = m.enumerate()
    enumerated = {tuple(p) for p in points.tolist()}
    for d0 in range(4):
        for s0 in range(3):
            assert m.contains_point([d0], [s0]) == ((d0, s0) in enumerated)
    assert not m.contains_point([1], [0])
    with pytest.raises(ValueError, match="undefined map"):
        IndexingMap.undefined("no reason").contains_point([0])


def test_add_constraints_is_add_constraint_in_turn() -> None:
    """IndexingMap.add_constraints (one map built) gives the map add_constraint gives
    item by item: bounds on one expression intersected, a bare variable narrowed, a
    constant checked, an empty bound or range making the map known empty."""
    base = IndexingMap.parse("(d0, d1)[s0] -> (d0 + s0, d1), domain: d0 in [0, 9], d1 in [0, 7], s0 in [0, 3], d0 + d1 in [0, 12]")
    with base.context:
        d0, d1, s0 = ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1), ir.AffineSymbolExpr.get(0)
        items = [
            (d0 + d1, (2, 20)),
            (d0 + d1, (0, 1)),
            (d1, (2, 5)),
            (s0, (1, 9)),
            (d0 * 2 + s0, (3, 11)),
            (ir.AffineConstantExpr.get(4), (0, 5)),
            (ir.AffineConstantExpr.get(4), (5, 6)),
            (s0, (5, 6)),
            (d0 % 2, (1, 1)),
        ]
    checked = 0
    for count in range(4):
        for chosen in itertools.permutations(items, count):
            one_by_one = base
            for expr, interval in chosen:
                one_by_one = one_by_one.add_constraint(expr, interval)
            at_once = base.add_constraints(chosen)
            assert at_once == one_by_one and str(at_once) == str(one_by_one), chosen
            checked += at_once.is_known_empty()
    assert checked > 0  # some sequences end known empty


def test_maps_that_print_alike_are_ordered_by_origin_too() -> None:
    # Two maps with the same text whose range variable differs only by its origin (which
    # equality compares): sorted by text alone, a set of both came out of the JSON report
    # in hash order, so one module's report changed between processes.
    plain = IndexingMap.parse("()[s0] -> (s0), domain: s0 in [0, 7]")
    gathered = IndexingMap(plain.affine_map, [], [Variable(Interval(0, 7), origin="operand 1")])
    assert str(plain) == str(gathered) and plain != gathered
    assert plain.sort_key() < gathered.sort_key()
    assert sorted([gathered, plain], key=IndexingMap.sort_key) == sorted([plain, gathered], key=IndexingMap.sort_key)
    assert IndexingMap.parse(str(plain)).sort_key() == plain.sort_key()


SUM_CONSTRAINED = (
    "(d0, d1) -> ((d0 * 86 + d1) floordiv 64, (d0 * 86 + d1) mod 64, d1), "
    "domain: d0 in [0, 11], d1 in [0, 85], d0 * 86 + d1 in [0, 1023]"
)

RESULT_RANGE_MAPS = [
    SUM_CONSTRAINED,
    # constraints nested one in the other, and on a symbol's multiple
    "(d0)[s0] -> ((d0 * 3 + s0) floordiv 4 + s0 * 2), "
    "domain: d0 in [0, 20], s0 in [0, 9], d0 * 3 + s0 in [5, 40], (d0 * 3 + s0) floordiv 4 in [2, 7], s0 * 2 in [0, 10]",
    # no constraint: the bounds over the variable ranges
    "(d0, d1) -> (d0 - d1, d0 mod 3), domain: d0 in [2, 9], d1 in [-4, 4]",
]


@pytest.mark.parametrize("text", RESULT_RANGE_MAPS)
def test_result_bounds_hold_every_image(text: str) -> None:
    m = IndexingMap.parse(text)
    _points, values = m.enumerate()
    ranges = m.result_bounds()
    assert len(ranges) == m.num_results
    for k, bounds in enumerate(ranges):
        assert bounds.lower <= int(values[:, k].min()) and int(values[:, k].max()) <= bounds.upper


def test_result_bounds_narrow_with_a_constraint_on_a_subexpression() -> None:
    # XLA's ComputeResultRanges example: the sum's constraint makes the ranges exact (brute
    # force), where the bounds over the variable ranges alone overshoot the floor division
    m = IndexingMap.parse(SUM_CONSTRAINED)
    _points, values = m.enumerate()
    exact = [(int(values[:, k].min()), int(values[:, k].max())) for k in range(m.num_results)]
    assert [(b.lower, b.upper) for b in m.result_bounds()] == exact
    assert m.expr_bounds(m.results[0]).upper > exact[0][1]


def test_result_bounds_of_an_undefined_map_is_an_error() -> None:
    with pytest.raises(ValueError, match="undefined map"):
        IndexingMap.undefined("no reason").result_bounds()
