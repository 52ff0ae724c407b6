"""Fused maps through nested computations, in both directions: ``func.call`` of private
functions (JAX's nested ``jax.jit``), ``stablehlo.composite`` (through its
decomposition) and nested ``mhlo.fusion`` regions.

JAX programs are checked against the sparsity of ``jax.jacfwd`` (positive inputs and
ops with non-vanishing derivatives, so the pattern is structurally exact): output ->
input maps must give exactly the (output, input) pairs, input -> output maps exactly
the transposed pairs. The nested ``mhlo.fusion`` is checked against numpy."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax

from hlo_indexing import fusion_indexing, fusion_input_to_output_indexing, parse_module  # noqa: E402
from hlo_indexing.dialect_glue.bindings import ir  # noqa: E402

from test_op_indexing_support import relation


def jacobian_pairs(f, shapes, result_index: int) -> list[set]:
    rng = np.random.default_rng(0)
    values = [jnp.asarray(rng.uniform(0.5, 1.5, s), jnp.float32) for s in shapes]

    def g(*args):
        out = f(*args)
        return out[result_index] if isinstance(out, tuple) else out

    jacobians = jax.jit(jax.jacfwd(g, argnums=tuple(range(len(shapes)))))(*values)
    out = []
    for value, jac in zip(values, jacobians, strict=True):
        jac = np.asarray(jac)
        rank = jac.ndim - value.ndim
        out.append({(tuple(r[:rank].tolist()), tuple(r[rank:].tolist())) for r in np.argwhere(jac != 0)})
    return out


inner = jax.jit(lambda a: jnp.flip(a, 0).T * 2.0)


@jax.jit
def two_results(a, b):
    return jnp.log1p(a) + b, jnp.flip(a, 1)


@partial(lax.composite, name="test.reverse_transpose")
def reverse_transpose(x):
    return jnp.flip(x, 1).T


# name, program, argument shapes, number of results, the same function without
# composites for the jacobian (JAX has no derivative rule for ``composite``)
PROGRAMS = [
    ("call", lambda x, y: inner(x) + y.T, [(3, 4), (3, 4)], 1, None),
    ("call_twice", lambda x, y: inner(x) * inner(y[::-1]), [(3, 4), (3, 4)], 1, None),
    ("nested_calls", lambda x: inner(inner(x).T[:, ::-1]), [(2, 5)], 1, None),
    (
        "two_results",
        lambda a, b: two_results(jnp.pad(a, ((0, 1), (1, 0)), constant_values=1.0), b),
        [(2, 3), (3, 4)],
        2,
        None,
    ),
    (
        "composite",
        lambda x, y: reverse_transpose(x) * y,
        [(2, 3), (3, 2)],
        1,
        lambda x, y: jnp.flip(x, 1).T * y,
    ),
]


def _main(module):
    return next(op for op in module.body.operations if ir.StringAttr(op.attributes["sym_name"]).value == "main")


@pytest.mark.parametrize("name, f, shapes, results, reference", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_both_directions_match_jacobian_sparsity(name, f, shapes, results, reference) -> None:
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    text = jax.jit(f).lower(*args).as_text()
    assert "call @" in text or "stablehlo.composite" in text, "the program must go through a call"
    module = parse_module(text)
    main = _main(module)
    for r in range(results):
        expected = jacobian_pairs(reference or f, shapes, r)
        backward = fusion_indexing(main, r)
        assert [relation(maps) for maps in backward.maps] == expected
        for k in range(len(shapes)):
            forward = fusion_input_to_output_indexing(main, k)
            pairs = {(i, o) for o, i in expected[k]}
            assert relation(forward.maps[r]) == pairs, (name, r, k)


NESTED_FUSION = """
func.func @outer(%arg0: tensor<3x4xf32>, %arg1: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = "mhlo.fusion"(%arg0, %arg1) <{fusion_kind = #mhlo<fusion_kind kLoop>}> ({
  ^bb0(%a: tensor<3x4xf32>, %b: tensor<4x3xf32>):
    %1 = "mhlo.fusion"(%a) <{fusion_kind = #mhlo<fusion_kind kLoop>}> ({
    ^bb1(%c: tensor<3x4xf32>):
      %r = stablehlo.reverse %c, dims = [1] : tensor<3x4xf32>
      %t = stablehlo.transpose %r, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
      mhlo.return %t : tensor<4x3xf32>
    }) : (tensor<3x4xf32>) -> tensor<4x3xf32>
    %s = stablehlo.slice %b [1:4, 0:3] : (tensor<4x3xf32>) -> tensor<3x3xf32>
    %p = stablehlo.constant dense<0.0> : tensor<f32>
    %q = stablehlo.pad %s, %p, low = [0, 0], high = [1, 0], interior = [0, 0] : (tensor<3x3xf32>, tensor<f32>) -> tensor<4x3xf32>
    %2 = stablehlo.add %1, %q : tensor<4x3xf32>
    mhlo.return %2 : tensor<4x3xf32>
  }) : (tensor<3x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
"""


def test_nested_mhlo_fusion_both_directions() -> None:
    module = parse_module(NESTED_FUSION)
    fusion = next(iter(_main_block(module).operations))
    ids_a = np.arange(12).reshape(3, 4)
    out_a = np.flip(ids_a, 1).T  # element ids of %arg0 read by each output
    ids_b = np.arange(12).reshape(4, 3)
    out_b = ids_b[1:4, :]  # rows 0..2 of the output read %arg1 rows 1..3; row 3 is padding
    expected_a = {((i, j), divmod(int(out_a[i, j]), 4)) for i in range(4) for j in range(3)}
    expected_b = {((i, j), divmod(int(out_b[i, j]), 3)) for i in range(3) for j in range(3)}
    backward = fusion_indexing(fusion.regions[0])
    assert [relation(m) for m in backward.maps] == [expected_a, expected_b]
    forward = [fusion_input_to_output_indexing(fusion.regions[0], k).maps[0] for k in range(2)]
    assert [relation(m) for m in forward] == [{(i, o) for o, i in expected_a}, {(i, o) for o, i in expected_b}]


def _main_block(module):
    return next(iter(module.body.operations)).regions[0].blocks[0]
