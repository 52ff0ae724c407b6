"""Custom calls by target name: an unknown target stays unknown and its reason names
the target; a known one (LAPACK) reads its batch's matrix whole, checked against the
jacobian of the kernel JAX calls."""

from __future__ import annotations

import numpy as np
import pytest

from hlo_indexing import analyze

jax = pytest.importorskip("jax")
jnp = jax.numpy


def test_unknown_target_names_it_in_the_reason() -> None:
    result = analyze(
        """func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @my_secret_kernel(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
    )
    (call,) = [op for op in result.ops if op.op == "stablehlo.custom_call"]
    assert call.indexing[0].is_unknown
    assert "'my_secret_kernel'" in call.indexing[0].reason


def test_lapack_qr_reads_its_batch_matrix_whole() -> None:
    """Every element of Q of batch b depends on every element of batch b of the input
    (the jacobian at a random point), and never on another batch."""
    a = jnp.asarray(np.random.default_rng(0).uniform(0.5, 1.5, (2, 3, 3)), jnp.float32)
    result = analyze(jax.jit(lambda x: jnp.linalg.qr(x)[0]).lower(a))
    (maps,) = result.computation("main").maps[0].maps
    ours = set().union(*(m.relation() for m in maps))
    jacobian = np.asarray(jax.jacfwd(lambda x: jnp.linalg.qr(x)[0])(a))
    expected = {(tuple(r[:3]), tuple(r[3:])) for r in np.argwhere(jacobian != 0).tolist()}
    assert expected <= ours
    assert all(out[0] == inp[0] for out, inp in ours)


TOP_K_HLO = """HloModule topk

%compare (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %gt = pred[] compare(%a, %b), direction=GT
}

ENTRY %main (p: f32[3,5]) -> (f32[3,2], s32[3,2]) {
  %p = f32[3,5]{1,0} parameter(0)
  %tk = (f32[3,2]{1,0}, s32[3,2]{1,0}) custom-call(%p), custom_call_target="TopK", called_computations={%compare}
  %values = f32[3,2]{1,0} get-tuple-element(%tk), index=0
  %indices = s32[3,2]{1,0} get-tuple-element(%tk), index=1
  ROOT %t = (f32[3,2]{1,0}, s32[3,2]{1,0}) tuple(%values, %indices)
}
"""


@pytest.mark.parametrize("direction", ["output-to-input", "input-to-output"])
def test_tuple_returning_top_k_is_followed_element_by_element(direction) -> None:
    """XLA's ``TopK`` custom call (compiled HLO) returns a tuple (values, indices): each
    element read through ``get-tuple-element`` gets the maps ``lax.top_k``'s StableHLO
    op gets (test_real_programs checks those against the jacobian and perturbations)."""
    compiled = analyze(TOP_K_HLO, direction=direction).computation("main")
    lowered = jax.jit(lambda x: jax.lax.top_k(x, 2)).lower(jax.ShapeDtypeStruct((3, 5), jnp.float32))
    stablehlo = analyze(lowered, direction=direction).computation("main")
    assert not any(m.is_undefined for fused in compiled.maps for maps in fused.maps for m in maps)
    def texts(computation) -> list:  # the two modules live in different MLIR contexts
        return [[sorted(map(str, maps)) for maps in fused.maps] for fused in computation.maps]

    assert texts(compiled) == texts(stablehlo)


def _ordered_callback(x):
    """An ordered ``io_callback`` (a token in and out of @main and of the call) reversing
    the rows on the host, and a ``debug.print`` (a call with no result)."""
    rows_reversed = jax.ShapeDtypeStruct(x.shape, x.dtype)
    y = jax.experimental.io_callback(lambda v: np.asarray(v)[::-1] * 2.0, rows_reversed, x, ordered=True)
    jax.debug.print("{s}", s=x.sum())
    return y + 1.0


@pytest.mark.parametrize("stage", ["stablehlo", "compiled"])
def test_ordered_io_callback_reads_its_tensor_operand_and_not_its_token(stage) -> None:
    """The tensor result of an ordered ``io_callback`` (in the compiled HLO, element 1 of
    the call's ``(token[], f32[4,3])``) reads every element a perturbation of ``x`` shows
    it depends on; the tokens hold no element: no map goes to or from them."""
    import jax.experimental  # noqa: F401 - io_callback lives there; jax itself is optional (importorskip)

    x = jnp.asarray(np.random.default_rng(0).uniform(0.5, 1.5, (4, 3)), jnp.float32)
    lowered = jax.jit(_ordered_callback).lower(x)
    main = analyze(lowered.as_text() if stage == "stablehlo" else lowered.compile().as_text()).computation("main")
    token_result, value = main.maps
    assert [set(maps) for maps in token_result.maps] == [set(), set()]
    to_token, to_x = value.maps
    assert not to_token
    assert to_x and not any(m.is_undefined for m in to_x), [m.reason for m in to_x]
    ours = set().union(*(m.relation() for m in to_x))
    run = jax.jit(_ordered_callback)
    base = np.asarray(run(x))
    expected = set()
    for index in np.ndindex(*x.shape):
        changed = np.argwhere(np.asarray(run(x.at[index].add(10.0))) != base)
        expected |= {(tuple(row), index) for row in changed.tolist()}
    assert len(expected) == x.size  # each output element depends on one input element: the reversed row's
    assert expected <= ours
