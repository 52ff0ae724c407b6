"""The ranking of tilings (symbolic_tiling/ranking.py) against a brute force.

For every computation of the lit tests of tiling (lit_tests/tiling/*.mlir) and the
functions below, and two budgets, the ranked tile sizes and their figures must equal a
brute force that follows the documented contract directly: every candidate (powers of
two below each parameter's size, then the size) that satisfies the constraints, with at
most ``max_programs`` programs, that the tiled computation accepts, its bytes counted by
enumerating every element of every tile box at every program (placed through
``Layout.linear_index`` into layout tiles), kept when its per-tile bytes fit the budget
and sorted by (bytes moved per output element, tiles, programs, sizes). The limits of
the ranking are reported, and a capped ranking is the brute force over what it kept."""

from __future__ import annotations

import itertools
import math

import pytest

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.context import default_context
from hlo_indexing.layout.types import Layout
from hlo_indexing.symbolic_tiling import ranking as ranking_module
from hlo_indexing.symbolic_tiling import tile_counts
from hlo_indexing.symbolic_tiling.footprint import FootprintError, declared_parameter_layouts, element_bytes, tiling_footprint
from hlo_indexing.symbolic_tiling.ranking import rank_tilings
from hlo_indexing.symbolic_tiling.tiled_computation import tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, TiledFusion, TilingError, analyze_fusion
from helpers import LIT_TESTS

LIT = LIT_TESTS / "tiling"
MAX_PROGRAMS = 256
#: Computations whose arrays hold more elements than this are left to the lit tests
#: (the brute force enumerates every element of every tile of every candidate).
MAX_BRUTE_FORCE_ELEMENTS = 1024

FUNCTIONS = """
func.func @two_reads(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = stablehlo.add %0, %a : tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
func.func @batched_dot(%a: tensor<2x8x6xf32>, %b: tensor<2x6x4xbf16> {hlo_indexing.layout = "{2,1,0:T(2,2)}"}) -> tensor<2x8x4xf32> {
  %0 = stablehlo.convert %b : (tensor<2x6x4xbf16>) -> tensor<2x6x4xf32>
  %1 = stablehlo.dot_general %a, %0, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x8x6xf32>, tensor<2x6x4xf32>) -> tensor<2x8x4xf32>
  return %1 : tensor<2x8x4xf32>
}
func.func @concat(%a: tensor<4x4xf32>, %b: tensor<4x12xf32>) -> tensor<4x16xf32> {
  %0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<4x4xf32>, tensor<4x12xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
func.func @unit_dim(%x: tensor<8xf32>) -> tensor<8x1xf32> {
  %0 = stablehlo.reshape %x : (tensor<8xf32>) -> tensor<8x1xf32>
  %1 = stablehlo.exponential %0 : tensor<8x1xf32>
  return %1 : tensor<8x1xf32>
}
func.func @collapse(%x: tensor<4x6xf32>) -> tensor<24xf32> {
  %0 = stablehlo.reshape %x : (tensor<4x6xf32>) -> tensor<24xf32>
  return %0 : tensor<24xf32>
}
func.func @broadcast_reduce(%x: tensor<6x5xf32>, %y: tensor<5xf32> {hlo_indexing.layout = "{0:T(2)}"}) -> tensor<5x3x6xf32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [0] : (tensor<6x5xf32>, tensor<f32>) -> tensor<5xf32>
  %1 = stablehlo.add %0, %y : tensor<5xf32>
  %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<5xf32>) -> tensor<5x3x6xf32>
  return %2 : tensor<5x3x6xf32>
}
func.func @strided(%x: tensor<16x6xf32>) -> tensor<8x3xf32> {
  %0 = stablehlo.slice %x [1:16:2, 0:6:2] : (tensor<16x6xf32>) -> tensor<8x3xf32>
  %1 = stablehlo.reverse %0, dims = [1] : tensor<8x3xf32>
  return %1 : tensor<8x3xf32>
}
func.func @softmax_tiled(%arg0: tensor<4x6xf32> {hlo_indexing.layout = "{1,0:T(2,4)}"}) -> tensor<4x6xf32> {
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.maximum across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<4xf32>) -> tensor<4x6xf32>
  %2 = stablehlo.subtract %arg0, %1 : tensor<4x6xf32>
  return %2 : tensor<4x6xf32>
}
func.func @shifted(%a: tensor<6xf32> {hlo_indexing.layout = "{0:T(4)}"}) -> tensor<4xf32> {
  %0 = stablehlo.slice %a [0:4] : (tensor<6xf32>) -> tensor<4xf32>
  %1 = stablehlo.slice %a [2:6] : (tensor<6xf32>) -> tensor<4xf32>
  %2 = stablehlo.add %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}
func.func @three_reads(%a: tensor<6x6xf32> {hlo_indexing.layout = "{1,0:T(2,2)}"}) -> tensor<4x4xf32> {
  %0 = stablehlo.slice %a [0:4, 0:4] : (tensor<6x6xf32>) -> tensor<4x4xf32>
  %1 = stablehlo.slice %a [1:5, 2:6] : (tensor<6x6xf32>) -> tensor<4x4xf32>
  %2 = stablehlo.slice %a [2:6, 1:5] : (tensor<6x6xf32>) -> tensor<4x4xf32>
  %3 = stablehlo.add %0, %1 : tensor<4x4xf32>
  %4 = stablehlo.add %3, %2 : tensor<4x4xf32>
  return %4 : tensor<4x4xf32>
}
func.func @scalar(%x: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.exponential %x : tensor<f32>
  return %0 : tensor<f32>
}
"""


def lit_sources() -> list[str]:
    return [split for path in sorted(LIT.glob("*.mlir")) for split in path.read_text().split("// -----")]


def all_computations() -> list[tuple[str, ir.Operation]]:
    with default_context():
        found = []
        for k, text in enumerate(lit_sources() + [FUNCTIONS]):
            try:
                module = ir.Module.parse(text)
            except Exception:  # a split written to show a parse error
                continue
            KEEP.append(module)
            found += [(f"{k}:{label}", op) for label, op in computations(module.operation)]
        return found


KEEP: list[ir.Module] = []  # keeps the parsed modules alive for the ops handed out


def candidate_sizes(n: int) -> list[int]:
    return [1 << k for k in range(n.bit_length()) if (1 << k) < n] + [n]


def brute_force(fusion: TiledFusion, budget: int, layouts, output_layouts, considered=None):
    """(ranked [(sizes, bytes_per_tile, bytes_moved, tiles, programs)], skipped)."""
    ranked, skipped = [], 0
    for sizes in itertools.product(*(candidate_sizes(p.size) for p in fusion.parameters)):
        if considered is not None and sizes not in considered:
            continue
        if not fusion.satisfies_constraints(sizes):
            continue
        if math.prod(-(-p.size // s) for p, s in zip(fusion.parameters, sizes)) > MAX_PROGRAMS:
            skipped += 1
            continue
        try:
            computation = tiled_computation(fusion, list(sizes))
        except TilingError as exc:
            assert exc.status == "UNIMPLEMENTED"
            continue
        groups: dict[tuple[str, int], list] = {}
        for inst in computation.instructions:
            if inst.node.parameter_number is not None:
                groups.setdefault(("operand", inst.node.parameter_number), []).append(inst)
        for k, root in enumerate(computation.roots):
            groups[("output", k)] = [root]
        per_tile = moved = 0
        steps = 1
        for (kind, k), insts in groups.items():
            value_type = ir.RankedTensorType(insts[0].node.value.type)
            shape = tuple(value_type.shape)
            layout_text = (layouts if kind == "operand" else output_layouts).get(k)
            layout = Layout.parse(layout_text) if layout_text else Layout.row_major(len(shape))
            unit = math.prod(layout.tiles[0]) if layout.tiles else 1
            width = element_bytes(value_type)
            pids = insts[0].tile_offsets_indexing.dim_vars[0].bounds
            if kind == "operand":  # the programs of a dot's operand also walk its contracting tiles
                steps = max(steps, pids.size // computation.num_programs)
            # per (program, runtime values): a dynamic slice's tile moves with its start;
            # a tile that does not read a runtime value is the same at each of its values
            touched: dict[tuple[int, ...], set] = {}
            reads = []
            for inst in insts:
                # the points of a read: its programs (outside a concatenate's region: none)
                points, images = inst.tile_offsets_indexing.enumerate()
                names = [v.node.value for v in inst.runtime_variables]
                reads.append((inst, names, points.tolist(), images.tolist()))
            every = list(dict.fromkeys(v for _, names, _, _ in reads for v in names))
            seen = {v: sorted({pt[1 + names.index(v)] for _, names, pts, _ in reads if v in names for pt in pts})
                    for v in every}
            for inst, names, points, images in reads:
                for point, offsets in zip(points, images):
                    axes = [[o + s * i for i in range(n)] for o, n, s in zip(offsets, inst.tile_sizes, inst.tile_strides)]
                    elements = {e for e in itertools.product(*axes) if all(0 <= i < d for i, d in zip(e, shape))}
                    choices = [[point[1 + names.index(v)]] if v in names else seen[v] for v in every]
                    for values in itertools.product(*choices):
                        touched.setdefault((point[0], *values), set()).update(elements)
            touched_bytes = [len({layout.linear_index(shape, e) // unit for e in s}) * unit * width for s in touched.values()]
            # moved: the average over the start values (every value of each range: a tile
            # whose domain leaves some out, as an update read only where it lands, reads
            # nothing there)
            ranges = {v: var.bounds.size for inst, names, _, _ in reads
                      for v, var in zip(names, inst.tile_offsets_indexing.runtime_vars)}
            runtime_values = math.prod(ranges.values())
            per_tile += max(touched_bytes)
            moved += sum(touched_bytes) // runtime_values
        if per_tile <= budget:
            output_elements = math.prod(ir.RankedTensorType(computation.roots[0].node.value.type).shape)
            tiles = computation.num_programs
            ranked.append(((moved / output_elements, tiles, tiles * steps, sizes), per_tile, moved))
    ranked.sort()
    return [(key[3], per_tile, moved, key[1], key[2]) for key, per_tile, moved in ranked], skipped


def ranked_figures(ranking, fusion: TiledFusion, layouts, output_layouts) -> list[tuple]:
    out = []
    for i, footprint in enumerate(ranking.tilings):
        # Built from the ranking's tables: the same as instantiating the tiled computation.
        assert footprint == tiling_footprint(fusion, footprint.tile_sizes, layouts=layouts, output_layouts=output_layouts)
        figures = (footprint.tile_sizes, footprint.bytes_per_tile, footprint.bytes_moved, footprint.num_tiles,
                   footprint.num_programs)
        if hasattr(ranking.tilings, "summary"):  # the symbolic path's own figures agree with the footprint built
            summary = ranking.tilings.summary(i)
            assert (summary["bytes_per_tile"], summary["bytes_moved"], summary["num_tiles"], summary["num_programs"]) == figures[1:]
        out.append(figures)
    return out


COMPUTATIONS = all_computations()


@pytest.mark.parametrize("label, op", COMPUTATIONS, ids=[label for label, _ in COMPUTATIONS])
def test_ranking_equals_the_brute_force(label: str, op: ir.Operation) -> None:
    fusion = analyze_fusion(op)
    if isinstance(fusion, AnalysisFailure):
        pytest.skip(f"not tileable: {fusion.reason}")
    if label.endswith(":@two_dots"):
        with pytest.raises(FootprintError, match="read by the programs of different dots"):
            rank_tilings(fusion, 1 << 40)
        pytest.skip("an operand read by the programs of two dots: not counted (lit test print-tilings-device-refusals)")
    if label.endswith(":@six_reads"):  # 32**4 combinations of runtime starts per program
        ranking = rank_tilings(fusion, 1 << 40)
        assert not ranking.tilings and ranking.capped == ranking.valid > 0
        pytest.skip("every footprint past the counting limit: none ranked (lit test print-tilings-device-refusals)")
    block = op.regions[0].blocks[0]
    values = list(block.arguments) + list(list(block.operations)[-1].operands)
    tensors = [ir.RankedTensorType(v.type) for v in values if isinstance(v.type, ir.RankedTensorType)]  # not tokens
    elements = sum(math.prod(t.shape) for t in tensors)
    layouts, output_layouts = declared_parameter_layouts(op)
    if elements > MAX_BRUTE_FORCE_ELEMENTS:
        best = rank_tilings(fusion, 48 * 1024, layouts=layouts, output_layouts=output_layouts).tilings[:3]
        for footprint in best:
            assert footprint == tiling_footprint(fusion, footprint.tile_sizes, layouts=layouts, output_layouts=output_layouts)
        pytest.skip(f"{elements} elements: too many for the brute force (the best {len(best)} checked against tiling_footprint)")
    everything, _ = brute_force(fusion, 1 << 40, layouts, output_layouts)
    budgets = [1 << 40] + ([sorted(t[1] for t in everything)[len(everything) // 2]] if everything else [])
    for budget in budgets:
        expected, skipped = brute_force(fusion, budget, layouts, output_layouts)
        ranking = rank_tilings(fusion, budget, layouts=layouts, output_layouts=output_layouts, max_programs=MAX_PROGRAMS)
        assert ranked_figures(ranking, fusion, layouts, output_layouts) == expected, (label, budget, ranking.method)
        assert ranking.skipped == skipped and ranking.capped == 0


def test_most_computations_take_the_symbolic_path() -> None:
    methods = {}
    for label, op in COMPUTATIONS:
        fusion = analyze_fusion(op)
        if isinstance(fusion, TiledFusion) and not label.endswith(":@two_dots"):
            methods[label] = rank_tilings(fusion, 1 << 20, max_programs=MAX_PROGRAMS).method
    # Tiling by tiling: a concatenate reads each operand only over its region (a map
    # with constraints); a dynamic slice's tiles move with its runtime start. two_reads (%a transposed and not) and a softmax (its input
    # through the reduction and directly) count the union of their tiles.
    per_tiling = {label.split(":", 1)[1] for label, method in methods.items() if method == "per-tiling"}
    # @dynamic_and_fixed_reads: its operand is read at a runtime offset and at a fixed one;
    # @scan_step: its row is read where the runtime step puts it (a constrained map);
    # @sum_beside_centered: its scalar extra output is written whole by every program;
    # @six_reads: its operand is read at four runtime starts.
    assert per_tiling == {
        "@concat", "@window", "@dynamic_and_fixed_reads", "@scan_step", "@sum_beside_centered", "@six_reads"}
    assert sum(method == "symbolic" for method in methods.values()) >= 10


def fusion_of(name: str) -> tuple[TiledFusion, ir.Operation]:
    (op,) = [op for label, op in COMPUTATIONS if label.endswith(f":@{name}")]
    fusion = analyze_fusion(op)
    assert isinstance(fusion, TiledFusion), fusion
    return fusion, op


def test_the_candidate_cap_drops_the_smallest_sizes_and_says_so(monkeypatch) -> None:
    fusion, op = fusion_of("broadcast_reduce")  # parameters of sizes 5, 3, 6: 4 x 3 x 4 = 48 candidates
    layouts, output_layouts = declared_parameter_layouts(op)
    monkeypatch.setattr(tile_counts, "MAX_TILING_CANDIDATES", 27)
    ranking = rank_tilings(fusion, 1 << 40, layouts=layouts, output_layouts=output_layouts, max_programs=MAX_PROGRAMS)
    # The widest parameters lose their smallest sizes first: 5 -> [2, 4, 5], then 6 -> [2, 4, 6]: 3 x 3 x 3.
    kept = set(itertools.product([2, 4, 5], [1, 2, 3], [2, 4, 6]))
    assert ranking.capped == 48 - 27
    assert "21 candidate tilings not considered (limits.MAX_TILING_CANDIDATES)" in ranking.note
    expected, _ = brute_force(fusion, 1 << 40, layouts, output_layouts, considered=kept)
    assert ranked_figures(ranking, fusion, layouts, output_layouts) == expected


DYNAMIC_SLICE = """
func.func @dynamic(%x: tensor<8x8xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dynamic_slice %x, %i, %j, sizes = [2, 4] : (tensor<8x8xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
"""


def test_the_per_tiling_cap_keeps_the_fewest_programs(monkeypatch) -> None:
    with default_context():
        module = ir.Module.parse(DYNAMIC_SLICE)
        fusion = analyze_fusion(module.body.operations[0])
    assert isinstance(fusion, TiledFusion), fusion
    full = rank_tilings(fusion, 1 << 40)  # runtime offsets: tiling by tiling; 2 x 3 candidates
    assert full.method == "per-tiling" and full.capped == 0 and len(full.tilings) == 6
    monkeypatch.setattr(ranking_module, "MAX_FOOTPRINTS_PER_FUSION", 4)
    ranking = rank_tilings(fusion, 1 << 40)
    assert ranking.capped == 6 - 4
    programs = {s: -(-2 // s[0]) * -(-4 // s[1]) for s in itertools.product([1, 2], [1, 2, 4])}
    kept = sorted(programs, key=lambda s: (programs[s], s))[:4]
    assert sorted(f.tile_sizes for f in ranking.tilings) == sorted(kept)
    assert [f for f in full.tilings if f.tile_sizes in kept] == list(ranking.tilings)


def test_the_per_tiling_cap_skips_output_tiles_over_the_budget(monkeypatch) -> None:
    # A candidate whose output tile alone (2 x 4 f32 at most) is over the budget cannot
    # fit: the footprints built one by one are those of the others, fewest programs first.
    with default_context():
        module = ir.Module.parse(DYNAMIC_SLICE)
        fusion = analyze_fusion(module.body.operations[0])
    assert isinstance(fusion, TiledFusion), fusion
    budget = 24
    full = rank_tilings(fusion, budget)
    monkeypatch.setattr(ranking_module, "MAX_FOOTPRINTS_PER_FUSION", 4)
    ranking = rank_tilings(fusion, budget)
    programs = {s: -(-2 // s[0]) * -(-4 // s[1]) for s in itertools.product([1, 2], [1, 2, 4])}
    small = [s for s in programs if s[0] * s[1] * 4 <= budget]  # all but (2, 4): 32 B written
    kept = sorted(small, key=lambda s: (programs[s], s))[:4]
    assert ranking.tilings and all(f.bytes_per_tile <= budget for f in ranking.tilings)
    assert [f for f in full.tilings if f.tile_sizes in kept] == list(ranking.tilings)
    assert ranking.capped == len(small) - 4


def test_the_per_tiling_rows_stop_the_footprints_built_one_by_one(monkeypatch) -> None:
    # Each footprint counts its tiles at every program and every pair of starts (i in
    # 0..6, j in 0..4: 35 pairs); the tilings are built, fewest programs first, while
    # their rows add up to at most limits.MAX_PER_TILING_ROWS.
    with default_context():
        module = ir.Module.parse(DYNAMIC_SLICE)
        fusion = analyze_fusion(module.body.operations[0])
    assert isinstance(fusion, TiledFusion), fusion
    full = rank_tilings(fusion, 1 << 40)
    monkeypatch.setattr(ranking_module, "MAX_PER_TILING_ROWS", 3 * 35)
    ranking = rank_tilings(fusion, 1 << 40)
    programs = {s: -(-2 // s[0]) * -(-4 // s[1]) for s in itertools.product([1, 2], [1, 2, 4])}
    kept = sorted(programs, key=lambda s: (programs[s], s))[:2]  # 1 and 2 programs: 35 + 70 rows
    assert ranking.capped == 6 - 2 and "MAX_PER_TILING_ROWS" in ranking.note
    assert sorted(f.tile_sizes for f in ranking.tilings) == sorted(kept)
    assert [f for f in full.tilings if f.tile_sizes in kept] == list(ranking.tilings)


def test_the_print_tilings_pass_reports_the_cap(monkeypatch) -> None:
    from hlo_indexing.passes.base import Diagnostics
    from hlo_indexing.passes.tilings import PrintTilings

    monkeypatch.setattr(tile_counts, "MAX_TILING_CANDIDATES", 27)
    with default_context():
        module = ir.Module.parse(FUNCTIONS)
        diagnostics = Diagnostics()
        PrintTilings(budget="1MiB", max=1).run(module.operation, diagnostics)
    notes = [d.message for d in diagnostics.items if "not considered" in d.message]
    assert any("@broadcast_reduce: 21 candidate tilings not considered" in n for n in notes), notes


def test_complex_elements_have_a_width() -> None:
    # element_bytes built a scalar tensor type without a location: it crashed on the
    # complex fusions XLA:CPU emits for an FFT.
    with default_context():
        assert element_bytes(ir.RankedTensorType.get([2], ir.ComplexType.get(ir.F32Type.get()), loc=ir.Location.unknown())) == 8
