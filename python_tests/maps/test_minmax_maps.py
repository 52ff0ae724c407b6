"""Maps with ``min``/``max`` (:mod:`hlo_indexing.maps.minmax`), checked by enumeration
against an independent evaluation of the text (Python's ``min``, ``max``, ``//``, ``%``):
for generated maps, the parsed map evaluates as the text says, its pieces have the
text's relation, and printing, simplifying, composing and the attribute form keep it."""

from __future__ import annotations

import itertools
import re

import pytest

hypothesis = pytest.importorskip("hypothesis")  # test dependency (pyproject's test extra)
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_indexing import IndexingMap
from hlo_indexing.errors import ParseError
from hlo_indexing.maps.exact import isl_available, prove_equal
from hlo_indexing.maps.minmax import (
    ClampedMap,
    clamped_map_from_attribute,
    clamped_map_to_attribute,
    compose,
    parse_clamped_map,
)


def oracle(expr: str, names: dict[str, int]) -> int:
    """The value of an expression of the map text (Python's integer semantics)."""
    python = re.sub(r"\bfloordiv\b", "//", expr).replace(" mod ", " % ")
    return int(eval(python, {"__builtins__": {}, "min": min, "max": max}, dict(names)))  # noqa: S307 - test oracle


def text_relation(dims: list[int], symbols: list[int], results: list[str]) -> set:
    """Every (dims, results) pair of ``(d..)[s..] -> (results)`` over the ranges
    ``[0, n]`` of ``dims`` and ``symbols``."""
    found = set()
    for point in itertools.product(*(range(n + 1) for n in dims + symbols)):
        names = {f"d{i}": v for i, v in enumerate(point[: len(dims)])}
        names.update({f"s{j}": v for j, v in enumerate(point[len(dims):])})
        found.add((tuple(point[: len(dims)]), tuple(oracle(r, names) for r in results)))
    return found


def header(dims: list[int], symbols: list[int], results: list[str]) -> str:
    names = ", ".join(f"d{i}" for i in range(len(dims)))
    syms = f"[{', '.join(f's{j}' for j in range(len(symbols)))}]" if symbols else ""
    domain = [f"d{i} in [0, {n}]" for i, n in enumerate(dims)] + [f"s{j} in [0, {n}]" for j, n in enumerate(symbols)]
    return f"({names}){syms} -> ({', '.join(results)}), domain: {', '.join(domain)}"


@st.composite
def affine(draw: st.DrawFn, names: list[str]) -> str:
    terms = [f"{draw(st.sampled_from(names))} * {draw(st.integers(1, 3))}" for _ in range(draw(st.integers(1, 2)))]
    text = " + ".join(terms) + f" + {draw(st.integers(-4, 4))}"
    if draw(st.booleans()):
        text = f"({text}) {draw(st.sampled_from(['floordiv', 'mod']))} {draw(st.integers(2, 4))}"
    return text


@st.composite
def clamped(draw: st.DrawFn, names: list[str], depth: int = 2) -> str:
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(affine(names))
    kind = draw(st.sampled_from(["min", "max"]))
    inner = f"{kind}({draw(clamped(names, depth - 1))}, {draw(clamped(names, depth - 1))})"
    return inner if draw(st.booleans()) else f"{inner} * {draw(st.integers(1, 2))} + {draw(st.integers(-2, 2))}"


@st.composite
def maps(draw: st.DrawFn) -> tuple[list[int], list[int], list[str]]:
    dims = [draw(st.integers(0, 5)) for _ in range(draw(st.integers(1, 2)))]
    symbols = [draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 1)))]
    names = [f"d{i}" for i in range(len(dims))] + [f"s{j}" for j in range(len(symbols))]
    results = [draw(clamped(names)) for _ in range(draw(st.integers(1, 2)))]
    return dims, symbols, results


def relation(m: IndexingMap | ClampedMap) -> set:
    return m.relation()


@settings(max_examples=80, deadline=None)
@given(maps())
def test_parsed_maps_have_the_texts_relation_through_every_operation(case) -> None:
    dims, symbols, results = case
    text = header(dims, symbols, results)
    truth = text_relation(dims, symbols, results)
    m = parse_clamped_map(text)
    assert relation(m) == truth, text
    printed = str(m)
    again = parse_clamped_map(printed)
    assert str(again) == printed and relation(again) == truth, (text, printed)
    simplified = m.simplify()
    assert relation(simplified) == truth, (text, str(simplified))
    if isinstance(m, ClampedMap):
        assert relation(clamped_map_from_attribute(clamped_map_to_attribute(m))) == truth
        for point in itertools.product(*(range(n + 1) for n in dims)):
            for free in itertools.product(*(range(n + 1) for n in symbols)):
                names = {f"d{i}": v for i, v in enumerate(point)} | {f"s{j}": v for j, v in enumerate(free)}
                assert m.evaluate(list(point), list(free)) == tuple(oracle(r, names) for r in results)
    if isl_available():
        assert prove_equal(m, simplified).holds, (text, str(simplified))


@settings(max_examples=40, deadline=None)
@given(maps(), st.integers(1, 3), st.integers(0, 2))
def test_composition_with_plain_maps_on_both_sides(case, scale, shift) -> None:
    dims, symbols, results = case
    m = parse_clamped_map(header(dims, symbols, results))
    # A plain consumer feeding the map's dimensions, and a plain producer of its results.
    feed = IndexingMap.parse(
        f"({', '.join(f'd{i}' for i in range(len(dims)))}) -> ({', '.join(f'd{i}' for i in range(len(dims)))}),"
        f" domain: {', '.join(f'd{i} in [0, {n}]' for i, n in enumerate(dims))}"
    )
    low = min(lo for _, values in m.relation() for lo in values) if m.relation() else 0
    high = max(hi for _, values in m.relation() for hi in values) if m.relation() else 0
    outs = len(results)
    after = IndexingMap.parse(
        f"({', '.join(f'd{k}' for k in range(outs))}) -> ({', '.join(f'd{k} * {scale} + {shift}' for k in range(outs))}),"
        f" domain: {', '.join(f'd{k} in [{low}, {high}]' for k in range(outs))}"
    )
    expected = {(d, tuple(v * scale + shift for v in values)) for d, values in m.relation()}
    assert relation(compose(m, after)) == expected
    assert relation(compose(feed, m)) == m.relation()


@pytest.mark.parametrize(
    "text, simplified",
    [
        ("(d0) -> (min(d0, 10)), domain: d0 in [0, 9]", "(d0) -> (d0), domain: d0 in [0, 9]"),
        ("(d0) -> (max(d0, 10)), domain: d0 in [0, 9]", "(d0) -> (10), domain: d0 in [0, 9]"),
        ("(d0) -> (min(d0, d0 + 1)), domain: d0 in [0, 10]", "(d0) -> (d0), domain: d0 in [0, 10]"),
        ("(d0)[s0] -> (min(max(d0 + s0, 0), 6)), domain: d0 in [0, 3], s0 in [0, 2]", "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 2]"),
        ("(d0) -> (min(d0, 5) + max(d0, 5)), domain: d0 in [0, 9]", "(d0) -> (min(d0, 5) + max(d0, 5)), domain: d0 in [0, 9]"),
    ],
)
def test_range_aware_simplification(text: str, simplified: str) -> None:
    m = parse_clamped_map(text)
    out = m.simplify()
    assert str(out) == simplified
    assert out.relation() == m.relation()


def test_plain_maps_refuse_min_max_and_name_the_reader() -> None:
    with pytest.raises(ParseError) as info:
        IndexingMap.parse("(d0) -> (min(d0, 5)), domain: d0 in [0, 9]")
    assert "parse_clamped_map" in info.value.message and str(info.value.location).endswith(":1:10")
    assert isinstance(parse_clamped_map("(d0) -> (d0), domain: d0 in [0, 9]"), IndexingMap)


def test_range_queries_evaluate_each_min_max_over_its_operands() -> None:
    m = parse_clamped_map("(d0, d1) -> (min(d0, d1), max(d0, d1)), domain: d0 in [0, 9], d1 in [-10, -1]")
    assert [(b.lower, b.upper) for b in m.result_bounds()] == [(-10, -1), (0, 9)]


def test_result_bounds_use_the_constraints_and_hold_every_image() -> None:
    # the constraint on d0 + d1 cuts max(d0 + d1, 3) below its operands' bound of 18
    m = parse_clamped_map("(d0, d1) -> (max(d0 + d1, 3)), domain: d0 in [0, 9], d1 in [0, 9], d0 + d1 in [0, 11]")
    images = [image[0] for _point, image in m.relation()]
    assert [(b.lower, b.upper) for b in m.result_bounds()] == [(min(images), max(images))]
