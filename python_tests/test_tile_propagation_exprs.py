"""Tile expressions (hlo_indexing.symbolic_tiling): printing and parsing round-trip, and
simplification under bounds never changes a value -- both checked by evaluating at every
point of small variable ranges."""

from __future__ import annotations

import itertools

import pytest

from hlo_indexing.errors import IntegerOverflowError, NestingTooDeepError
from hlo_indexing.limits import MAX_NESTING_DEPTH
from hlo_indexing.symbolic_tiling.experimental.simplify import simplify
from hlo_indexing.symbolic_tiling.experimental.tile_expr import Expr, binary, parse_expr

hypothesis = pytest.importorskip("hypothesis")  # optional test dependency (test extra)
st = hypothesis.strategies

BOUNDS = {"tid_0": (0, 6), "tid_1": (0, 4), "rt_0": (0, 3)}


def _exprs():
    leaves = st.one_of(st.integers(-20, 40).map(Expr.const), st.sampled_from(sorted(BOUNDS)).map(Expr.var))

    def extend(children):
        divisor = st.integers(1, 12).map(Expr.const)
        return st.one_of(
            st.tuples(st.sampled_from(["add", "mul", "min", "max"]), children, children).map(
                lambda t: binary(t[0], t[1], t[2]) if t[0] != "mul" or t[2].is_const or t[1].is_const
                else binary("add", t[1], t[2])),
            st.tuples(st.sampled_from(["floordiv", "mod", "ceildiv"]), children, divisor).map(
                lambda t: binary(t[0], t[1], t[2])),
        )

    return st.recursive(leaves, extend, max_leaves=8)


def _points():
    names = sorted(BOUNDS)
    for values in itertools.product(*[range(lo, hi + 1) for lo, hi in (BOUNDS[n] for n in names)]):
        yield dict(zip(names, values))


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(_exprs())
def test_simplify_keeps_every_value_and_printing_round_trips(expr):
    simplified = simplify(expr, BOUNDS)
    reparsed = parse_expr(str(expr))
    for point in _points():
        value = expr.evaluate(point)
        assert simplified.evaluate(point) == value, f"{expr} -> {simplified} at {point}"
        assert reparsed.evaluate(point) == value, f"{expr} printed as {str(expr)!r} at {point}"


def test_xla_spellings_parse():
    e = parse_expr("max(min(tid_0 * 30 - 10, 20), 0)")
    assert [e.evaluate({"tid_0": t}) for t in range(3)] == [0, 20, 20]
    assert parse_expr("(tid_1 mod 256) * 2 + 2").evaluate({"tid_1": 300}) == 90
    assert parse_expr("-7 mod 4").evaluate({}) == 1  # XLA: mod in [0, |b|)


@pytest.mark.parametrize(
    "text, error",
    [
        ("(" * 3000 + "tid_0" + ")" * 3000, NestingTooDeepError),  # parser recursion
        ("-" * 3000 + "tid_0", NestingTooDeepError),
        ("min(" * 300 + "tid_0" + ", 1)" * 300, NestingTooDeepError),
        (" + ".join(["tid_0"] * 3000), NestingTooDeepError),  # a left-deep tree every walk recurses through
        ("tid_0" + " * 2" * 64, IntegerOverflowError),  # folded into one coefficient, 2**64
        ("99999999999999999999", IntegerOverflowError),
    ],
    ids=["parentheses", "minuses", "calls", "long sum", "folded product", "literal"],
)
def test_hostile_expression_text_is_a_limit_error(text: str, error: type) -> None:
    with pytest.raises(error):
        simplify(parse_expr(text), dict(BOUNDS))


def test_expressions_up_to_the_depth_limit_are_kept() -> None:
    text = " + ".join(["tid_0"] * (MAX_NESTING_DEPTH + 1))  # MAX_NESTING_DEPTH additions
    assert simplify(parse_expr(text), dict(BOUNDS)).evaluate({"tid_0": 3}) == 3 * (MAX_NESTING_DEPTH + 1)
    assert parse_expr("(" * MAX_NESTING_DEPTH + "tid_0" + ")" * MAX_NESTING_DEPTH) == Expr.var("tid_0")
