"""Compiled loops (``jax.jit(f).lower(...).compile()``): XLA:CPU compares inside a
fusion in the loop's condition and passes the carries' inits from a calling
computation, so only the ``known_trip_count`` XLA writes in the while's
``backend_config`` counts the loop. ``fori_loop`` and ``scan`` with elementwise carries
must then be exact: no ``over_approximated``, and each result's relation equal to the
non-zero pattern of ``jax.jacfwd`` (the harness of ``test_fusion_jax.py``).

Notes from the ops of a body reach the loop's: a host callback in a compiled loop body,
an ``rng_bit_generator`` in a loop body and a callback in a ``cond`` branch (StableHLO,
as JAX lowers them: XLA:CPU expands the rng into bit arithmetic)."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax

from hlo_indexing import analyze, output_to_input_indexing, parse_module  # noqa: E402
from hlo_indexing.analysis.per_op import hlo_ops  # noqa: E402

from test_fusion_jax import Comparison, jacobian_pairs  # noqa: E402


def _fori(x):
    return lax.fori_loop(0, 4, lambda i, c: c * 2.0 + 1.0, x)


def _scan_stacked(c0, xs):
    """An elementwise carry and a stacked output (row ``t`` reads rows ``0..t`` of ``xs``)."""

    def body(c, x):
        c = c * 1.5 + x
        return c, c * 2.0

    return lax.scan(body, c0, xs)


def _rows(m, c0):
    """A loop over the rows of ``m``, read with ``dynamic_slice`` at the induction variable."""

    def body(i, c):
        row = lax.dynamic_slice(m, (i, 0), (1, m.shape[1]))[0]
        return c * row + row

    return lax.fori_loop(0, m.shape[0], body, c0)


PROGRAMS = {
    "fori_loop": (_fori, [(3,)], 1),
    "scan_stacked_output": (_scan_stacked, [(3,), (5, 3)], 2),
    "rows_by_dynamic_slice": (_rows, [(4, 3), (3,)], 1),
}


def _compiled(f, shapes):
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    return jax.jit(f).lower(*args).compile()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_compiled_loop_is_counted_and_exact(name) -> None:
    f, shapes, results = PROGRAMS[name]
    compiled = _compiled(f, shapes)
    assert '"known_trip_count"' in compiled.as_text()  # what counts the loop
    main = analyze(compiled).computation("@main")
    rng = np.random.default_rng(0)
    values = [jnp.asarray(rng.uniform(0.5, 1.5, s), jnp.float32) for s in shapes]
    for r in range(results):
        fused = main.maps[r]
        assert not fused.over_approximated, fused.over_approximated
        ours = []
        for maps in fused.maps:
            assert not any(m.is_undefined for m in maps), [m.reason for m in maps if m.is_undefined]
            ours.append(frozenset().union(*(m.relation() for m in maps)))
        only_r = (lambda *a, r=r: f(*a)[r]) if results > 1 else f
        c = Comparison(tuple(ours), tuple(jacobian_pairs(only_r, values)), tuple(map(tuple, shapes)))
        assert c.dependences > 0, f"{name} result {r}: empty jacobian, nothing checked"
        for k, missed in enumerate(c.misses):
            assert not missed, f"{name} result {r} arg {k}: {len(missed)} missed, e.g. {sorted(missed)[:3]}"
        assert c.over_approximations == 0, f"{name} result {r}: {c.over_approximations} pairs beyond the jacobian"


def _callback_loop(x):
    def body(i, c):
        y = jax.pure_callback(lambda v: np.asarray(v) * 2, jax.ShapeDtypeStruct(c.shape, c.dtype), c)
        return y + 1.0

    return lax.fori_loop(0, 3, body, x)


def test_a_host_callback_in_a_compiled_loop_body_is_noted() -> None:
    main = analyze(_compiled(_callback_loop, [(3,)])).computation("@main")
    (fused,) = main.maps
    assert any("stablehlo.while" in said and "host callback" in said for said in fused.over_approximated), (
        fused.over_approximated
    )


def _rng_loop(key, x):
    def body(i, c):
        k, v = c
        k2, bits = lax.rng_bit_generator(k, v.shape, dtype=jnp.uint32)
        return k2, v + bits.astype(jnp.float32)

    return lax.fori_loop(0, 3, body, (key, x))


def _lowered(f, typed_shapes):
    text = jax.jit(f).lower(*[jax.ShapeDtypeStruct(s, d) for s, d in typed_shapes]).as_text()
    return parse_module(text)


RNG_NOTE = "the new state is taken to read every word of the state"


def test_an_rng_in_a_loop_body_reaches_the_loop_maps_and_the_fused_maps() -> None:
    module = _lowered(_rng_loop, [((4,), jnp.uint32), ((3,), jnp.float32)])
    loop = next(op for op in hlo_ops(module.operation) if op.operation.name == "stablehlo.while")
    assert any(RNG_NOTE in note for note in output_to_input_indexing(loop, 2).notes)  # the x carry
    main = analyze(module).computation("@main")
    for fused in main.maps:
        assert any(RNG_NOTE in said for said in fused.over_approximated), fused.over_approximated


def _callback_branch(p, x):
    twice = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return lax.cond(p[0] > 0.0, lambda: jax.pure_callback(lambda v: np.asarray(v) * 2, twice, x), lambda: x + 1.0)


def test_a_host_callback_in_a_branch_reaches_the_case_maps() -> None:
    module = _lowered(_callback_branch, [((1,), jnp.float32), ((3,), jnp.float32)])
    (fused,) = analyze(module).computation("@main").maps
    assert any("stablehlo.case" in said and "host callback" in said for said in fused.over_approximated), (
        fused.over_approximated
    )
