"""Property-based tests (hypothesis) of indexing-map text, simplification, composition and
the attribute form: the relation a map denotes survives print/parse/simplify/attributes,
checked by enumeration against a brute-force evaluation of the generated expression
tree (Python's floor division, independent of the code under test); any text, however
hostile, parses or raises an ``HloIndexingError``. A small budget keeps the suite fast;
``python3 dev/run.py fuzz`` runs the long campaign."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest

hypothesis = pytest.importorskip("hypothesis")  # the test extra installs it
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hlo_indexing import IndexingMap  # noqa: E402
from hlo_indexing.errors import HloIndexingError  # noqa: E402
from hlo_indexing.maps.algebra import compose
from hlo_indexing.maps.attributes import indexing_map_from_attribute, indexing_map_to_attribute  # noqa: E402
from proofs import assert_proven_equal  # noqa: E402

BUDGET = settings(max_examples=60, deadline=None)

# ----------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Expr:
    """A generated expression tree: ``op`` in (var, const, +, -, *, floordiv, ceildiv, mod)."""

    op: str
    value: object = None
    lhs: "Expr | None" = None
    rhs: "Expr | None" = None

    def text(self) -> str:
        if self.op == "var":
            return str(self.value)
        if self.op == "const":
            return str(self.value) if self.value >= 0 else f"({self.value})"
        return f"({self.lhs.text()} {self.op} {self.rhs.text()})"

    def evaluate(self, env: dict[str, int]) -> int | None:
        """Python's value (floor semantics), or None where a divisor is 0."""
        if self.op == "var":
            return env[self.value]
        if self.op == "const":
            return self.value
        a, b = self.lhs.evaluate(env), self.rhs.evaluate(env)
        if a is None or b is None:
            return None
        if self.op == "+":
            return a + b
        if self.op == "-":
            return a - b
        if self.op == "*":
            return a * b
        if b == 0:
            return None
        if self.op == "floordiv":
            return a // b
        if self.op == "ceildiv":
            return -((-a) // b)
        return a - b * (a // b)  # mod, as MLIR defines it from floordiv


def expressions(names: list[str]) -> st.SearchStrategy[Expr]:
    leaves = st.one_of(
        st.sampled_from(names).map(lambda n: Expr("var", n)) if names else st.nothing(),
        st.integers(-6, 12).map(lambda v: Expr("const", v)),
    )

    def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        constant = st.integers(1, 9).map(lambda v: Expr("const", v))
        return st.one_of(
            st.tuples(st.sampled_from(["+", "-"]), children, children).map(lambda t: Expr(t[0], None, t[1], t[2])),
            st.tuples(children, st.integers(-4, 6)).map(lambda t: Expr("*", None, t[0], Expr("const", t[1]))),
            st.tuples(st.sampled_from(["floordiv", "ceildiv", "mod"]), children, constant).map(
                lambda t: Expr(t[0], None, t[1], t[2])
            ),
        )

    return st.recursive(leaves, extend, max_leaves=6)


@dataclass(frozen=True)
class MapCase:
    dims: tuple[tuple[int, int], ...]
    symbols: tuple[tuple[int, int], ...]
    results: tuple[Expr, ...]
    constraints: tuple[tuple[Expr, tuple[int, int]], ...]

    @property
    def names(self) -> list[str]:
        return [f"d{i}" for i in range(len(self.dims))] + [f"s{i}" for i in range(len(self.symbols))]

    def text(self) -> str:
        head = "(" + ", ".join(f"d{i}" for i in range(len(self.dims))) + ")"
        if self.symbols:
            head += "[" + ", ".join(f"s{i}" for i in range(len(self.symbols))) + "]"
        domain = [f"{n} in [{lo}, {hi}]" for n, (lo, hi) in zip(self.names, self.dims + self.symbols)]
        domain += [f"{e.text()} in [{lo}, {hi}]" for e, (lo, hi) in self.constraints]
        body = f"{head} -> ({', '.join(r.text() for r in self.results)})"
        return body + (", domain: " + ", ".join(domain) if domain else "")

    def relation(self) -> set | None:
        """Brute force: ``{(dims, results)}`` over the points satisfying every constraint,
        symbols projected out; None when some point divides by zero."""
        out = set()
        ranges = [range(lo, hi + 1) for lo, hi in self.dims + self.symbols]
        for point in itertools.product(*ranges):
            env = dict(zip(self.names, point))
            values = [c.evaluate(env) for c, _ in self.constraints]
            results = [r.evaluate(env) for r in self.results]
            if any(v is None for v in values + results):
                return None
            if all(lo <= v <= hi for v, (_, (lo, hi)) in zip(values, self.constraints)):
                out.add((point[: len(self.dims)], tuple(results)))
        return out


@st.composite
def map_cases(
    draw, max_dims: int = 2, max_symbols: int = 1, num_results: int | None = None, fixed_dims: tuple | None = None
) -> MapCase:
    bounds = st.tuples(st.integers(-3, 4), st.integers(0, 4)).map(lambda t: (t[0], t[0] + t[1]))
    dims = fixed_dims if fixed_dims is not None else tuple(draw(st.lists(bounds, min_size=0, max_size=max_dims)))
    symbols = tuple(draw(st.lists(bounds, min_size=0, max_size=max_symbols)))
    names = [f"d{i}" for i in range(len(dims))] + [f"s{i}" for i in range(len(symbols))]
    count = num_results if num_results is not None else draw(st.integers(0, 3))
    results = tuple(draw(st.lists(expressions(names), min_size=count, max_size=count)))
    constraints = ()
    if names and draw(st.booleans()):
        constraints = ((draw(expressions(names)), draw(bounds)),)
    return MapCase(dims, symbols, results, constraints)


def relation_of(m: IndexingMap) -> set:
    return m.relation(10_000)


def parsed(case: MapCase) -> IndexingMap | None:
    """The parsed map, or None when the case divides by zero somewhere (refused by the
    parser at the divisor, or undefined at some point)."""
    if case.relation() is None:
        return None
    return IndexingMap.parse(case.text())


@BUDGET
@given(map_cases())
def test_parse_denotes_the_brute_force_relation(case: MapCase) -> None:
    m = parsed(case)
    if m is None:
        return
    assert relation_of(m) == case.relation()


@BUDGET
@given(map_cases())
def test_relation_survives_simplify_print_parse_and_attributes(case: MapCase) -> None:
    m = parsed(case)
    if m is None:
        return
    expected = case.relation()
    simplified = m.simplify()
    assert relation_of(simplified) == expected
    assert_proven_equal(m, simplified)
    assert relation_of(IndexingMap.parse(str(simplified))) == expected
    assert relation_of(IndexingMap.parse(str(m))) == expected
    assert relation_of(indexing_map_from_attribute(indexing_map_to_attribute(simplified))) == expected
    assert relation_of(simplified.simplify()) == expected


@BUDGET
@given(map_cases(max_dims=2, max_symbols=1), st.data())
def test_compose_is_the_brute_force_composition(consumer_case: MapCase, data) -> None:
    consumer = parsed(consumer_case)
    if consumer is None or consumer.is_known_empty():
        return
    k = len(consumer_case.results)
    producer_case = data.draw(map_cases(max_dims=0, max_symbols=1, num_results=2, fixed_dims=((-3, 9),) * k))
    producer = parsed(producer_case)
    if producer is None or producer.is_known_empty():
        return
    expected = set()
    for dims, middle in case_points(consumer_case):
        if not all(lo <= v <= hi for v, (lo, hi) in zip(middle, producer_case.dims)):
            continue
        for symbols in itertools.product(*[range(lo, hi + 1) for lo, hi in producer_case.symbols]):
            env = dict(zip(producer_case.names, middle + symbols))
            if all(lo <= c.evaluate(env) <= hi for c, (lo, hi) in producer_case.constraints):
                expected.add((dims, tuple(r.evaluate(env) for r in producer_case.results)))
    composed = compose(consumer, producer)
    assert relation_of(composed) == expected
    assert relation_of(composed.simplify()) == expected
    assert_proven_equal(composed, composed.simplify())


def case_points(case: MapCase):
    """``(dims, results)`` of every feasible point (symbols projected out)."""
    ranges = [range(lo, hi + 1) for lo, hi in case.dims + case.symbols]
    for point in itertools.product(*ranges):
        env = dict(zip(case.names, point))
        if all(lo <= c.evaluate(env) <= hi for c, (lo, hi) in case.constraints):
            yield point[: len(case.dims)], tuple(r.evaluate(env) for r in case.results)


# ----------------------------------------------------------------------------- hostile text

_MAP_ALPHABET = st.sampled_from(list("()[]{},:-+*d0s12 ") + ["floordiv", "mod", "ceildiv", "domain", "in", "->", "9223372036854775808"])


@BUDGET
@given(st.one_of(st.text(max_size=60), st.lists(_MAP_ALPHABET, max_size=40).map("".join)))
def test_any_text_parses_or_raises_a_located_hierarchy_error(text: str) -> None:
    try:
        m = IndexingMap.parse(text)
    except HloIndexingError as exc:
        assert exc.location is not None and exc.location.line >= 1, str(exc)
        return
    m.simplify()
    str(m)


@BUDGET
@given(map_cases(), st.integers(0, 200), st.sampled_from(["(", ")", " 0", " mod 0", "-", "9223372036854775807 *", ""]))
def test_mutated_map_text_never_escapes_the_hierarchy(case: MapCase, position: int, insert: str) -> None:
    text = case.text()
    position = min(position, len(text))
    mutated = text[:position] + insert + text[position + 1 :]
    try:
        m = IndexingMap.parse(mutated)
        simplified = m.simplify()
        assert IndexingMap.parse(str(simplified)) is not None
    except HloIndexingError as exc:
        assert exc.location is not None or not mutated.strip(), str(exc)
