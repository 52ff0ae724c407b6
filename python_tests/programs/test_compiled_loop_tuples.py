"""Tuple-returning custom calls inside loop and branch bodies of compiled HLO (issue
#31): XLA's CPU compiler calls LAPACK through custom calls that return a tuple (the
factor and an info code), unpacked by ``get-tuple-element``. Inside a ``lax.cond``
branch (the walk of a branch's captured values) and a ``cond`` inside a
``lax.fori_loop``, the fused maps of ``@main`` must be known and miss no dependence of
``jax.jacfwd`` (the harness of ``test_fusion_jax.py``)."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax

from hlo_indexing import analyze  # noqa: E402

from test_fusion_jax import Comparison, jacobian_pairs  # noqa: E402


def _spd(a):
    return a @ jnp.swapaxes(a, -1, -2) + 3.0 * jnp.eye(a.shape[-1])


def _cond_cholesky(p, a, b):
    """A branch factorises (``lapack_spotrf_ffi`` returns ``(factor, info)``)."""
    return lax.cond(p[0] > 1.0, lambda: jnp.linalg.cholesky(_spd(a)), lambda: b * 2.0)


def _loop_cond_eigh(p, a):
    """A ``cond`` in a loop body, one branch an eigendecomposition (``lapack_ssyevd_ffi``
    returns ``(vectors, values, info)``)."""

    def body(i, c):
        return lax.cond(p[0] > 1.0, lambda: jnp.linalg.eigh(_spd(c))[1] * 0.5 + c, lambda: c[::-1])

    return lax.fori_loop(0, 2, body, a)


PROGRAMS = {
    "cond_cholesky": (_cond_cholesky, [(1,), (3, 3), (3, 3)], "lapack_spotrf_ffi"),
    "loop_cond_eigh": (_loop_cond_eigh, [(1,), (3, 3)], "lapack_ssyevd_ffi"),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_tuple_custom_call_in_a_body_misses_no_dependence(name) -> None:
    f, shapes, target = PROGRAMS[name]
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    compiled = jax.jit(f).lower(*args).compile()
    assert f'custom_call_target="{target}"' in compiled.as_text()  # the call is there, returning a tuple
    fused = analyze(compiled).computation("@main").maps[0]
    ours = []
    for maps in fused.maps:
        assert not any(m.is_undefined for m in maps), [m.reason for m in maps if m.is_undefined]
        ours.append(frozenset().union(*(m.relation() for m in maps)))
    rng = np.random.default_rng(0)
    values = [jnp.asarray(rng.uniform(0.5, 1.5, s), jnp.float32) for s in shapes]
    c = Comparison(tuple(ours), tuple(jacobian_pairs(f, values)), tuple(map(tuple, shapes)))
    assert c.dependences > 0, f"{name}: empty jacobian, nothing checked"
    for k, missed in enumerate(c.misses):
        assert not missed, f"{name} arg {k}: {len(missed)} missed, e.g. {sorted(missed)[:3]}"
    for k, outside in enumerate(c.out_of_bounds):
        assert not outside, f"{name} arg {k}: out of bounds, e.g. {sorted(outside)[:3]}"
