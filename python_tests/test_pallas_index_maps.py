"""Pallas index maps read into IndexingMap pieces (hlo_indexing.pallas): at every grid
point the piece that holds it gives the block indices jax computes from the index map's
jaxpr (brute force over the grid), for hand-picked maps (jnp's ``//`` and ``%`` with
their sign corrections, clamps, selects, comparisons, negative values) and for
generated expressions (hypothesis). The pieces cover the grid exactly once; values the
analysis does not follow become unknowns named after their origin."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("jax.experimental.pallas")

import jax.numpy as jnp  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from jax import lax  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402
from jax.experimental.pallas import tpu as pltpu  # noqa: E402

from hlo_indexing.dialect_glue.context import current_or_default_context  # noqa: E402
from hlo_indexing.pallas.calls import evaluate_index_map, trace_calls  # noqa: E402
from hlo_indexing.pallas.operand_maps import operand_maps  # noqa: E402

NAMESPACE = {"jnp": jnp, "lax": lax}


def _call(index_map, grid, rank, prefetch=0):
    """A pallas_call whose input block (1, ..., 1) moves by ``index_map``."""

    def kernel(*refs):
        refs[-1][...] = jnp.zeros(refs[-1].shape, jnp.float32)

    def function(*args):
        spec = pl.BlockSpec((1,) * rank, index_map)
        out = pl.BlockSpec((1,) * rank, lambda *g: (0,) * rank)
        if prefetch:
            grid_spec = pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=prefetch, grid=grid, in_specs=[spec], out_specs=out)
            return pl.pallas_call(kernel, grid_spec=grid_spec, out_shape=jax.ShapeDtypeStruct((1000,) * rank, jnp.float32))(*args)
        return pl.pallas_call(kernel, grid=grid, in_specs=[spec], out_specs=out, out_shape=jax.ShapeDtypeStruct((1000,) * rank, jnp.float32))(*args)

    args = [jax.ShapeDtypeStruct((8,), jnp.int32)] * prefetch + [jax.ShapeDtypeStruct((1000,) * rank, jnp.float32)]
    (call,) = trace_calls(function, args)
    return call


def assert_pieces_match_jax(index_map, grid, rank):
    call = _call(index_map, grid, rank)
    operand = call.inputs[0]
    maps = operand_maps(call, operand, current_or_default_context())
    assert not maps.problem
    for point in itertools.product(*[range(n) for n in grid]):
        holding = [p for p in maps.pieces if p.contains_point(point, [])]
        assert len(holding) == 1, (point, [str(p) for p in maps.pieces])
        assert holding[0].evaluate(point) == evaluate_index_map(call, operand, point), (point, str(holding[0]))
    return maps


CASES = [
    ("lambda i, j: (i // 2, j % 3)", (5, 7)),
    ("lambda i, j: ((i - 2) // 2, (j - 3) % 4)", (5, 7)),
    ("lambda i, j: ((i - 3) // -2, (j - 5) % -3)", (6, 9)),
    ("lambda i, j: (lax.div(i - 3, 2), lax.rem(j - 4, 3))", (7, 9)),
    ("lambda i, j: (jnp.minimum(i + j, 4), jnp.maximum(i - j, 0))", (5, 5)),
    ("lambda i, j: (jnp.clip(i * 3 - j, 1, 6), jnp.where(i == 2, 7, j))", (5, 4)),
    ("lambda i, j: (lax.select(i < j, i, j), jnp.abs(i - j))", (4, 6)),
    ("lambda i, j: (jnp.sign(i - 2) + 1, (i * 4 + j) // 3)", (5, 3)),
    ("lambda i, j: (jnp.where((i > 1) & (j < 2), i, 0), jnp.where((i == 0) | (j == 3), 1, 2))", (4, 4)),
    ("lambda i, j: (i << 1, (j - 4) >> 1)", (3, 8)),
]


@pytest.mark.parametrize("source, grid", CASES)
def test_pieces_give_the_block_index_jax_computes_at_every_grid_point(source, grid):
    assert_pieces_match_jax(eval(source, NAMESPACE), grid, 2)  # noqa: S307 - test data


def test_a_floor_division_of_a_grid_index_is_one_piece():
    maps = assert_pieces_match_jax(lambda i, j: (i // 2, j % 3), (5, 7), 2)
    assert [str(p) for p in maps.pieces] == ["(i, j) -> (i floordiv 2, j mod 3), domain: i in [0, 4], j in [0, 6]"]


def test_a_causal_select_splits_the_grid_by_a_constraint():
    maps = assert_pieces_match_jax(lambda i, j: (lax.select(i * 128 >= j * 128, j, 0), i), (4, 4), 2)
    assert sorted(str(p) for p in maps.pieces) == [
        "(i, j) -> (0, i), domain: i in [0, 3], j in [0, 3], i - j in [-3, -1]",
        "(i, j) -> (j, i), domain: i in [0, 3], j in [0, 3], i - j in [0, 3]",
    ]


def test_element_maps_hold_every_element_of_every_block():
    call = _call(lambda i, j: (jnp.minimum(i, 1), j + 1), (3, 3), 2)
    maps = operand_maps(call, call.inputs[0], current_or_default_context())
    relation = set()
    for element_map in maps.element_maps:
        relation |= element_map.relation()
    # Blocks of (1, 1): grid point (i, j) reads element (min(i, 1), j + 1).
    assert relation == {((i, j), (min(i, 1), j + 1)) for i in range(3) for j in range(3)}


def test_a_prefetched_scalar_is_an_unknown_named_by_where_it_is_read():
    call = _call(lambda i, j, s: (s[i] * 2 + 1, j), (4, 2), 2, prefetch=1)
    maps = operand_maps(call, call.inputs[0], current_or_default_context())
    (piece,) = maps.pieces
    assert maps.runtime_origins == ("scalar-prefetch operand 0[i]",)
    assert maps.components_with_unknowns() == {0}
    assert str(piece.results[0]) == "s0 * 2 + 1"


def test_a_product_of_two_grid_indices_is_an_unknown_named_after_it():
    call = _call(lambda i, j: (i * j, j), (3, 3), 2)
    maps = operand_maps(call, call.inputs[0], current_or_default_context())
    assert maps.runtime_origins == ("the result of 'mul' (the product of two values that vary)",)
    assert maps.components_with_unknowns() == {0}


# ------------------------------------------------------------------ generated maps

_ATOMS = st.sampled_from(["i", "j", "1", "3", "-2", "0"])


@st.composite
def _expressions(draw, depth=3):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(_ATOMS)
    kind = draw(st.sampled_from(["add", "sub", "scale", "floordiv", "mod", "min", "max", "where", "div", "rem", "abs", "clip"]))
    a = draw(_expressions(depth - 1))
    if kind in ("add", "sub", "min", "max"):
        b = draw(_expressions(depth - 1))
        return {"add": f"({a} + {b})", "sub": f"({a} - {b})", "min": f"jnp.minimum({a}, {b})", "max": f"jnp.maximum({a}, {b})"}[kind]
    if kind == "where":
        b, c, d = (draw(_expressions(depth - 1)) for _ in range(3))
        op = draw(st.sampled_from(["<", "<=", "==", "!=", ">"]))
        return f"jnp.where({a} {op} {b}, {c}, {d})"
    if kind == "abs":
        return f"jnp.abs({a})"
    if kind == "clip":
        low = draw(st.integers(-3, 2))
        return f"jnp.clip({a}, {low}, {low + draw(st.integers(0, 4))})"
    k = draw(st.sampled_from([-3, -2, 2, 3, 4]))
    return {"scale": f"({a} * {k})", "floordiv": f"({a} // {k})", "mod": f"({a} % {k})", "div": f"lax.div({a}, {k})", "rem": f"lax.rem({a}, {k})"}[kind]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(_expressions(), _expressions(), st.integers(1, 5), st.integers(1, 5))
def test_generated_index_maps_agree_with_jax_at_every_grid_point(first, second, rows, columns):
    source = f"lambda i, j: (jnp.asarray({first}, jnp.int32), jnp.asarray({second}, jnp.int32))"
    call = _call(eval(source, NAMESPACE), (rows, columns), 2)  # noqa: S307 - generated test data
    operand = call.inputs[0]
    maps = operand_maps(call, operand, current_or_default_context())
    if maps.problem:  # too many pieces: allowed, but then every question is left open
        assert "MAX_INDEX_MAP_CASES" in maps.problem
        return
    for point in itertools.product(range(rows), range(columns)):
        holding = [p for p in maps.pieces if p.contains_point(point, [0] * p.num_symbols)]
        assert len(holding) == 1, (source, point)
        if not holding[0].runtime_vars:
            assert holding[0].evaluate(point) == evaluate_index_map(call, operand, point), (source, point, str(holding[0]))
    assert np.all([not p.is_known_empty() for p in maps.pieces])


def test_separable_forms_are_one_dimension_per_result():
    from hlo_indexing.maps import IndexingMap
    from hlo_indexing.maps.linear_form import single_dimension_forms

    def forms(text):
        return single_dimension_forms(IndexingMap.parse(text).results)

    assert forms("(d0, d1) -> (d1 * 2 + 1, 3, -d0), domain: d0 in [0, 3], d1 in [0, 3]") == [(1, 2, 1), (None, 0, 3), (0, -1, 0)]
    assert forms("(d0, d1) -> (d0 + d1), domain: d0 in [0, 3], d1 in [0, 3]") is None
    assert forms("(d0, d1) -> (d0, d0), domain: d0 in [0, 3], d1 in [0, 3]") is None
    assert forms("(d0) -> (d0 floordiv 2), domain: d0 in [0, 3]") is None


def test_a_block_index_beside_a_prefetched_one_is_still_decided():
    import hlo_indexing

    def kernel(s_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...]

    def function(s, x):
        grid_spec = pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(4, 3),
            in_specs=[pl.BlockSpec((8, 128), lambda i, j, s: (s[i], (i * 3 + j) % 5))],
            out_specs=pl.BlockSpec((8, 128), lambda i, j, s: (i, j)),
        )
        return pl.pallas_call(kernel, grid_spec=grid_spec, out_shape=jax.ShapeDtypeStruct((32, 384), jnp.float32))(s, x)

    report = hlo_indexing.check_pallas(function, jax.ShapeDtypeStruct((4,), jnp.int32), jax.ShapeDtypeStruct((32, 512), jnp.float32))
    # Column block (i*3 + j) % 5 reaches 4 (columns 512..639, past the 512 columns): out of
    # range, decided although the row block is a prefetched scalar, shown as '?'.
    (finding,) = report.findings
    assert finding.kind == "block-index-out-of-range" and finding.operand == "input 0 (x_ref)"
    assert finding.grid_point == (3, 0) and "block index is (?, 4)" in finding.message


def test_a_block_index_that_may_wrap_around_int32_is_not_decided():
    call = _call(lambda i, j: (i * 2**30, j), (4, 2), 2)
    maps = operand_maps(call, call.inputs[0], current_or_default_context())
    assert "int32" in maps.problem and maps.pieces == ()
