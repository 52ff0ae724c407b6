"""Footprints of tilings, checked by enumeration: for every valid tiling of small
fusions, the bytes each tile touches per operand equal a count of the distinct elements
(or layout tiles, found through the layout's buffer offsets) of the tile boxes at every
program id; and the ranking keeps exactly the tilings within the budget, in order."""

from __future__ import annotations

import itertools
import math

import pytest
from tiling_fixtures import ELEMENT_BYTES, Fusion, analysis_of, box, functions_of, parameter_tile, softmax_text

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.layout.types import Layout
from hlo_indexing.symbolic_tiling.footprint import (
    FootprintError,
    declared_parameter_layouts,
    tiling_footprint,
)
from hlo_indexing.symbolic_tiling.ranking import rank_tilings
from hlo_indexing.symbolic_tiling.tiled_computation import tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion, TilingError

FUNCTIONS = softmax_text('{hlo_indexing.layout = "{1,0:T(2,4)}"}') + """
func.func @matmul(%a: tensor<8x6xbf16>, %b: tensor<6x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.convert %a : (tensor<8x6xbf16>) -> tensor<8x6xf32>
  %1 = stablehlo.dot_general %0, %b, contracting_dims = [1] x [0] : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
func.func @transpose_add(%a: tensor<5x3xf32>, %b: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<5x3xf32>) -> tensor<3x5xf32>
  %1 = stablehlo.add %0, %b : tensor<3x5xf32>
  return %1 : tensor<3x5xf32>
}
func.func @two_reads(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = stablehlo.add %0, %a : tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
"""

@pytest.fixture(scope="module")
def functions():
    with functions_of(FUNCTIONS) as found:
        yield found


def brute_force(fusion: TiledFusion, sizes, layouts) -> dict[tuple[str, int], tuple[int, int]]:
    """Per (kind, number): (max over programs of bytes touched, sum over programs), from
    every element of every tile box, placed by Layout.linear_index."""
    computation = tiled_computation(fusion, list(sizes))
    groups: dict[tuple[str, int], list] = {}
    for inst in computation.instructions:
        if inst.node.parameter_number is not None:
            groups.setdefault(("operand", inst.node.parameter_number), []).append(inst)
    for k, root in enumerate(computation.roots):
        groups[("output", k)] = [root]
    result = {}
    for key, insts in groups.items():
        value_type = ir.RankedTensorType(insts[0].node.value.type)
        shape = tuple(value_type.shape)
        layout = layouts.get(key) or Layout.row_major(len(shape))
        unit = math.prod(layout.tiles[0]) if layout.tiles else 1
        width = ELEMENT_BYTES[str(value_type.element_type)]
        domain = insts[0].tile_offsets_indexing.domain_size()
        per_program = []
        for pid in range(domain):
            touched = set()
            for inst in insts:
                offsets = inst.tile_offsets_indexing.evaluate([pid])
                touched |= box(offsets, inst.tile_sizes, inst.tile_strides, shape)
            blocks = {layout.linear_index(shape, e) // unit for e in touched}
            per_program.append(len(blocks) * unit * width)
        result[key] = (max(per_program), sum(per_program))
    return result


@pytest.mark.parametrize(
    "name, layouts",
    [
        ("softmax", {}),
        ("softmax", {("operand", 0): Layout.parse("{1,0:T(2,4)}")}),
        ("matmul", {}),
        ("matmul", {("operand", 1): Layout.parse("{0,1:T(2,2)}"), ("output", 0): Layout.parse("{1,0:T(4,4)}")}),
        ("transpose_add", {("operand", 0): Layout.parse("{0,1:T(2,2)}")}),
        ("two_reads", {}),
        ("two_reads", {("operand", 0): Layout.parse("{1,0:T(2,2)}")}),
    ],
)
def test_footprint_equals_an_enumerated_count(functions, name, layouts) -> None:
    fusion = analysis_of(functions[name])
    operand_layouts = {k: v for (kind, k), v in layouts.items() if kind == "operand"}
    output_layouts = {k: v for (kind, k), v in layouts.items() if kind == "output"}
    checked = 0
    for sizes in fusion.valid_tilings():
        try:
            footprint = tiling_footprint(fusion, sizes, layouts=operand_layouts, output_layouts=output_layouts)
        except TilingError as exc:
            assert exc.status == "UNIMPLEMENTED"
            continue
        expected = brute_force(fusion, sizes, layouts)
        got = {(o.kind, o.index): (o.bytes_per_tile, o.bytes_moved) for o in footprint.operands + footprint.outputs}
        assert got == expected, sizes
        checked += 1
    assert checked >= 4


def test_a_row_of_a_tiled_layout_touches_whole_layout_tiles(functions) -> None:
    fusion = analysis_of(functions["softmax"])
    layouts, _ = declared_parameter_layouts(functions["softmax"])
    footprint = tiling_footprint(fusion, [1, 6], layouts=layouts)
    (operand,) = footprint.operands
    # One row of 6 f32 in (2,4) layout tiles: two tiles of 8 elements, 64 bytes; the
    # 4 rows share layout tiles pairwise, so 4 programs move 256 bytes of a 96-byte array.
    assert (operand.bytes_per_tile, operand.bytes_moved, operand.useful_bytes) == (64, 256, 96)
    assert footprint.num_tiles == 4 and footprint.outputs[0].bytes_per_tile == 24
    assert footprint.bytes_per_output_element == (256 + 96) / 24
    assert footprint.padding_waste == pytest.approx(1 - (96 + 96) / (256 + 96))


def test_a_dot_operand_is_read_once_per_contracting_step(functions) -> None:
    fusion = analysis_of(functions["matmul"])
    # Parameters {K, M, N}: K tiles of 2, output tiles of 4x4: 2 output tiles, 3 steps each.
    footprint = tiling_footprint(fusion, [2, 4, 4])
    a, b = footprint.operands
    assert (a.steps, b.steps) == (3, 3)
    assert a.bytes_per_tile == 4 * 2 * 2 and b.bytes_per_tile == 2 * 4 * 4
    assert a.bytes_moved == 8 * 6 * 2 and b.bytes_moved == 6 * 4 * 4 * 2  # b read by both row tiles
    assert footprint.outputs[0].bytes_moved == 8 * 4 * 4


def test_ranking_keeps_the_tilings_within_budget_best_first(functions) -> None:
    fusion = analysis_of(functions["matmul"])
    budget = 256
    ranking = rank_tilings(fusion, budget)
    assert ranking.skipped == 0
    ranked = ranking.tilings
    within = [s for s in fusion.valid_tilings() if tiling_footprint(fusion, s).bytes_per_tile <= budget]
    assert sorted(f.tile_sizes for f in ranked) == sorted(within)
    keys = [(f.bytes_per_output_element, f.num_tiles) for f in ranked]
    assert keys == sorted(keys) and all(f.bytes_per_tile <= budget for f in ranked)
    # Without a budget, one 8x4 output tile reads a (bf16) and b once: 96 + 96 bytes,
    # writes 128, for 32 output elements (any K step moves the same bytes).
    best = rank_tilings(fusion, 10**9).tilings[0]
    assert best.tile_sizes[1:] == (8, 4) and best.num_tiles == 1 and best.bytes_per_output_element == 10.0


def test_tilings_with_too_many_programs_are_counted_not_evaluated(functions) -> None:
    fusion = analysis_of(functions["matmul"])
    # {K, M, N} = (6, 8, 4): tilings with more than 8 programs (K steps included) are skipped.
    programs = [math.prod(-(-n // s) for n, s in zip((6, 8, 4), sizes)) for sizes in fusion.valid_tilings()]
    ranking = rank_tilings(fusion, 10**9, max_programs=8)
    assert ranking.skipped == sum(p > 8 for p in programs) > 0
    assert len(ranking.tilings) == sum(p <= 8 for p in programs)


def test_invalid_sizes_and_bad_layouts_are_errors(functions) -> None:
    fusion = analysis_of(functions["softmax"])
    with pytest.raises(TilingError):
        tiling_footprint(fusion, [1])  # one size per tiling parameter
    with pytest.raises(FootprintError, match="rank"):
        tiling_footprint(fusion, [1, 6], layouts={0: "{0}"})


def test_runtime_values_are_not_contracting_steps() -> None:
    # A dynamic slice's start (0..5) is a runtime value of its operand's tile offsets:
    # the footprint averages over it, it does not count it as 6 contracting steps.
    f = Fusion()
    x, start = f.parameter([8]), f.parameter([], "i32")
    result = f.dynamic_slice(x, [start], [3])
    with functions_of(f.text("window", result)) as functions:
        footprint = tiling_footprint(analysis_of(functions["window"]), [3])
        window = footprint.operands[0]
        assert (window.steps, window.bytes_per_tile, window.bytes_moved) == (1, 12, 12)
        assert footprint.bytes_per_output_element == (12 + 4 + 12) / 3


def _window_fusion(rows: int, width: int, out_rows: int) -> str:
    """A row of ``x: f32[rows, width]`` at a runtime start, broadcast to ``out_rows`` rows
    and added to ``y``: x's tile is one whole row at every start along dim 0."""
    f = Fusion()
    x, row, column, y = f.parameter([rows, width]), f.parameter([], "i32"), f.parameter([], "i32"), f.parameter([out_rows, width])
    window = f.reshape(f.dynamic_slice(x, [row, column], [1, width]), [width])
    return f.text("window", f.binary("add", f.broadcast(window, [out_rows, width], [1]), y))


def test_runtime_values_of_whole_tiles_are_counted_exactly() -> None:
    # The row start (0..9) moves x's tile along a dimension where it is always inside:
    # the figures equal those of every (program, start) pair enumerated one by one.
    with functions_of(_window_fusion(10, 8, 4)) as functions:
        fusion = analysis_of(functions["window"])
        for sizes in fusion.valid_tilings():
            computation = tiled_computation(fusion, list(sizes))
            (inst,) = [i for i in computation.instructions if i.node.parameter_number == 0]
            m = inst.tile_offsets_indexing
            ranges = [range(v.bounds.lower, v.bounds.upper + 1) for v in m.symbol_vars]
            per_point = [
                4 * len(box(m.evaluate([pid], list(values)), inst.tile_sizes, inst.tile_strides, (10, 8)))
                for pid in range(m.dim_ranges[0].size)
                for values in itertools.product(*ranges)
                if m.contains_point([pid], list(values))
            ]
            repeats = math.prod(len(r) for r in ranges)
            operand = tiling_footprint(fusion, sizes).operands[0]
            assert (operand.bytes_per_tile, operand.bytes_moved) == (max(per_point), sum(per_point) // repeats), sizes


def test_runtime_values_of_whole_tiles_are_not_enumerated() -> None:
    # 2**22 start rows times 8 programs is past the enumeration limit (2**24 points), but
    # every start reads one whole row: a tile of 4 elements per program, 8 programs.
    with functions_of(_window_fusion(1 << 22, 4, 8)) as functions:
        operand = tiling_footprint(analysis_of(functions["window"]), [1, 4]).operands[0]
        assert (operand.bytes_per_tile, operand.bytes_moved) == (16, 8 * 16)


def test_a_parameter_read_in_two_concatenate_regions_is_counted_per_program() -> None:
    # x is read through its slice in the first region and whole in the second; each
    # region's tile exists at its own programs only.
    f = Fusion()
    x = f.parameter([4, 8])
    result = f.concatenate([f.slice(x, [0, 0], [4, 2], [1, 1]), x], 1)
    with functions_of(f.text("f", result)) as functions:
        analysis = analysis_of(functions["f"])
        for sizes in ([4, 2], [2, 2], [1, 1]):
            computation = tiled_computation(analysis, sizes)
            (operand,) = tiling_footprint(analysis, sizes).operands
            per_program = [4 * len(parameter_tile(computation, 0, pid)) for pid in range(computation.num_programs)]
            assert (operand.bytes_per_tile, operand.bytes_moved) == (max(per_program), sum(per_program))
