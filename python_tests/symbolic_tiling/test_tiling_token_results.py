"""A program with ordered effects (``jax.debug.print(..., ordered=True)``, ``io_callback``)
threads a token through ``@main``: a token argument and a token result beside the
tensors. Tokens have no index space, so the tiling is of the tensor results (before, the
token result made ``@main`` a multi-output computation that could not be tiled).

Every tile is checked by enumeration: the elements the fused maps say the tile needs lie
in its operand boxes, and the output boxes cover the output exactly once."""

from __future__ import annotations

import itertools

import pytest

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.symbolic_tiling.ranking import rank_tilings
from hlo_indexing.symbolic_tiling.tile_picture import tile_picture
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, TiledFusion, analyze_fusion

#: What JAX lowers ``softmax(tanh(x @ w))`` with an ordered ``jax.debug.print`` of a sum to.
ORDERED_EFFECTS = """
func.func public @main(%tok: !stablehlo.token, %x: tensor<8x16xf32>, %w: tensor<16x32xf32>)
    -> (!stablehlo.token, tensor<8x32xf32>) {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = stablehlo.tanh %0 : tensor<8x32xf32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %2 = stablehlo.reduce(%1 init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<f32>
  %3 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%tok, %2) {has_side_effect = true} : (!stablehlo.token, tensor<f32>) -> !stablehlo.token
  %4 = stablehlo.exponential %1 : tensor<8x32xf32>
  %5 = stablehlo.reduce(%4 init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
  %6 = stablehlo.broadcast_in_dim %5, dims = [0] : (tensor<8xf32>) -> tensor<8x32xf32>
  %7 = stablehlo.divide %4, %6 : tensor<8x32xf32>
  return %3, %7 : !stablehlo.token, tensor<8x32xf32>
}
"""

ONLY_TOKENS = """
func.func public @main(%tok: !stablehlo.token, %x: tensor<f32>) -> !stablehlo.token {
  %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%tok, %x) {has_side_effect = true} : (!stablehlo.token, tensor<f32>) -> !stablehlo.token
  return %0 : !stablehlo.token
}
"""


def main_of(text: str) -> tuple[ir.Module, ir.Operation]:
    module = ir.Module.parse(text, make_context())
    return module, module.body.operations[0].operation


def test_a_token_result_is_not_an_output_of_the_tiling():
    module, main = main_of(ORDERED_EFFECTS)
    fusion = analyze_fusion(main)
    assert isinstance(fusion, TiledFusion), fusion
    assert fusion.result_numbers == (1,) and fusion.result_number(0) == 1
    assert [p.size for p in fusion.parameters] == [8, 32, 16]


@pytest.mark.parametrize("sizes", [(2, 32, 16), (8, 8, 4), (4, 16, 1)])
def test_every_tile_of_a_program_with_ordered_effects_holds_what_it_needs(sizes):
    module, main = main_of(ORDERED_EFFECTS)
    first = tile_picture(main, list(sizes))
    written: list[tuple[int, ...]] = []
    for tile_id in range(first.num_tiles):
        picture = tile_picture(main, list(sizes), tile_id)
        written.extend(picture.output.needed)
        assert [panel.index for panel in picture.operands] == [1, 2]  # %x and %w: the token is not read
        for panel in picture.operands:
            assert panel.needed, panel.title
            missing = [e for e in panel.needed if not any(box.contains(e) for box in panel.boxes)]
            assert not missing, (panel.title, missing[:3])
    assert sorted(written) == sorted(itertools.product(range(8), range(32)))  # each output element once


def test_a_program_with_ordered_effects_is_ranked_without_reading_its_token():
    module, main = main_of(ORDERED_EFFECTS)
    fusion = analyze_fusion(main)
    assert isinstance(fusion, TiledFusion)
    ranking = rank_tilings(fusion, 1 << 20)
    assert len(ranking.tilings) == ranking.valid > 0
    best = ranking.tilings[0]
    assert [operand.index for operand in best.operands] == [1, 2]  # %x and %w, not the token


def test_a_computation_with_only_token_results_says_so():
    module, main = main_of(ONLY_TOKENS)
    failure = analyze_fusion(main)
    assert isinstance(failure, AnalysisFailure)
    assert "only token outputs" in str(failure)
