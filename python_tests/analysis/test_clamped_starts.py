"""Start indices that leave the range their op clamps them to (``dynamic_slice``,
``dynamic_update_slice``, ``gather``), computed in the program from a loop counter or an
``iota`` and clamped by the program too (``jnp.clip``: ``maximum``/``minimum``): the
fused maps of the function are exact, compared with ``jax.jacfwd`` (output element ``o``
depends on input element ``i`` exactly when the map relates them). The clamps are folded
piecewise (:mod:`hlo_indexing.analysis.runtime_folding`, ``min``/``max`` as in
:mod:`hlo_indexing.maps.minmax`)."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax

from hlo_indexing import analyze  # noqa: E402


def relation_of(f, x) -> set:
    result = analyze(jax.jit(f).lower(x), per_op=False)
    main = next(c for c in result.computations if c.name.endswith("main"))
    (maps,) = main.maps[0].maps[:1]
    assert all(not m.runtime_vars for m in maps), [str(m) for m in maps]  # every start folded
    return set().union(*(m.relation() for m in maps))


def jacobian_relation(f, x) -> set:
    jac = np.asarray(jax.jacfwd(f)(x))
    out_rank = jac.ndim - x.ndim
    return {(tuple(r[:out_rank]), tuple(r[out_rank:])) for r in np.argwhere(jac != 0).tolist()}


def slice_at_loop_starts_past_the_end(x):
    """Starts 0, 3, 6, 9, 12 of a 4-window in 10 elements: 9 and 12 read at 6."""
    return lax.fori_loop(0, 5, lambda i, acc: acc + lax.dynamic_slice(x, (i * 3,), (4,)), jnp.zeros(4))


def update_at_loop_starts_past_the_end(x):
    """Writes at 0, 4, 8 (clamped to 7), 12 (clamped to 7): the last write wins."""
    return lax.fori_loop(0, 4, lambda i, acc: lax.dynamic_update_slice(acc, x[:3] + i, (i * 4,)), jnp.zeros(10))


def slice_at_clipped_starts(x):
    """``clip(3 i - 2, 0, 5)``: -2 and 1 ... 10 clipped by the program, then by the slice."""
    return lax.fori_loop(
        0, 5, lambda i, acc: acc + lax.dynamic_slice(x, (jnp.clip(i * 3 - 2, 0, 5),), (4,)), jnp.zeros(4)
    )


def gather_at_clipped_indices(x):
    """Rows ``clip(2 k - 3, 0, 9)``: the first two read row 0."""
    return x[jnp.clip(jnp.arange(6) * 2 - 3, 0, 9)]


def gather_at_indices_past_the_end(x):
    """Rows ``3 k + 1`` of 10: XLA's gather clamps 10 and 13 to 9."""
    dims = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    indices = (jnp.arange(5) * 3 + 1)[:, None]
    return lax.gather(x, indices, dims, slice_sizes=(1,), mode=lax.GatherScatterMode.CLIP)


@pytest.mark.parametrize(
    "f",
    [
        slice_at_loop_starts_past_the_end,
        update_at_loop_starts_past_the_end,
        slice_at_clipped_starts,
        gather_at_clipped_indices,
        gather_at_indices_past_the_end,
    ],
)
def test_fused_maps_are_the_jacobians_dependence(f) -> None:
    x = jnp.arange(10.0) + 1.0
    assert relation_of(f, x) == jacobian_relation(f, x)
