"""Runtime variables computed inside the computation (constants, iota, integer
arithmetic on them) are folded into the fused maps: the value where the op's clamp is
a no-op, the bound it is clamped to elsewhere.

Each program reads exactly one element of ``x`` per output element (dynamic_slice,
gather); running it under JAX on ``x = arange`` gives, in every output element, the
flat index it read: the brute-force truth. Fused maps must cover the truth, stay in
bounds, and be exact where folded (maps without runtime variables)."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax

from hlo_indexing import fusion_indexing, parse_module  # noqa: E402
from hlo_indexing.dialect_glue.bindings import ir  # noqa: E402

GATHER_ROWS = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))


def gather_rows(x, indices):
    """Rows ``indices[i, 0]`` of ``x`` (clamped into range, as XLA's gather does)."""
    return lax.gather(x, indices, GATHER_ROWS, slice_sizes=(1, x.shape[1]), mode=lax.GatherScatterMode.CLIP)


def fused_maps(f, shape, *extra):
    args = [jax.ShapeDtypeStruct(shape, jnp.int32), *extra]
    module = parse_module(jax.jit(f).lower(*args).as_text())
    main = next(op for op in module.body.operations if ir.StringAttr(op.attributes["sym_name"]).value == "main")
    return fusion_indexing(main).maps[0]


def truth(f, shape) -> set:
    x = jnp.arange(int(np.prod(shape)), dtype=jnp.int32).reshape(shape)
    out = np.asarray(jax.jit(f)(x))
    return {(idx, tuple(int(i) for i in np.unravel_index(int(out[idx]), shape))) for idx in np.ndindex(*out.shape)}


def check(f, shape) -> tuple[int, int]:
    """Checks cover / bounds / exactness; returns (#folded maps, #maps keeping a runtime variable)."""
    maps = fused_maps(f, shape)
    expected = truth(f, shape)
    ours = set().union(*(m.relation() for m in maps))
    assert expected <= ours, sorted(expected - ours)[:3]
    assert all(all(0 <= i < n for i, n in zip(pair[1], shape, strict=True)) for pair in ours)
    folded = [m for m in maps if not m.runtime_vars]
    for m in folded:
        assert m.relation() <= expected, (str(m), sorted(m.relation() - expected)[:3])
    return len(folded), len(maps) - len(folded)


def test_scalar_constant_start_is_folded() -> None:
    assert check(lambda x: lax.dynamic_slice(x, (42,), (10,)), (100,)) == (1, 0)


def test_constant_start_outside_the_clamp_folds_to_the_bound() -> None:
    """95 is clamped to 90 (XLA keeps the runtime variable here)."""
    assert check(lambda x: lax.dynamic_slice(x, (95,), (10,)), (100,)) == (1, 0)
    assert check(lambda x: lax.dynamic_slice(x, (-3,), (10,)), (100,)) == (1, 0)


def test_starts_from_sliced_iota_and_non_splat_constant() -> None:
    def f(x):
        row = lax.slice(lax.iota(jnp.int32, 5), (3,), (4,)).reshape(())
        col = lax.slice(jnp.array([5, 1], jnp.int32), (1,), (2,)).reshape(())
        return lax.dynamic_slice(x, (row, col), (2, 3))

    assert check(f, (6, 5)) == (1, 0)


def test_gather_of_affine_iota_is_folded_in_and_past_the_range() -> None:
    """Indices ``2 i + 1``: rows 1, 3, 5, 7 are in range; 9 and 11 are clamped to 7, a
    second exact piece."""
    f = lambda x: gather_rows(x, lax.iota(jnp.int32, 6).reshape(6, 1) * 2 + 1)  # noqa: E731
    assert check(f, (8, 3)) == (2, 0)


def test_gather_through_transpose_broadcast_convert_and_negate() -> None:
    def f(x):
        iota = lax.broadcasted_iota(jnp.int32, (1, 4), 1)  # [[0, 1, 2, 3]]
        idx = lax.convert_element_type(jnp.transpose(6 - iota), jnp.int64)  # rows 6, 5, 4, 3
        return gather_rows(x, -(-idx))

    jax.config.update("jax_enable_x64", True)
    try:
        assert check(f, (7, 2)) == (1, 0)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_a_convert_that_wraps_is_not_folded() -> None:
    """``iota * 100`` converted to int8 wraps (200 -> -56, then clamped to 0): folding
    ``100 i`` would claim row 200."""
    f = lambda x: gather_rows(x, lax.convert_element_type(lax.iota(jnp.int32, 4) * 100, jnp.int8).reshape(4, 1))  # noqa: E731
    assert check(f, (300, 1)) == (0, 1)


def test_start_from_an_argument_keeps_the_variable() -> None:
    f = lambda x, i: lax.dynamic_slice(x, (i,), (3,))  # noqa: E731
    (m,) = fused_maps(f, (10,), jax.ShapeDtypeStruct((), jnp.int32))
    assert len(m.runtime_vars) == 1
    assert {pair[1] for pair in m.relation()} == {(i,) for i in range(10)}


def test_undecided_select_keeps_the_variable() -> None:
    """``i < 0 ? i + 8 : i`` over ``i = iota - 2`` takes both branches: not folded."""

    def f(x):
        i = lax.iota(jnp.int32, 6) - 2
        return gather_rows(x, jnp.where(i < 0, i + 8, i).reshape(6, 1))

    assert check(f, (8, 2)) == (0, 1)


SCATTER_ROWS = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))


def check_scatter(row_indices, shape) -> tuple[int, int]:
    """Scatter of ``u`` rows into ``x`` rows ``row_indices()`` (out-of-range rows are
    dropped): the fused output -> ``u`` maps must cover the jacobian with respect to
    ``u`` (1 where written), and maps without runtime variables must be exact. A
    scatter reads its indices at update positions (the maps' range variables), so a
    folded value is an expression of them. Returns (#folded maps, #maps keeping one)."""

    def f(x, u):
        return lax.scatter(x, row_indices().reshape(-1, 1), u, SCATTER_ROWS)

    updates = (int(row_indices().shape[0]), shape[1])
    args = (jax.ShapeDtypeStruct(shape, jnp.float32), jax.ShapeDtypeStruct(updates, jnp.float32))
    module = parse_module(jax.jit(f).lower(*args).as_text())
    maps = fusion_indexing(next(iter(module.body.operations))).maps[1]
    ours = set().union(*(m.relation() for m in maps))
    jac = np.asarray(jax.jacfwd(f, argnums=1)(jnp.ones(shape), jnp.ones(updates)))
    expected = {(tuple(r[:2].tolist()), tuple(r[2:].tolist())) for r in np.argwhere(jac != 0)}
    assert expected and expected <= ours, sorted(expected - ours)[:3]
    folded = [m for m in maps if not m.runtime_vars]
    for m in folded:
        assert m.relation() <= expected, (str(m), sorted(m.relation() - expected)[:3])
    return len(folded), len(maps) - len(folded)


def test_scatter_indices_from_iota_are_folded_at_update_positions() -> None:
    """Update row ``s`` goes to row ``2 - s``: folded exactly, over the update position
    (substituting the value at the *output* row instead would give row ``d0 = 2 - d0``)."""
    assert check_scatter(lambda: 2 - lax.iota(jnp.int32, 3), (3, 3)) == (1, 0)


def test_scatter_rows_out_of_range_keep_the_variable() -> None:
    """Rows ``2 s`` for ``s < 4`` into 5 rows: 0, 2, 4 fold; row 6 is dropped by the
    scatter, where the variable is kept (an over-approximation)."""
    assert check_scatter(lambda: lax.iota(jnp.int32, 4) * 2, (5, 2)) == (1, 1)


@pytest.mark.parametrize("seed", range(8))
def test_random_affine_iota_indices(seed) -> None:
    """Gathers and dynamic slices whose indices are ``a * iota + b`` (random ``a``,
    ``b``, sometimes through JAX's negative-index wrap): covered, in bounds, and exact at
    every output element whose index is decided (the wrap's test has one outcome over
    the whole domain), inside the clamp range or clamped to its bound -- the elements
    folding must resolve."""
    rng = np.random.default_rng(seed)
    rows, n = int(rng.integers(3, 9)), int(rng.integers(2, 6))
    a, b = int(rng.integers(-3, 4)), int(rng.integers(-4, 8))
    wrap = bool(rng.integers(2))

    def index(i):
        return jnp.where(i < 0, i + rows, i) if wrap else i

    if rng.integers(2):
        f = lambda x: gather_rows(x, index(lax.iota(jnp.int32, n) * a + b).reshape(n, 1))  # noqa: E731
        values, per_output = [a * i + b for i in range(n)], lambda out: out[0]
    else:
        start = int(rng.integers(-2, rows + 2))
        f = lambda x: lax.dynamic_slice(x, (index(jnp.int32(start)), jnp.int32(0)), (2, 2))  # noqa: E731
        values, per_output = [start], lambda out: 0
    undecided = wrap and min(values) < 0 <= max(values)  # the wrap's select: nothing can fold
    resolvable = set() if undecided else set(range(len(values)))
    check(f, (rows, 2))
    expected = truth(f, (rows, 2))
    ours = set().union(*(m.relation() for m in fused_maps(f, (rows, 2))))
    pick = lambda pairs: {p for p in pairs if per_output(p[0]) in resolvable}  # noqa: E731
    assert pick(ours) == pick(expected)


def test_a_deep_dag_of_index_arithmetic_stays_fast() -> None:
    """``i = i + i`` forty times (2^40 paths): the producer walk is budgeted, so the
    variable is kept rather than explored for ever."""
    text = ["func.func @f(%x: tensor<100xf32>) -> tensor<2xf32> {", "  %i0 = stablehlo.constant dense<0> : tensor<i32>"]
    for k in range(40):
        text.append(f"  %i{k + 1} = stablehlo.add %i{k}, %i{k} : tensor<i32>")
    text.append("  %r = stablehlo.dynamic_slice %x, %i40, sizes = [2] : (tensor<100xf32>, tensor<i32>) -> tensor<2xf32>")
    text += ["  return %r : tensor<2xf32>", "}"]
    module = parse_module("\n".join(text))
    (m,) = fusion_indexing(next(iter(module.body.operations))).maps[0]
    assert len(m.runtime_vars) == 1
