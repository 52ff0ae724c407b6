"""The TPU backend of the cost model (hlo_indexing.cost_model.tpu): a ranked TPU tiling
of a fusion, written as a Pallas kernel (the generated grid, BlockSpecs and dimension
semantics, plus a kernel body for the fusion), lowers for TPU (``jax.export``,
CPU-only), runs in TPU interpret mode with the fusion's result (numpy), and gets no
error from check_pallas. The model's counts are checked against brute force: block
transfers by walking the grid, MXU operations by hand. The backend over many candidates
(hlo_indexing.cost_model.tpu_ranking, in closed form) judges every candidate as the
one-by-one backend does (assess_tpu per candidate, through the tiled computation and
the block index maps): the same rules, messages and figures, breakdown included."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from helpers import EXAMPLES
from pallas_harness import abstract_tpu
from tiling_fixtures import analysis_of, functions_of

from hlo_indexing.cost_model import tpu, tpu_figures, tpu_ranking
from hlo_indexing.cost_model.ranking import rank_tilings
from hlo_indexing.cost_model.tile_arrays import TileArrays
from hlo_indexing.devices import device
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.errors import TilingError
from hlo_indexing.symbolic_tiling.ranking import constraint_mask
from hlo_indexing.symbolic_tiling.shared_bodies import TilingMemo
from hlo_indexing.symbolic_tiling.tile_counts import Grid
from hlo_indexing.symbolic_tiling.tiled_computation import tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, TiledFusion

FUNCTIONS = """
func.func @matmul(%a: tensor<256x512xbf16>, %b: tensor<512x384xbf16>) -> tensor<256x384xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<256x512xbf16>, tensor<512x384xbf16>) -> tensor<256x384xf32>
  return %0 : tensor<256x384xf32>
}
func.func @softmax(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.maximum across dimensions = [1] : (tensor<64x256xf32>, tensor<f32>) -> tensor<64xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<64xf32>) -> tensor<64x256xf32>
  %2 = stablehlo.subtract %x, %1 : tensor<64x256xf32>
  %3 = stablehlo.exponential %2 : tensor<64x256xf32>
  return %3 : tensor<64x256xf32>
}
func.func @scale(%x: tensor<64x256xf32>, %s: tensor<f32>) -> tensor<64x256xf32> {
  %0 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
  %1 = stablehlo.multiply %x, %0 : tensor<64x256xf32>
  return %1 : tensor<64x256xf32>
}
func.func @add_bias(%x: tensor<128x512xf32>, %b: tensor<512xf32>) -> tensor<128x512xf32> {
  %0 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<512xf32>) -> tensor<128x512xf32>
  %1 = stablehlo.add %x, %0 : tensor<128x512xf32>
  return %1 : tensor<128x512xf32>
}
"""

V5E = device("tpu-v5e")
#: A v5e with 256 KiB of VMEM: the budget rejects the larger blocks.
SMALL_VMEM = dataclasses.replace(V5E, name="tpu-v5e-256k", vmem_bytes=256 << 10)


@pytest.fixture(scope="module")
def fusions():
    with functions_of(FUNCTIONS) as found:
        yield {name: analysis_of(op) for name, op in found.items()}


def _bodies():
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    def matmul(a_ref, b_ref, o_ref):
        @pl.when(pl.program_id(2) == 0)
        def _():
            o_ref[...] = jnp.zeros_like(o_ref)

        o_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

    def softmax(x_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = jnp.exp(x - x.max(axis=1, keepdims=True))

    def add_bias(x_ref, b_ref, o_ref):
        o_ref[...] = x_ref[...] + b_ref[...][None, :]

    def scale(x_ref, s_ref, o_ref):
        o_ref[...] = x_ref[...] * s_ref[...]

    return {"matmul": matmul, "softmax": softmax, "add_bias": add_bias, "scale": scale}


def _inputs(name):
    rng = np.random.default_rng(3)
    import ml_dtypes

    if name == "matmul":
        a = rng.standard_normal((256, 512)).astype(ml_dtypes.bfloat16)
        b = rng.standard_normal((512, 384)).astype(ml_dtypes.bfloat16)
        return [a, b], a.astype(np.float32) @ b.astype(np.float32)
    if name == "softmax":
        x = rng.standard_normal((64, 256)).astype(np.float32)
        return [x], np.exp(x - x.max(axis=1, keepdims=True))
    if name == "scale":
        x = rng.standard_normal((64, 256)).astype(np.float32)
        return [x, np.float32(1.5)], x * np.float32(1.5)
    x = rng.standard_normal((128, 512)).astype(np.float32)
    b = rng.standard_normal(512).astype(np.float32)
    return [x, b], x + b[None, :]


def _kernel(text, body, inputs, out_shape, interpret):
    import jax
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    namespace = {"pl": pl, "pltpu": pltpu}
    exec(text, namespace)  # the generated text, as a Pallas user pastes it
    return pl.pallas_call(
        body,
        grid=namespace["grid"],
        in_specs=namespace["in_specs"],
        out_specs=namespace["out_specs"],
        out_shape=jax.ShapeDtypeStruct(out_shape, np.float32),
        compiler_params=namespace["compiler_params"],
        interpret=interpret,
    )


@pytest.mark.parametrize("name", ["matmul", "softmax", "add_bias", "scale"])
def test_ranked_tpu_tilings_are_kernels_that_lower_run_and_check_clean(fusions, name):
    jax = pytest.importorskip("jax")
    pytest.importorskip("jax.experimental.pallas")
    import hlo_indexing

    fusion = fusions[name]
    ranked = rank_tilings(fusion, device=V5E).tilings[:3]
    assert ranked, "a legal tiling exists"
    times = [a.estimate.exec_time_ns for a in ranked]
    assert times == sorted(times)
    inputs, expected = _inputs(name)
    structs = [jax.ShapeDtypeStruct(np.shape(x), np.asarray(x).dtype) for x in inputs]
    for assessment in ranked:
        text = tpu.pallas_tpu_text(fusion, assessment.tile_sizes)
        kernel = _kernel(text, _bodies()[name], inputs, expected.shape, interpret=False)
        with abstract_tpu():
            jax.export.export(jax.jit(kernel), platforms=["tpu"])(*structs)
        report = hlo_indexing.check_pallas(kernel, *structs, device=V5E)
        assert report.errors == (), str(report)
        interpreted = _kernel(text, _bodies()[name], inputs, expected.shape, interpret=True)
        result = np.asarray(interpreted(*inputs))
        np.testing.assert_allclose(result, expected, rtol=2e-2, atol=2e-2)


def test_the_ranking_judges_each_candidate_as_assess_tpu_does(fusions):
    for name in ("matmul", "softmax", "add_bias", "scale"):
        ranking = rank_tilings(fusions[name], device=V5E)
        assert ranking.tilings and sum(ranking.rejected.values()) > 0
        for ranked in ranking.tilings[:5]:
            alone = tpu.assess_tpu(fusions[name], ranked.tile_sizes, V5E)
            assert alone.legal and alone.estimate == ranked.estimate
        for rule, (sizes, rejection) in ranking.examples.items():
            if rule.startswith("mosaic."):
                assert rule in {r.rule for r in tpu.assess_tpu(fusions[name], sizes, V5E).rejections}


REVERSED = """
func.func @reversed(%x: tensor<16x256xf32>) -> tensor<16x256xf32> {
  %r = stablehlo.reverse %x, dims = [0] : tensor<16x256xf32>
  %m = stablehlo.multiply %r, %r : tensor<16x256xf32>
  return %m : tensor<16x256xf32>
}
"""


def test_tilings_the_tiled_computation_refuses_are_rejected_not_raised():
    """A reverse gives its operand's tiles a negative stride, which the tiled computation
    refuses (``UNIMPLEMENTED``): each such candidate breaks ``tiling.unimplemented``, as
    on a GPU, and the ranking of the fusion goes on."""
    with functions_of(REVERSED) as found:
        fusion = analysis_of(found["reversed"])
        ranking = rank_tilings(fusion, device=V5E)
        refused = set()
        for sizes in fusion.valid_tilings():
            try:
                tiled_computation(fusion, list(sizes))
            except TilingError as error:
                assert error.status == "UNIMPLEMENTED", error
                refused.add(tuple(sizes))
        assert refused, "the reverse must make some tiling unbuildable"
        for sizes in refused:
            judged = tpu.assess_tpu(fusion, sizes, V5E)
            assert [r.rule for r in judged.rejections] == ["tiling.unimplemented"] and judged.estimate is None
        assert ranking.rejected.get("tiling.unimplemented", 0) > 0
        assert not ({t.tile_sizes for t in ranking.tilings} & refused)
        assert ranking.considered == len(ranking.tilings) + sum(ranking.rejected.values())


def test_a_scalar_operand_is_read_from_smem(fusions):
    (best, *_) = rank_tilings(fusions["scale"], device=V5E).tilings
    text = tpu.pallas_tpu_text(fusions["scale"], best.tile_sizes)
    assert "pl.BlockSpec(memory_space=pltpu.SMEM),  # parameter 1: tensor<f32>" in text


def test_the_generated_text_carries_the_dimension_semantics(fusions):
    text = tpu.pallas_tpu_text(fusions["matmul"], (128, 128, 128))
    assert text.splitlines()[0] == "grid = (2, 3, 4)"
    assert text.splitlines()[-1] == 'compiler_params = pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "arbitrary"))'


def test_block_transfers_are_the_changes_of_block_index_along_the_grid(fusions):
    for name, sizes in [("matmul", (128, 128, 128)), ("matmul", (512, 64, 384)), ("softmax", (8, 256)), ("add_bias", (32, 128))]:
        kernel = tpu.tpu_kernel(fusions[name], sizes)
        grid = kernel.tiling.grid
        for operand in kernel.operands:
            index_map = operand.spec.index_map
            previous, changes = None, 0
            for point in itertools.product(*[range(n) for n in grid]):  # the grid in Pallas's order
                block = index_map.evaluate(point)
                changes += block != previous
                previous = block
            assert tpu.block_changes(index_map, grid) == changes, (name, sizes, operand.subject)


def test_matmul_counts_by_hand(fusions):
    kernel = tpu.tpu_kernel(fusions["matmul"], (128, 128, 128))  # K, M, N steps of 128: grid (2, 3, 4)
    estimate = tpu.estimate_kernel(kernel, fusions["matmul"], V5E)
    assert estimate.num_blocks == 24
    # a (128 x 128 bf16) block of A per step (its index changes every step), B likewise,
    # the f32 output block once per (i, j).
    assert estimate.bytes_read == 24 * 128 * 128 * 2 * 2
    assert estimate.bytes_written == 6 * 128 * 128 * 4
    assert estimate.flops == 24 * 2 * 128 * 128 * 128
    assert math.isclose(estimate.compute_time_ns, estimate.flops / 197e12 * 1e9, rel_tol=1e-9)
    expected = max(estimate.read_time_ns + estimate.write_time_ns, estimate.compute_time_ns) + 24 * tpu_figures.STEP_OVERHEAD_NS
    assert estimate.exec_time_ns > expected  # plus the prologue the pipeline cannot hide


def test_tilings_mosaic_rejects_carry_the_rules(fusions):
    assessment = tpu.assess_tpu(fusions["matmul"], (64, 8, 64), V5E)
    assert {r.rule for r in assessment.rejections} == {"mosaic.block-shape"}
    assert not assessment.legal and assessment.estimate is None  # not a kernel Mosaic builds
    softmax_rows = tpu.assess_tpu(fusions["softmax"], (8, 128), V5E)
    assert [r.rule for r in softmax_rows.rejections] == ["mosaic.not-a-block"]


def test_the_vmem_budget_rejects_huge_blocks_on_a_small_vmem(fusions):
    # Whole operands as blocks: A 256 KiB, B 384 KiB, output 384 KiB (+ its accumulator);
    # double-buffered that is over 2 MiB, under a v4's 16 MiB.
    assert tpu.assess_tpu(fusions["matmul"], (512, 256, 384), device("tpu-v4")).legal
    small = device("tpu-v4")
    import dataclasses

    tiny = dataclasses.replace(small, name="tiny", vmem_bytes=1 << 20)
    assert [r.rule for r in tpu.assess_tpu(fusions["matmul"], (512, 256, 384), tiny).rejections] == ["mosaic.vmem"]


def _judged(evaluate, fusion: TiledFusion, tpu_device) -> tuple[list[tuple[str, ...]], list[object]]:
    """Every candidate satisfying the fusion's constraints as ``evaluate`` judges it:
    its rejections (rule and message) and its estimate."""
    grid = Grid.over(tuple(p.size for p in fusion.parameters))
    tiles = TileArrays(list(grid.flat_sizes) if fusion.parameters else [])
    valid = np.flatnonzero(constraint_mask(fusion.constraints, grid.flat_sizes, grid.total))
    judged = evaluate(fusion, tiles, tpu_device, None)
    return [tuple(str(r) for r in judged.rejections(int(i))) for i in valid], [judged.estimate(int(i)) for i in valid]


def _same_as_one_by_one(label: str, fusion: TiledFusion, tpu_device) -> set[str]:
    """Asserts the two backends agree on every candidate; the rules broken."""
    assert tpu_ranking.kernel_plan(fusion) is not None, label  # the closed form is what is compared
    fast, exact = _judged(tpu_ranking.evaluate_candidates, fusion, tpu_device), _judged(tpu_ranking.one_by_one, fusion, tpu_device)
    assert fast[0] == exact[0], label
    assert fast[1] == exact[1], label
    assert any(not e.is_infinite for e in fast[1]), label  # some kernels are compared
    return {r.split("]")[0][1:] for rejections in fast[0] for r in rejections}


@pytest.mark.parametrize("tpu_device", [V5E, SMALL_VMEM], ids=["v5e", "small-vmem"])
def test_every_candidate_is_judged_as_one_by_one(fusions, tpu_device):
    rules = {name: _same_as_one_by_one(name, fusion, tpu_device) for name, fusion in fusions.items()}
    assert "mosaic.not-a-block" in rules["softmax"]  # x is read through two tiles: a block where they agree
    assert ("mosaic.vmem" in rules["matmul"]) == (tpu_device is SMALL_VMEM)


@pytest.mark.parametrize("example", ["tiling.mlir", "transformer_step_cpu.hlo"])
def test_every_candidate_of_the_examples_is_judged_as_one_by_one(example):
    module = parse_module(EXAMPLES / example)  # alive while the analyses are used
    memo = TilingMemo()
    compared = 0
    for label, op in computations(module.operation):
        fusion = memo.analyze(op)
        origin = memo.origin(fusion) if not isinstance(fusion, AnalysisFailure) else None
        if origin is not None and origin[0] is fusion:  # each body once
            _same_as_one_by_one(label, fusion, V5E)
            compared += 1
    assert compared


SPLITS = """
func.func @split_reshapes(%x: tensor<4x16x128xf32>, %y: tensor<64x4x32xf32>) -> tensor<64x128xf32> {
  %0 = stablehlo.reshape %x : (tensor<4x16x128xf32>) -> tensor<64x128xf32>
  %1 = stablehlo.reshape %y : (tensor<64x4x32xf32>) -> tensor<64x128xf32>
  %2 = stablehlo.add %0, %1 : tensor<64x128xf32>
  return %2 : tensor<64x128xf32>
}
"""


@pytest.mark.parametrize("tpu_device", [V5E, SMALL_VMEM], ids=["v5e", "small-vmem"])
def test_a_reshape_splitting_a_tiled_dimension_is_judged_in_closed_form_as_one_by_one(tpu_device):
    """x is read through ``(d0 floordiv 16, d0 mod 16, d1)`` (the outer grid axis split),
    y through ``(d0, d1 floordiv 32, d1 mod 32)`` (the inner one): the closed form judges
    every candidate as assess_tpu does, grids of several steps along each included."""
    with functions_of(SPLITS) as found:
        fusion = analysis_of(found["split_reshapes"])
        plan = tpu_ranking.kernel_plan(fusion)
        assert plan is not None and {(p, c) for _, _, p, c in plan.splits} == {(0, 16), (1, 32)}
        _same_as_one_by_one("split_reshapes", fusion, tpu_device)
        steps = {e.num_blocks for e in _judged(tpu_ranking.evaluate_candidates, fusion, tpu_device)[1] if not e.is_infinite}
        assert max(steps) > 2


def test_a_split_is_a_block_where_every_offset_is_a_multiple_of_its_block():
    """The closed form's test on a split's offsets against every grid index, over tile
    sizes dividing or multiple of the divisor and every block size up to the tile's."""
    rows = []
    for c, s, tiles_along, b0, b1 in itertools.product([4, 6, 16], [1, 2, 3, 4, 6, 8, 12, 16, 32, 48], [1, 2, 3, 5, 8],
                                                        [1, 2, 3, 4], [1, 2, 3, 4, 6, 8, 16]):
        if s % c == 0 or c % s == 0:
            offsets = [(s * t // c, s * t % c) for t in range(tiles_along)]
            rows.append((c, s, tiles_along, b0, b1, all(o0 % b0 == 0 and o1 % b1 == 0 for o0, o1 in offsets)))
    for c in {row[0] for row in rows}:
        mine = [row for row in rows if row[0] == c]
        sizes, counts = (np.array([[row[k]] for row in mine], np.int64) for k in (1, 2))
        grid = tpu_ranking._AskedGrids(sizes, counts, counts)
        block = np.array([[row[3], row[4]] for row in mine], np.int64)
        found = tpu_ranking._split_blocks((0, 1, 0, c), block, grid)
        assert found.tolist() == [row[5] for row in mine], c
        assert 0 < found.sum() < len(mine)  # both answers are compared

