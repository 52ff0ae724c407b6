"""Randomised equivalence checks of the simplifier and of composition.

Random maps are generated here as expression trees of plain tuples, printed as XLA
text, and parsed by the code under test. The oracle evaluates the *tuples* with Python
integers, so neither the parser nor the evaluator of hlo_indexing is trusted: every
check compares the library's maps, point by point over the whole domain, with the
oracle.
"""

from __future__ import annotations

import itertools
import random

import pytest

from hlo_indexing import IndexingMap
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps.algebra import compose, convert_range_variables_to_dims, eliminate_equal_symbols, remove_unused_dims, remove_unused_symbols
from helpers import evaluate_tree, image_sets, tree_text
from proofs import assert_proven_equal


# ----------------------------------------------------------------- generators


def random_tree(rng: random.Random, n_dims: int, n_symbols: int, depth: int):
    if depth == 0 or rng.random() < 0.25:
        choices = [("d", i) for i in range(n_dims)] + [("s", i) for i in range(n_symbols)]
        if rng.random() < 0.2 or not choices:
            return ("c", rng.randint(-20, 20))
        return rng.choice(choices)
    op = rng.choice(["+", "+", "*", "floordiv", "mod"])
    lhs = random_tree(rng, n_dims, n_symbols, depth - 1)
    if op == "+":
        return ("+", lhs, random_tree(rng, n_dims, n_symbols, depth - 1))
    if op == "*":
        return ("*", lhs, ("c", rng.choice([-3, -1, 2, 3, 4, 8, 16])))
    return (op, lhs, ("c", rng.choice([2, 3, 4, 5, 8, 16, 64])))


def random_map(rng: random.Random, with_constraint: bool = True):
    n_dims, n_symbols = rng.randint(1, 2), rng.randint(0, 2)
    ranges = []
    for _ in range(n_dims + n_symbols):
        lower = rng.choice([0, 0, 0, rng.randint(-6, 6)])
        ranges.append((lower, lower + rng.randint(0, 11)))
    results = [random_tree(rng, n_dims, n_symbols, rng.randint(1, 4)) for _ in range(rng.randint(1, 2))]
    dim_names = [f"d{i}" for i in range(n_dims)]
    sym_names = [f"s{i}" for i in range(n_symbols)]
    header = f"({', '.join(dim_names)})" + (f"[{', '.join(sym_names)}]" if sym_names else "")
    domain = [f"{n} in [{lo}, {hi}]" for n, (lo, hi) in zip(dim_names + sym_names, ranges)]
    constraints = []
    if with_constraint and rng.random() < 0.5:
        tree = random_tree(rng, n_dims, n_symbols, 2)
        lo = rng.randint(-10, 10)
        constraints.append((tree, (lo, lo + rng.randint(0, 15))))
        domain.append(f"{tree_text(tree)} in [{lo}, {lo + constraints[0][1][1] - lo}]")
    text = f"{header} -> ({', '.join(tree_text(t) for t in results)}), domain: {', '.join(domain)}"
    return text, results, ranges[:n_dims], ranges[n_dims:], constraints


def oracle_images(results, dim_ranges, symbol_ranges, constraints) -> dict:
    out: dict = {}
    for dims in itertools.product(*(range(lo, hi + 1) for lo, hi in dim_ranges)):
        for symbols in itertools.product(*(range(lo, hi + 1) for lo, hi in symbol_ranges)):
            if all(lo <= evaluate_tree(t, dims, symbols) <= hi for t, (lo, hi) in constraints):
                out.setdefault(dims, set()).add(tuple(evaluate_tree(t, dims, symbols) for t in results))
    return out


def boxes(dim_ranges, symbol_ranges):
    return [range(lo, hi + 1) for lo, hi in dim_ranges], [range(lo, hi + 1) for lo, hi in symbol_ranges]


# ----------------------------------------------------------------- tests


@pytest.mark.parametrize("seed", range(6))
def test_parse_then_simplify_matches_oracle(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        text, results, dim_ranges, symbol_ranges, constraints = random_map(rng)
        expected = oracle_images(results, dim_ranges, symbol_ranges, constraints)
        parsed = IndexingMap.parse(text)
        dim_box, symbol_box = boxes(dim_ranges, symbol_ranges)
        assert image_sets(parsed, dim_box, symbol_box) == expected, text
        simplified = parsed.simplify()
        assert image_sets(simplified, dim_box, symbol_box) == expected, f"{text}\n-> {simplified}"
        assert_proven_equal(parsed, simplified, text)
        assert simplified.simplify() == simplified, f"not idempotent: {simplified}"
        reparsed = IndexingMap.parse(str(simplified), allow_empty_ranges=True)
        if simplified.is_known_empty():  # the text form keeps no variable counts
            assert reparsed.is_known_empty()
        else:
            assert reparsed == simplified


@pytest.mark.parametrize("seed", range(4))
def test_compose_matches_oracle(seed: int) -> None:
    """consumer: (d) -> (e_1..e_n) over a box; producer: n dims -> results. The composite
    relation is {(d, producer(y)) : y = consumer(d, s) in producer's domain, ...}."""
    rng = random.Random(100 + seed)
    checked = 0
    while checked < 40:
        n_mid = rng.randint(1, 2)
        consumer_results = [random_tree(rng, 1, 1, 2) for _ in range(n_mid)]
        consumer_text = (
            f"(d0)[s0] -> ({', '.join(tree_text(t) for t in consumer_results)}), domain: d0 in [0, 5], s0 in [0, 2]"
        )
        mid_ranges = [(rng.randint(-3, 2), rng.randint(3, 12)) for _ in range(n_mid)]
        producer_results = [random_tree(rng, n_mid, 1, 2)]
        mid_names = [f"d{i}" for i in range(n_mid)]
        producer_text = (
            f"({', '.join(mid_names)})[s0] -> ({tree_text(producer_results[0])}), domain: "
            + ", ".join(f"{n} in [{lo}, {hi}]" for n, (lo, hi) in zip(mid_names, mid_ranges))
            + ", s0 in [0, 1]"
        )
        consumer, producer = IndexingMap.parse(consumer_text), IndexingMap.parse(producer_text)
        expected: dict = {}
        for d0 in range(6):
            for s_consumer in range(3):
                mid = tuple(evaluate_tree(t, (d0,), (s_consumer,)) for t in consumer_results)
                if not all(lo <= v <= hi for v, (lo, hi) in zip(mid, mid_ranges)):
                    continue
                for s_producer in range(2):
                    image = (evaluate_tree(producer_results[0], mid, (s_producer,)),)
                    expected.setdefault((d0,), set()).add(image)
        composed = compose(consumer, producer)
        assert composed.num_symbols == 2
        box = [range(0, 6)], [range(0, 2), range(0, 3)]  # producer's symbol first (XLA order)
        assert image_sets(composed, *box) == expected, f"{consumer_text}\n{producer_text}\n-> {composed}"
        assert image_sets(composed.simplify(), *box) == expected, f"-> {composed.simplify()}"
        assert_proven_equal(composed, composed.simplify(), f"{consumer_text}\n{producer_text}")
        checked += 1


@pytest.mark.parametrize("seed", range(3))
def test_compose_after_an_identity_over_the_producers_domain_is_the_producer(seed: int) -> None:
    """An identity consumer over exactly the producer's domain (a fusion's first map)
    gives the producer back, names included; over a narrower domain, or with other
    dimension names, the composite is built in full. Each relation checked against the
    oracle."""
    rng = random.Random(200 + seed)
    for _ in range(40):
        text, results, dim_ranges, symbol_ranges, _ = random_map(rng, with_constraint=False)
        producer = IndexingMap.parse(text)
        dims = [f"d{i}" for i in range(len(dim_ranges))]

        def identity(ranges, names):
            domain = ", ".join(f"{n} in [{lo}, {hi}]" for n, (lo, hi) in zip(names, ranges))
            return IndexingMap.parse(f"({', '.join(names)}) -> ({', '.join(names)}), domain: {domain}")

        composed = compose(identity(dim_ranges, dims), producer)
        assert str(composed) == str(producer) and composed == producer, text
        assert image_sets(composed, *boxes(dim_ranges, symbol_ranges)) == oracle_images(results, dim_ranges, symbol_ranges, [])
        renamed = compose(identity(dim_ranges, [f"x{i}" for i in range(len(dims))]), producer)
        assert renamed == producer and str(renamed) != str(producer), f"{text}\n-> {renamed}"
        narrower = [(lo, max(lo, hi - 1)) for lo, hi in dim_ranges]
        composed = compose(identity(narrower, dims), producer)
        assert image_sets(composed, *boxes(narrower, symbol_ranges)) == oracle_images(results, narrower, symbol_ranges, []), text


def test_remove_unused_symbols_keeps_relation() -> None:
    rng = random.Random(7)
    for _ in range(80):
        text, results, dim_ranges, symbol_ranges, constraints = random_map(rng)
        parsed = IndexingMap.parse(text)
        expected = oracle_images(results, dim_ranges, symbol_ranges, constraints)
        reduced = remove_unused_symbols(parsed)
        kept = []
        for var in reduced.symbol_vars:
            kept.append(range(var.bounds.lower, var.bounds.upper + 1))
        dim_box, _ = boxes(dim_ranges, symbol_ranges)
        assert image_sets(reduced, dim_box, kept) == expected, f"{text}\n-> {reduced}"


def expr_variables(expr, dims: set, symbols: set) -> None:
    """The dims and symbols an ``ir.AffineExpr`` mentions (the test's own walker)."""
    expr = expr.maybe_downcast()
    if isinstance(expr, ir.AffineDimExpr):
        dims.add(expr.position)
    elif isinstance(expr, ir.AffineSymbolExpr):
        symbols.add(expr.position)
    elif isinstance(expr, ir.AffineBinaryExpr):
        expr_variables(expr.lhs, dims, symbols)
        expr_variables(expr.rhs, dims, symbols)


def tied_dims(m: IndexingMap) -> list[int]:
    """Dims used by a result or linked to one (through constraints sharing variables)."""
    dims: set = set()
    symbols: set = set(range(m.num_symbols))
    for e in m.results:
        expr_variables(e, dims, symbols)
    grew = True
    while grew:
        grew = False
        for e in m.constraints:
            cd, cs = set(), set()
            expr_variables(e, cd, cs)
            if (cd & dims or cs & symbols) and not cd <= dims:
                dims |= cd
                grew = True
    return sorted(dims)


def map_text(results, dim_ranges, symbol_ranges, constraints) -> str:
    dims = [f"d{i}" for i in range(len(dim_ranges))]
    syms = [f"s{i}" for i in range(len(symbol_ranges))]
    header = f"({', '.join(dims)})" + (f"[{', '.join(syms)}]" if syms else "")
    domain = [f"{n} in [{lo}, {hi}]" for n, (lo, hi) in zip(dims + syms, dim_ranges + symbol_ranges)]
    domain += [f"{tree_text(t)} in [{lo}, {hi}]" for t, (lo, hi) in constraints]
    return f"{header} -> ({', '.join(tree_text(t) for t in results)}), domain: {', '.join(domain)}"


def test_remove_unused_dims_projects_the_relation() -> None:
    """Dropping dims that only detached constraints use is the projection of the relation
    onto the kept dims (empty when those constraints cannot be met)."""
    rng = random.Random(11)
    dropped = 0
    for _ in range(150):
        text, results, dim_ranges, symbol_ranges, constraints = random_map(rng)
        # an extra dim, used by a constraint only, so that removal has work to do
        n = len(dim_ranges)
        lo = rng.randint(-3, 3)
        extra = ("mod", ("d", n), ("c", rng.choice([2, 3, 5])))
        want = rng.randint(0, 2)
        constraints = constraints + [(extra, (want, want))]
        text = map_text(results, dim_ranges + [(lo, lo + rng.randint(0, 6))], symbol_ranges, constraints)
        parsed = IndexingMap.parse(text)
        all_dim_ranges = [(r.lower, r.upper) for r in parsed.dim_ranges]
        expected_full = oracle_images(results, all_dim_ranges, symbol_ranges, constraints)
        keep = tied_dims(parsed)
        expected: dict = {}
        for dims, images in expected_full.items():
            expected.setdefault(tuple(dims[i] for i in keep), set()).update(images)
        reduced = remove_unused_dims(parsed)
        dropped += reduced.num_dims < parsed.num_dims
        if reduced.is_known_empty():
            assert not expected, f"{text}\n-> known empty"
            continue
        assert reduced.num_dims == len(keep), f"{text}\n-> {reduced}"
        dim_box = [range(all_dim_ranges[i][0], all_dim_ranges[i][1] + 1) for i in keep]
        _, symbol_box = boxes(dim_ranges, symbol_ranges)
        assert image_sets(reduced, dim_box, symbol_box) == expected, f"{text}\n-> {reduced}"
    assert dropped > 50


def test_convert_range_variables_to_dims_moves_them_into_the_domain() -> None:
    rng = random.Random(12)
    converted = 0
    while converted < 60:
        text, results, dim_ranges, symbol_ranges, constraints = random_map(rng)
        if not symbol_ranges:
            continue
        which = rng.sample(range(len(symbol_ranges)), rng.randint(1, len(symbol_ranges)))
        parsed = IndexingMap.parse(text)
        if parsed.is_known_empty():
            continue
        out = convert_range_variables_to_dims(parsed, which)
        assert (out.num_dims, out.num_symbols) == (parsed.num_dims + len(which), parsed.num_symbols - len(which))
        rest = [i for i in range(len(symbol_ranges)) if i not in which]
        expected: dict = {}
        dim_box, symbol_box = boxes(dim_ranges, symbol_ranges)
        for dims in itertools.product(*dim_box):
            for symbols in itertools.product(*symbol_box):
                if all(lo <= evaluate_tree(t, dims, symbols) <= hi for t, (lo, hi) in constraints):
                    key = tuple(dims) + tuple(symbols[i] for i in which)
                    expected.setdefault(key, set()).add(tuple(evaluate_tree(t, dims, symbols) for t in results))
        new_dim_box = dim_box + [symbol_box[i] for i in which]
        assert image_sets(out, new_dim_box, [symbol_box[i] for i in rest]) == expected, f"{text} {which}\n-> {out}"
        converted += 1
    with pytest.raises(ValueError, match="distinct indices"):
        convert_range_variables_to_dims(IndexingMap.parse("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1]"), [1])


@pytest.mark.parametrize(
    "text",
    [
        "(d0, d1)[s0, s1] -> (s0, d1), domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 3], s1 in [0, 3], "
        "-s0 + s1 in [1, 4], d0 - s1 in [0, 0]",
        "(d0)[s0] -> (s0 * 2), domain: d0 in [0, 5], s0 in [0, 3], d0 - s0 in [1, 1]",
        "(d0)[s0, s1] -> (s0, s1), domain: d0 in [0, 5], s0 in [0, 2], s1 in [0, 7], d0 * 2 - s1 + s0 in [3, 3]",
        "(d0)[s0] -> (s0), domain: d0 in [0, 5], s0 in [0, 5], (d0 + s0) mod 2 in [0, 0]",
        "(d0)[s0] -> (d0 mod 2 + s0 * 2), domain: d0 in [0, 3], s0 in [0, 1], d0 floordiv 2 - s0 in [0, 0]",
    ],
)
def test_eliminate_equal_symbols_keeps_the_relation(text) -> None:
    m = IndexingMap.parse(text)
    eliminated = eliminate_equal_symbols(m)
    assert eliminated.relation() == m.relation()
    if "mod" not in text:
        assert eliminated.num_symbols < m.num_symbols


def detached_solutions(ranges, constraints) -> bool:
    """Whether some point of the box ``ranges`` meets every ``(coefficients, lo, hi)``
    (the test's own brute force over plain integers)."""
    for point in itertools.product(*(range(lo, hi + 1) for lo, hi in ranges)):
        if all(lo <= sum(c * v for c, v in zip(coefficients, point)) <= hi for coefficients, lo, hi in constraints):
            return True
    return False


@pytest.mark.parametrize(
    "ranges, constraints",
    [
        # two independent groups, each satisfiable: one only by its very last point
        ([(0, 99), (0, 99), (0, 9), (0, 9)], [((3, 1, 0, 0), 396, 396), ((0, 0, 1, 1), 18, 18)]),
        # one group cannot be met (parity), the other can
        ([(0, 99), (0, 99), (0, 9)], [((2, 2, 0), 7, 7), ((0, 0, 1), 4, 4)]),
        # a group that interval bounds decide alone, beside one enumerated in several chunks
        ([(0, 4), (0, 199), (0, 199)], [((1, 0, 0), -3, 10), ((0, 1, -1), 199, 199)]),
        # a constraint that interval bounds show cannot be met
        ([(0, 4), (0, 199), (0, 199)], [((1, 1, 0), 500, 600), ((0, 1, -1), 0, 0)]),
    ],
)
def test_unused_symbols_with_detached_constraints(ranges, constraints) -> None:
    """Symbols tied only to each other by constraints go; the map is known empty exactly
    when the constraints cannot be met together (decided per group of constraints, in
    chunks)."""
    names = [f"s{i}" for i in range(len(ranges))]
    domain = [f"{n} in [{lo}, {hi}]" for n, (lo, hi) in zip(names, ranges)]
    domain += [
        " + ".join(f"{n} * {c}" for n, c in zip(names, coefficients) if c) + f" in [{lo}, {hi}]"
        for coefficients, lo, hi in constraints
    ]
    m = IndexingMap.parse(f"(d0)[{', '.join(names)}] -> (d0), domain: d0 in [0, 3], {', '.join(domain)}")
    reduced = remove_unused_symbols(m)
    assert reduced.num_symbols == 0
    assert reduced.is_known_empty() is not detached_solutions(ranges, constraints)


def test_detached_constraints_over_the_enumeration_limit_are_assumed_satisfiable() -> None:
    """Past ``SATISFIABILITY_POINTS`` points together (here 1001 * 1001), detached
    constraints are assumed satisfiable, as XLA assumes them: sound, not exact."""
    m = IndexingMap.parse(
        "(d0)[s0, s1] -> (d0), domain: d0 in [0, 3], s0 in [0, 1000], s1 in [0, 1000], s0 * 2 + s1 * 2 in [1, 1]"
    )
    reduced = remove_unused_symbols(m)
    assert reduced.num_symbols == 0 and not reduced.is_known_empty()
