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
