"""XLA's grouped and epilogue indexing (:mod:`hlo_indexing.analysis.grouped`) against the
dependences JAX reports: the non-zero pattern of ``jax.jacfwd`` of each stage of a
program written both as StableHLO text (what the analysis reads) and as the same ``lax``
calls (what the jacobian is taken of). Inputs are positive and every stage keeps a
positive derivative, so a zero jacobian entry means "not read" (see test_fusion_jax.py).
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax

from hlo_indexing import (  # noqa: E402
    IndexingMap,
    epilogue_input_to_output_indexing,
    group_indexing_maps_by_producers,
    grouped_output_to_input_indexing,
    output_to_input_indexing,
    parse_module,
)
from hlo_indexing.errors import InvalidArgumentError  # noqa: E402

# A chain x -> transpose -> reshape -> slice -> broadcast -> reduce, one op per stage.
CHAIN = """
func.func @chain(%x: tensor<4x6xf32>) -> tensor<6xf32> {
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
  %1 = stablehlo.reshape %0 : (tensor<6x4xf32>) -> tensor<24xf32>
  %2 = stablehlo.slice %1 [2:20:3] : (tensor<24xf32>) -> tensor<6xf32>
  %3 = stablehlo.broadcast_in_dim %2, dims = [1] : (tensor<6xf32>) -> tensor<2x6xf32>
  %4 = stablehlo.exponential %3 : tensor<2x6xf32>
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %5 = stablehlo.reduce(%4 init: %c) applies stablehlo.add across dimensions = [0] : (tensor<2x6xf32>, tensor<f32>) -> tensor<6xf32>
  return %5 : tensor<6xf32>
}
"""
STAGES = [
    lambda v: lax.transpose(v, (1, 0)),
    lambda v: v.reshape(24),
    lambda v: lax.slice(v, (2,), (20,), (3,)),
    lambda v: lax.broadcast_in_dim(v, (2, 6), (1,)),
    jnp.exp,
    lambda v: jnp.sum(v, axis=0),
]
SHAPES = [(4, 6), (6, 4), (24,), (6,), (2, 6), (2, 6), (6,)]

# x is read twice: directly and through a transpose.
DIAMOND = """
func.func @diamond(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %1 = stablehlo.add %0, %x : tensor<3x3xf32>
  %2 = stablehlo.exponential %1 : tensor<3x3xf32>
  return %2 : tensor<3x3xf32>
}
"""


def _ops(text: str) -> tuple[object, list]:
    module = parse_module(text)
    func = module.body.operations[0]
    ops = [op for op in func.regions[0].blocks[0].operations if op.operation.name not in ("stablehlo.constant", "func.return")]
    return module, [func.regions[0].blocks[0].arguments[0]] + [op.results[0] for op in ops]


def _pairs(maps: frozenset[IndexingMap]) -> set:
    pairs: set = set()
    for m in maps:
        assert not m.is_undefined, m.reason
        pairs |= m.relation()
    return pairs


def _jacobian_pairs(f, shape: tuple[int, ...], seed: int = 0) -> set:
    value = jnp.asarray(np.random.default_rng(seed).uniform(0.5, 1.5, shape), jnp.float32)
    jac = np.asarray(jax.jacfwd(f)(value))
    out_rank = jac.ndim - len(shape)
    return {(tuple(row[:out_rank].tolist()), tuple(row[out_rank:].tolist())) for row in np.argwhere(jac != 0)}


def _suffix(first: int, last: int):
    """Stages ``first .. last - 1`` as one function (value ``first`` -> value ``last``)."""

    def f(v):
        for stage in STAGES[first:last]:
            v = stage(v)
        return v

    return f


@pytest.mark.parametrize("last", range(1, len(SHAPES)))
def test_grouped_from_every_value_of_a_chain(last: int) -> None:
    """From value ``last``, the maps to every value it is computed from are the jacobian
    of the stages between them; values after ``last`` get no group (the reduce also
    reads its init)."""
    module, values = _ops(CHAIN)
    grouped = grouped_output_to_input_indexing(values[last])
    body = list(module.body.operations[0].regions[0].blocks[0].operations)
    init = next(op.results[0] for op in body if op.operation.name == "stablehlo.constant")
    assert set(grouped) == set(values[: last + 1]) | ({init} if last == len(STAGES) else set())
    if last == len(STAGES):
        assert all(m.num_results == 0 for m in grouped[init]), "the reduce reads its scalar init"
    for first in range(last):
        assert _pairs(grouped[values[first]]) == _jacobian_pairs(_suffix(first, last), SHAPES[first]), (first, last)
    assert _pairs(grouped[values[last]]) == {(i, i) for i in np.ndindex(*SHAPES[last])}


def test_grouped_diamond_keeps_both_reads() -> None:
    """x is read through the transpose and directly: two maps, whose union is the
    jacobian of ``transpose(x) + x``; the transpose's own group is the identity."""
    _module, (x, transposed, added, _exp) = _ops(DIAMOND)
    grouped = grouped_output_to_input_indexing(added.owner)
    assert len(grouped[x]) == 2
    assert _pairs(grouped[x]) == _jacobian_pairs(lambda v: lax.transpose(v, (1, 0)) + v, (3, 3))
    assert all(m.is_identity for m in grouped[transposed])
    assert set(grouped) == {x, transposed, added}


def test_grouped_from_a_block_argument_is_its_identity() -> None:
    _module, (x, *_rest) = _ops(DIAMOND)
    grouped = grouped_output_to_input_indexing(x)
    assert list(grouped) == [x] and all(m.is_identity for m in grouped[x])


def test_grouped_unsimplified_has_the_same_relations() -> None:
    _module, values = _ops(CHAIN)
    simplified = grouped_output_to_input_indexing(values[-1])
    raw = grouped_output_to_input_indexing(values[-1], simplify=False)
    assert set(simplified) == set(raw)
    for value in raw:
        assert _pairs(raw[value]) == _pairs(simplified[value])


def test_grouped_caps_a_large_set() -> None:
    """Above ``max_maps`` a value's maps become one map reading all of it, named in
    ``capped``; the over-approximation contains the exact relation."""
    _module, (x, transposed, added, _exp) = _ops(DIAMOND)
    exact = _pairs(grouped_output_to_input_indexing(added)[x])
    capped = grouped_output_to_input_indexing(added, max_maps=1)
    assert capped.capped == (x.get_name(),)
    assert exact < _pairs(capped[x])


def test_group_by_producers_unites_an_operand_used_twice() -> None:
    module = parse_module(
        """
        func.func @twice(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
          %0 = stablehlo.add %x, %x : tensor<3x3xf32>
          return %0 : tensor<3x3xf32>
        }"""
    )
    add = list(module.body.operations[0].regions[0].blocks[0].operations)[0]
    indexing = output_to_input_indexing(add)
    grouped = group_indexing_maps_by_producers(indexing, add)
    assert list(grouped) == [add.operands[0]]
    assert grouped[add.operands[0]] == indexing.maps[0] | indexing.maps[1]


@pytest.mark.parametrize("first, last", [(0, 3), (1, 5), (2, 6), (0, 6), (3, 3)])
def test_epilogue_is_the_transposed_jacobian(first: int, last: int) -> None:
    """From value ``first`` to value ``last``: (input, output) pairs of the jacobian."""
    _module, values = _ops(CHAIN)
    maps = epilogue_input_to_output_indexing(values[first], values[last])
    expected = {(i, o) for o, i in _jacobian_pairs(_suffix(first, last), SHAPES[first])}
    assert _pairs(maps) == expected


def test_epilogue_without_a_use_chain_is_an_error() -> None:
    _module, values = _ops(CHAIN)
    with pytest.raises(InvalidArgumentError, match="no use chain"):
        epilogue_input_to_output_indexing(values[3], values[1])
