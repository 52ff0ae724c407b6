"""The simplifier's choice among equivalent ``floordiv``/``mod`` forms, and evaluation of
divisions by zero.

Random maps are tuple trees (``("d", i)``, ``("s", i)``, ``("c", v)``, ``(op, lhs, rhs)``)
printed as map text and parsed by the code under test. Two evaluators written here, both
on numpy over the whole box of variable values, are the oracle: one for the tuple trees,
one for the ``ir.AffineExpr`` trees of the simplified maps. The library's own evaluators
are not used to decide correctness.
"""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from hlo_indexing import IndexingMap
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.expr_simplifier import ExprSimplifier
from helpers import evaluate_affine, evaluate_tree, tree_text
from proofs import assert_proven_equal


def box_columns(ranges: list[tuple[int, int]]) -> list[np.ndarray]:
    axes = [np.arange(lo, hi + 1, dtype=np.int64) for lo, hi in ranges]
    return [g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")]


def feasible(m: IndexingMap, dims: list[np.ndarray], symbols: list[np.ndarray]) -> np.ndarray:
    """Whether each point of the columns lies in ``m``'s ranges and constraints."""
    keep = np.ones(dims[0].shape, dtype=bool)
    if m.is_known_empty():
        return keep & False
    for values, var in zip(dims + symbols, m.dim_vars + m.symbol_vars):
        keep &= (values >= var.bounds.lower) & (values <= var.bounds.upper)
    for expr, interval in m.constraints.items():
        values = evaluate_affine(expr, dims, symbols)
        keep &= (values >= interval.lower) & (values <= interval.upper)
    return keep


# ----------------------------------------------------------------- generators


def linear_tree(rng: random.Random, n_dims: int, n_symbols: int):
    """``a*d0 + b*d1 (+ s0) + c`` with a constant offset (usually non-zero)."""
    variables = [("d", i) for i in range(n_dims)] + [("s", i) for i in range(n_symbols)]
    tree = None
    for var in rng.sample(variables, rng.randint(1, len(variables))):
        coeff = rng.choice([1, 1, 1, 2, 3, -1, 4, 6])
        term = var if coeff == 1 else ("*", var, ("c", coeff))
        tree = term if tree is None else ("+", tree, term)
    return ("+", tree, ("c", rng.randint(-30, 30)))


def division_tree(rng: random.Random, n_dims: int, n_symbols: int, depth: int):
    """``(numerator) floordiv k`` or ``mod k``; the numerator may hold another division
    times a coefficient, and each level adds a constant. That coefficient is not a
    multiple of ``k``: MLIR's parser would split such a division into a sum, and a sum
    times a constant (``(a + b) * -2``) is smaller than the simplifier's distributed
    normal form (``a * -2 + b * -2``), a known cost unrelated to the constant offsets."""
    k = rng.choice([2, 3, 4, 5, 7, 8, 16])
    numerator = linear_tree(rng, n_dims, n_symbols)
    if depth > 0 and rng.random() < 0.4:
        inner = division_tree(rng, n_dims, n_symbols, depth - 1)
        coeff = rng.choice([c for c in (1, 1, 2, 3, -1) if c % k])
        numerator = ("+", numerator, ("*", inner, ("c", coeff)))
    op = rng.choice(["floordiv", "floordiv", "mod"])
    return (op, numerator, ("c", k))


def result_tree(rng: random.Random, n_dims: int, n_symbols: int):
    """A sum of 1-2 divisions times coefficients, sometimes a variable, and a constant."""
    tree = None
    for _ in range(rng.randint(1, 2)):
        term = division_tree(rng, n_dims, n_symbols, 1)
        coeff = rng.choice([1, 1, 1, 2, 3, -1, -2])
        term = term if coeff == 1 else ("*", term, ("c", coeff))
        tree = term if tree is None else ("+", tree, term)
    if rng.random() < 0.3:
        tree = ("+", tree, ("d", rng.randrange(n_dims)))
    return ("+", tree, ("c", rng.randint(-12, 12)))


def random_map(rng: random.Random):
    """(text, result trees, ranges of dims then symbols, constraint trees with bounds)."""
    n_dims, n_symbols = rng.randint(1, 2), rng.randint(0, 1)
    ranges = []
    for _ in range(n_dims + n_symbols):
        lower = rng.choice([0, 0, rng.randint(-20, 20)])
        ranges.append((lower, lower + rng.randint(0, 24)))
    results = [result_tree(rng, n_dims, n_symbols) for _ in range(rng.randint(1, 2))]
    constraints = []
    if rng.random() < 0.3:  # bounds around the value at a random point: rarely infeasible
        tree = division_tree(rng, n_dims, n_symbols, 0)
        columns = box_columns(ranges)
        values = np.broadcast_to(evaluate_tree(tree, columns[:n_dims], columns[n_dims:]), columns[0].shape)
        lower = int(values[rng.randrange(len(values))]) - rng.randint(0, 2)
        constraints.append((tree, (lower, lower + rng.randint(0, 4))))
    names = [f"d{i}" for i in range(n_dims)] + [f"s{i}" for i in range(n_symbols)]
    header = f"({', '.join(names[:n_dims])})" + (f"[{', '.join(names[n_dims:])}]" if n_symbols else "")
    domain = [f"{n} in [{lo}, {hi}]" for n, (lo, hi) in zip(names, ranges)]
    domain += [f"{tree_text(t)} in [{lo}, {hi}]" for t, (lo, hi) in constraints]
    text = f"{header} -> ({', '.join(tree_text(t) for t in results)}), domain: {', '.join(domain)}"
    return text, results, ranges, constraints, n_dims


def map_nodes(m: IndexingMap) -> int:
    return sum(ax.node_count(e) for e in m.results)


# ----------------------------------------------------------------- tests


@pytest.mark.parametrize("seed", range(4))
def test_simplified_forms_are_equal_and_no_larger(seed: int) -> None:
    rng = random.Random(7000 + seed)
    smaller = empty = 0
    for _ in range(100):
        text, results, ranges, constraints, n_dims = random_map(rng)
        columns = box_columns(ranges)
        dims, symbols = columns[:n_dims], columns[n_dims:]
        keep = np.ones(dims[0].shape, dtype=bool)
        for tree, (lo, hi) in constraints:
            values = evaluate_tree(tree, dims, symbols)
            keep &= (values >= lo) & (values <= hi)
        parsed = IndexingMap.parse(text)
        simplified = parsed.simplify()
        assert np.array_equal(feasible(simplified, dims, symbols), keep), f"{text}\n-> {simplified}"
        assert_proven_equal(parsed, simplified, text)
        for tree, expr in zip(results, simplified.results):
            assert np.array_equal(np.broadcast_to(evaluate_tree(tree, dims, symbols), keep.shape)[keep], np.broadcast_to(evaluate_affine(expr, dims, symbols), keep.shape)[keep]), (
                f"{text}\n-> {simplified}"
            )
        assert map_nodes(simplified) <= map_nodes(parsed), f"{text}\n-> {simplified}"
        canonical = ExprSimplifier(simplified.dim_ranges, simplified.symbol_ranges, simplified.context)
        canonical_nodes = sum(ax.node_count(canonical(e)) for e in simplified.results)
        assert map_nodes(simplified) <= canonical_nodes, f"{text}\n-> {simplified}"
        smaller += map_nodes(simplified) < canonical_nodes
        empty += simplified.is_known_empty()
        assert simplified.simplify() == simplified, f"not idempotent: {simplified}"
    assert smaller > 0  # the seeds do exercise the choice of a smaller form
    assert empty < 20  # and most maps keep points to compare


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # floordiv(d1 + 4 - 7, 7) == floordiv(d1 + 4, 7) - 1: the offset stays inside.
        ("(d0, d1) -> ((d1 - 3) floordiv 7), domain: d0 in [0, 5], d1 in [0, 100]", "(d1 - 3) floordiv 7"),
        ("(d0, d1) -> ((d1 + 4) floordiv 7 - 1), domain: d0 in [0, 5], d1 in [0, 100]", "(d1 - 3) floordiv 7"),
        # 3 * (floordiv(d1 + 5, 7) - 1) == 3 * floordiv(d1 - 2, 7)
        ("(d0, d1) -> (((d1 - 9) floordiv 7) * 3 + 3), domain: d0 in [0, 5], d1 in [0, 100]", "((d1 - 2) floordiv 7) * 3"),
        # inside mod 5 the sum's constant 4 may become -1, which the floordiv absorbs.
        ("(d0, d1) -> (((d1 - 3) floordiv 7) mod 5), domain: d0 in [0, 5], d1 in [0, 100]", "((d1 - 3) floordiv 7) mod 5"),
        # nothing to gain: an offset with no floordiv to take it, and a multiple of 7.
        ("(d0, d1) -> (d1 floordiv 7 + 2), domain: d0 in [0, 5], d1 in [0, 100]", "d1 floordiv 7 + 2"),
        ("(d0, d1) -> ((d1 + 14) floordiv 7), domain: d0 in [0, 5], d1 in [0, 100]", "d1 floordiv 7 + 2"),
    ],
)
def test_chosen_form(text: str, expected: str) -> None:
    simplified = IndexingMap.parse(text).simplify()
    assert [str(e) for e in simplified.results] == [expected]


# ----------------------------------------------------------------- division by zero


SEMI_AFFINE = "()[s0, s1] -> (s0 floordiv s1, s0 mod s1, s0 ceildiv s1), domain: s0 in [-3, 3], s1 in [-2, 4]"


def test_enumerate_leaves_out_zero_divisors_without_warning() -> None:
    m = IndexingMap.parse(SEMI_AFFINE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        points, images = m.enumerate()
    expected = {
        (a, b): (a // b, a - b * (a // b), -((-a) // b)) for a in range(-3, 4) for b in range(-2, 5) if b != 0
    }
    got = {tuple(p): tuple(i) for p, i in zip(points.tolist(), images.tolist())}
    assert got == expected


def test_constraint_with_zero_divisor_excludes_the_point() -> None:
    m = IndexingMap.parse("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 3], d0 mod s0 in [0, 0]")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        points, images = m.enumerate()
    expected = {(d, s): (d + s,) for d in range(6) for s in range(1, 4) if d % s == 0}
    assert {tuple(p): tuple(i) for p, i in zip(points.tolist(), images.tolist())} == expected


def test_evaluators_name_the_zero_divisor() -> None:
    m = IndexingMap.parse(SEMI_AFFINE)
    floordiv = m.results[0]
    columns = [np.array([2, 3, 3]), np.array([1, 0, 0])]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ax.UndefinedDivisionError, match=r"'s1' is 0 at dims \(\), symbols \(3, 0\)"):
            ax.evaluate_array(floordiv, [], columns)
        defined = np.ones(3, dtype=bool)
        values = ax.evaluate_array(m.results[1], [], columns, defined)
    assert defined.tolist() == [True, False, False]
    assert values[0] == 0
    with pytest.raises(ax.UndefinedDivisionError, match="s0 ceildiv s1"):
        ax.evaluate(m.results[2], [], [1, 0])
    assert isinstance(ax.UndefinedDivisionError("x"), ValueError)
