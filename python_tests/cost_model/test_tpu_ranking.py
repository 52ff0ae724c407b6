"""The TPU backend over many candidates (hlo_indexing.cost_model.tpu_ranking) judges every
candidate as the one-by-one backend does (:func:`hlo_indexing.cost_model.tpu.assess_tpu`
per candidate, through the tiled computation and the block index maps): the same rules,
messages and figures, breakdown included, on the fusions of the bundled examples (a
compiled transformer step; a matmul and a softmax) and a softmax whose input is read
through two tiles, on a v5e and on a v5e whose VMEM is small enough for the budget to
reject blocks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import EXAMPLES

from hlo_indexing.cost_model import tpu_ranking
from hlo_indexing.cost_model.tile_arrays import TileArrays
from hlo_indexing.devices import device
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.symbolic_tiling.ranking import constraint_mask
from hlo_indexing.symbolic_tiling.shared_bodies import TilingMemo
from hlo_indexing.symbolic_tiling.tile_counts import Grid
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, TiledFusion

#: A softmax whose input is read through two tiles (whole rows for the reduce, the
#: output's tile for the subtract): a block only where the two agree.
SOFTMAX = """
func.func @softmax(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.maximum across dimensions = [1] : (tensor<64x256xf32>, tensor<f32>) -> tensor<64xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<64xf32>) -> tensor<64x256xf32>
  %2 = stablehlo.subtract %x, %1 : tensor<64x256xf32>
  %3 = stablehlo.exponential %2 : tensor<64x256xf32>
  return %3 : tensor<64x256xf32>
}
"""
V5E = device("tpu-v5e")
#: A v5e with 256 KiB of VMEM: the budget rejects the larger blocks.
SMALL_VMEM = dataclasses.replace(V5E, name="tpu-v5e-256k", vmem_bytes=256 << 10)


def _fusions(module: ir.Module) -> list[tuple[str, TiledFusion]]:
    """The distinct bodies of an example's ``module`` (kept alive by the caller: the
    analyses hold its values), analysed."""
    memo = TilingMemo()
    found = []
    for label, op in computations(module.operation):
        fusion = memo.analyze(op)
        origin = memo.origin(fusion) if not isinstance(fusion, AnalysisFailure) else None
        if origin is not None and origin[0] is fusion:
            found.append((label, fusion))
    return found


def _judged(evaluate, fusion: TiledFusion, tpu_device) -> tuple[list[tuple[str, ...]], list[object], np.ndarray]:
    grid = Grid.over(tuple(p.size for p in fusion.parameters))
    tiles = TileArrays(list(grid.flat_sizes) if fusion.parameters else [])
    valid = np.flatnonzero(constraint_mask(fusion.constraints, grid.flat_sizes, grid.total))
    judged = evaluate(fusion, tiles, tpu_device, None)
    rejections = [tuple(str(r) for r in judged.rejections(int(i))) for i in valid]
    estimates = [judged.estimate(int(i)) for i in valid]
    return rejections, estimates, valid


@pytest.mark.parametrize("tpu_device", [V5E, SMALL_VMEM], ids=["v5e", "small-vmem"])
@pytest.mark.parametrize("example", ["softmax", "tiling.mlir", "transformer_step_cpu.hlo"])
def test_every_candidate_is_judged_as_one_by_one(example, tpu_device):
    module = parse_module(SOFTMAX if example == "softmax" else EXAMPLES / example)
    fusions = _fusions(module)
    assert fusions
    rules: set[str] = set()
    kernels = 0
    for label, fusion in fusions:
        assert tpu_ranking.kernel_plan(fusion) is not None, label  # the closed form is what is compared
        fast = _judged(tpu_ranking.evaluate_candidates, fusion, tpu_device)
        exact = _judged(tpu_ranking.one_by_one, fusion, tpu_device)
        assert fast[0] == exact[0], label
        assert fast[1] == exact[1], label
        rules.update(r.split("]")[0][1:] for rejections in fast[0] for r in rejections)
        kernels += sum(1 for e in fast[1] if not e.is_infinite)
    assert kernels > 0
    # both kernel rules are met: a parameter read through two tiles (the softmax),
    # blocks over the small VMEM (the matmul)
    if example == "softmax":
        assert "mosaic.not-a-block" in rules
    if example == "tiling.mlir":
        assert ("mosaic.vmem" in rules) == (tpu_device is SMALL_VMEM)
