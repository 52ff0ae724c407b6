"""Fused maps of real JAX programs against the dependence JAX itself reports: the
sparsity pattern of ``jax.jacfwd`` at a random input (structurally exact for these
programs). Each fused map set, enumerated, must give exactly the (output, input)
pairs with a non-zero derivative."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

from hlo_indexing import fusion_indexing, parse_module  # noqa: E402
from hlo_indexing.dialect_glue.bindings import ir  # noqa: E402


def fused_pairs(f, *shapes) -> list[set]:
    """(output index, input index) pairs of the fused maps, per argument."""
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    text = jax.jit(f).lower(*args).as_text()
    module = parse_module(text)
    main = next(op for op in module.body.operations if ir.StringAttr(op.attributes["sym_name"]).value == "main")
    fused = fusion_indexing(main)
    out = []
    for maps in fused.maps:
        pairs: set = set()
        for m in maps:
            assert not m.is_undefined, m.reason
            pairs |= m.relation()
        out.append(pairs)
    return out


def jacobian_pairs(f, *shapes) -> list[set]:
    rng = np.random.default_rng(0)
    values = [jnp.asarray(rng.uniform(0.5, 1.5, s), jnp.float32) for s in shapes]
    out = []
    for k in range(len(shapes)):
        jac = np.asarray(jax.jacfwd(f, argnums=k)(*values))
        out_rank = jac.ndim - len(shapes[k])
        nz = np.argwhere(jac != 0)
        out.append({(tuple(row[:out_rank].tolist()), tuple(row[out_rank:].tolist())) for row in nz})
    return out


PROGRAMS = [
    ("softmax", lambda x: jax.nn.softmax(x, axis=-1), [(2, 3, 4)]),
    ("x_plus_transpose", lambda x: x + x.T, [(3, 3)]),
    ("reshape_chain", lambda x: x.reshape(6, 4).reshape(2, 3, 4) * 2.0, [(2, 3, 4)]),
    ("broadcast_mul", lambda a, b: a[None, :] * b, [(4,), (3, 4)]),
    ("slice_concat_reverse", lambda x: jnp.concatenate([x[:, 1:], jnp.flip(x, 0)], axis=1), [(3, 4)]),
    ("pad", lambda x: jnp.pad(x, ((1, 2), (0, 1))) * 3.0, [(2, 3)]),
    ("reduce_sum_sq", lambda x: jnp.sum(x * x, axis=0), [(3, 5)]),
    ("matmul", lambda a, b: a @ b, [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("name, f, shapes", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_fused_maps_match_jacobian_sparsity(name, f, shapes) -> None:
    assert fused_pairs(f, *shapes) == jacobian_pairs(f, *shapes)


def chain_module(steps: int):
    """A function applying ``steps`` times: reshape 4x6 -> 6x4, then transpose."""
    lines = ["func.func @chain(%arg0: tensor<4x6xf32>) -> tensor<4x6xf32> {"]
    value = "%arg0"
    for i in range(steps):
        lines.append(f"  %r{i} = stablehlo.reshape {value} : (tensor<4x6xf32>) -> tensor<6x4xf32>")
        lines.append(f"  %t{i} = stablehlo.transpose %r{i}, dims = [1, 0] : (tensor<6x4xf32>) -> tensor<4x6xf32>")
        value = f"%t{i}"
    lines.append(f"  return {value} : tensor<4x6xf32>")
    lines.append("}")
    return parse_module("\n".join(lines))


def test_deep_chain_is_bounded_and_over_approximation_is_reported() -> None:
    """1,000 alternating reshapes/transposes (an irregular permutation whose exact map
    grows exponentially): one map per argument, flagged as over-approximated, and it
    covers every dependence computed by brute force."""
    module = chain_module(500)
    fused = fusion_indexing(next(iter(module.body.operations)))
    (maps,) = fused.maps
    assert len(maps) == 1 and fused.over_approximated
    (m,) = maps
    ids = np.arange(24).reshape(4, 6)
    x = ids
    for _ in range(500):
        x = x.reshape(6, 4).T
    exact = {((i, j), divmod(int(x[i, j]), 6)) for i in range(4) for j in range(6)}
    assert exact <= m.relation()


def test_short_chain_is_exact() -> None:
    module = chain_module(3)
    fused = fusion_indexing(next(iter(module.body.operations)))
    (maps,) = fused.maps
    assert not fused.over_approximated
    x = np.arange(24).reshape(4, 6)
    for _ in range(3):
        x = x.reshape(6, 4).T
    assert set().union(*(m.relation() for m in maps)) == {
        ((i, j), divmod(int(x[i, j]), 6)) for i in range(4) for j in range(6)
    }
