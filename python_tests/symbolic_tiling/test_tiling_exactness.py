"""Exactness of tilings (how much of each operand tile the fused maps read), checked by
enumeration: for every valid tiling of small fusions, at every tile, the elements a
brute-force numpy evaluation of the ops says the output tile reads (``tiling_fixtures.Fusion``)
lie in the parameter's tile, and their count and the tile's are the exactness' counts.
A broadcast, a reduce, a strided slice and concatenates are exact (1.0) (a reverse
has no tiles: stride -1, refused as in XLA); a
dynamic slice (gather-like) whose last tile hangs over the output's edge loads operand
elements no output element reads (< 1)."""

from __future__ import annotations

import pytest
from tiling_fixtures import (
    Fusion,
    analysis_of,
    check_reads_and_exactness,
    check_reads_inside_tiles,
    functions_of,
    parameter_tile,
)

from hlo_indexing.maps.exact import isl_available
from hlo_indexing.maps.interval import Interval
from hlo_indexing.symbolic_tiling.exactness import COUNTED, ENUMERATED, NOT_COMPUTED, PROVEN, tiling_exactness
from hlo_indexing.symbolic_tiling.footprint import tiling_footprint, with_exactness
from hlo_indexing.symbolic_tiling.tiled_computation import tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import TilingError


needs_isl = pytest.mark.skipif(not isl_available(), reason="islpy is not installed (the 'exact' extra)")


def broadcast_add() -> tuple[Fusion, object]:
    f = Fusion()
    row, x = f.parameter([6]), f.parameter([4, 6])
    return f, f.binary("add", f.broadcast(row, [4, 6], [1]), x)


def row_softmax() -> tuple[Fusion, object]:
    f = Fusion()
    x = f.parameter([4, 6])
    total = f.broadcast(f.reduce(x, [1]), [4, 6], [0])
    return f, f.unary("exponential", f.binary("subtract", x, total))


def strided_slice() -> tuple[Fusion, object]:
    f = Fusion()
    return f, f.slice(f.parameter([4, 8]), [0, 1], [4, 8], [1, 3])


def transpose_add() -> tuple[Fusion, object]:
    f = Fusion()
    x = f.parameter([4, 4])
    return f, f.binary("add", f.transpose(x, [1, 0]), x)


def concatenate_broadcast() -> tuple[Fusion, object]:
    f = Fusion()
    row, x = f.parameter([3]), f.parameter([2, 3])
    return f, f.concatenate([f.broadcast(row, [2, 3], [1]), x], 0)


def concatenate_own_slice() -> tuple[Fusion, object]:
    f = Fusion()
    x = f.parameter([4, 8])
    return f, f.concatenate([f.slice(x, [0, 0], [4, 2], [1, 1]), x], 1)


CASES = {
    "broadcast_add": (broadcast_add, [COUNTED, COUNTED]),
    "row_softmax": (row_softmax, [COUNTED]),  # the row read holds the element read
    # The two tiles of x (a box and its transpose) hold one another only when whole.
    "transpose_add": (transpose_add, lambda sizes: [COUNTED if sizes == (4, 4) else ENUMERATED]),
    "strided_slice": (strided_slice, [COUNTED]),
    "concatenate_broadcast": (concatenate_broadcast, [COUNTED, COUNTED]),
    "concatenate_own_slice": (concatenate_own_slice, [COUNTED]),  # one region's read per program
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_these_fusions_are_exact_at_every_tile(name) -> None:
    build, methods = CASES[name]
    fusion, result = build()
    with functions_of(fusion.text(name, result)) as functions:
        analysis = analysis_of(functions[name])
        checked = 0
        for sizes in analysis.valid_tilings():
            try:
                computation = tiled_computation(analysis, sizes)
            except TilingError as exc:
                assert exc.status == "UNIMPLEMENTED"
                continue
            exactness = tiling_exactness(analysis, sizes, prove=True)  # isl agrees (with islpy)
            expected = methods(sizes) if callable(methods) else methods
            assert [o.method for o in exactness.operands] == expected, sizes
            checked += check_reads_and_exactness(fusion, result, computation, exactness)
            assert all(o.exactness == 1.0 and o.worst_tile == 1.0 for o in exactness.operands), exactness
        assert checked >= 4


def test_a_strided_slice_tile_reads_every_third_column() -> None:
    fusion, result = strided_slice()
    with functions_of(fusion.text("f", result)) as functions:
        analysis = analysis_of(functions["f"])
        (operand,) = tiling_exactness(analysis, [2, 3]).operands
        # 2 programs, each a 2x3 box of stride (1, 3): 6 elements, all read.
        assert (operand.read_per_tile.tolist(), operand.covered_per_tile.tolist()) == ([6, 6], [6, 6])


def test_a_reverse_has_no_tiles() -> None:
    # The reversed operand's tiles have stride -1, which the tiled computation refuses
    # (as XLA does), so no exactness either.
    f = Fusion()
    result = f.reverse(f.broadcast(f.parameter([6]), [4, 6], [1]), [0])
    with functions_of(f.text("f", result)) as functions:
        analysis = analysis_of(functions["f"])
        with pytest.raises(TilingError, match="negative stride"):
            tiling_exactness(analysis, [1, 2])


def dynamic_window() -> tuple[Fusion, object]:
    f = Fusion()
    x, start = f.parameter([8]), f.parameter([], "i32")
    return f, f.dynamic_slice(x, [start], [3])


def test_a_gather_like_window_whose_tile_hangs_over_the_edge_is_not_exact() -> None:
    fusion, result = dynamic_window()
    with functions_of(fusion.text("window", result)) as functions:
        analysis = analysis_of(functions["window"])
        for sizes, expected in [([1], 1.0), ([3], 1.0), ([2], 18 / 23)]:
            computation = tiled_computation(analysis, sizes)
            exactness = tiling_exactness(analysis, sizes)
            window, start = exactness.operands
            # The start index takes the values 0..5 (8 - 3): one tile per program and value.
            assert (window.method, len(window.read_per_tile)) == (ENUMERATED, 6 * computation.num_programs)
            check_reads_and_exactness(fusion, result, computation, exactness, runtime=("arg1", range(6)))
            assert window.exactness == pytest.approx(expected) and start.exactness == 1.0
        # Tiles of 2: the second program writes output element 2 only, which reads one
        # element of x, but its tile holds two (one at start 5: x has 8 elements).
        assert window.worst_tile == 0.5
        assert str(exactness) == "exactness parameter(0) 0.783 (worst tile 0.5), parameter(1) 1"


@needs_isl
def test_isl_proves_the_exact_tilings_and_disproves_the_window_hanging_over_the_edge() -> None:
    fusion, result = dynamic_window()
    with functions_of(fusion.text("window", result)) as functions:
        analysis = analysis_of(functions["window"])
        for sizes, exact in [([1], True), ([2], False), ([3], True)]:
            computation = tiled_computation(analysis, sizes)
            exactness = tiling_exactness(analysis, sizes, prove=True)
            check_reads_and_exactness(fusion, result, computation, exactness, runtime=("arg1", range(6)))
            window, start = exactness.operands
            assert (window.proof.holds, start.proof.holds) == (exact, True)
        assert str(exactness.operands[1]) == "parameter(1) 1 (proven by isl)"
        assert str(tiling_exactness(analysis, [2], prove=True)).startswith(
            "exactness parameter(0) 0.783 (worst tile 0.5) (below 1, proven by isl)"
        )


@needs_isl
def test_past_the_limit_isl_proves_the_exactness() -> None:
    """Too many points to count, the exactness 1 is still known: proven by isl."""
    fusion, result = transpose_add()
    with functions_of(fusion.text("f", result)) as functions:
        analysis = analysis_of(functions["f"])
        (operand,) = tiling_exactness(analysis, [2, 2], max_points=10, prove=True).operands
        assert (operand.method, operand.exactness, operand.worst_tile, operand.proof.holds) == (PROVEN, 1.0, 1.0, True)
        assert "MAX_EXACTNESS_POINTS" in operand.reason and str(operand) == "parameter(0) 1 (proven by isl)"
        entry = operand.to_json()
        assert (entry["exactness"], entry["read_elements"], entry["tile_elements"], entry["proof"]) == (1.0, None, None, "proven")
    big = """
    func.func @big(%x: tensor<1048576xf32>, %i: tensor<i32>) -> tensor<3000xf32> {
      %0 = stablehlo.dynamic_slice %x, %i, sizes = [3000] : (tensor<1048576xf32>, tensor<i32>) -> tensor<3000xf32>
      return %0 : tensor<3000xf32>
    }"""
    with functions_of(big) as functions:
        analysis = analysis_of(functions["big"])
        # 1045577 start values: too many tiles to count. Tiles of 1000 partition the
        # window (exact); tiles of 2000 hang over its end (the second loads 1000 more).
        for sizes, exact in [([1000], True), ([2000], False)]:
            window, start = tiling_exactness(analysis, sizes, prove=True).operands
            assert (window.proof.holds, start.proof.holds) == (exact, True)
            assert (window.method, start.method) == (PROVEN if exact else NOT_COMPUTED, COUNTED)


def test_an_update_at_a_runtime_offset_is_read_by_every_tile_it_lands_in() -> None:
    # A tile that starts before the update and reaches into it reads the update too:
    # with tiles of 4 and the update at rows 2..6, programs 0 and 1 read it (the tile
    # offsets kept only the programs whose first row was in the update).
    f = Fusion()
    x, update, start = f.parameter([20]), f.parameter([5]), f.parameter([], "i32")
    result = f.dynamic_update_slice(x, update, [start])
    with functions_of(f.text("update", result)) as functions:
        analysis = analysis_of(functions["update"])
        for sizes in analysis.valid_tilings():
            assert check_reads_inside_tiles(f, result, tiled_computation(analysis, sizes), f.starts[0]) == 3 * 16 * -(-20 // sizes[0])
        computation = tiled_computation(analysis, [4])
        assert {pid for pid in range(5) if parameter_tile(computation, 1, pid, [2])} == {0, 1}


def test_a_row_written_at_a_runtime_step_is_tiled() -> None:
    # What a scan body compiles to: a row reshaped to [1, n] and written at row i of
    # the stacked outputs. The row's map, (d0 * 8 + d1 - rt0 * 8), is constrained by
    # 'd0 - rt0', which is no result: the tile is a superset, clipped to the row.
    f = Fusion()
    stacked, row, step = f.parameter([6, 8]), f.parameter([8]), f.parameter([], "i32")
    result = f.dynamic_update_slice(stacked, f.reshape(row, [1, 8]), [step, f.index_constant(0)])
    with functions_of(f.text("scan_step", result)) as functions:
        analysis = analysis_of(functions["scan_step"])
        tilings = analysis.valid_tilings()
        assert tilings
        for sizes in tilings:
            check_reads_inside_tiles(f, result, tiled_computation(analysis, sizes), f.starts[0])


def test_slices_at_one_step_are_one_runtime_value() -> None:
    # A scan body reads row i of two stacked inputs and writes row i of its output: the
    # three starts are one value (clamped to one range), so each tile moves with one
    # variable, not three independent ones (64x as many rows to count per start).
    f = Fusion()
    xs, ys, out, step = f.parameter([6, 8]), f.parameter([6, 8]), f.parameter([6, 8]), f.parameter([], "i32")
    zero = f.index_constant(0)
    row = f.binary("add", f.dynamic_slice(xs, [step, zero], [1, 8]), f.dynamic_slice(ys, [step, zero], [1, 8]))
    result = f.dynamic_update_slice(out, row, [step, zero])
    with functions_of(f.text("scan_step", result)) as functions:
        analysis = analysis_of(functions["scan_step"])
        moving = 0
        for sizes in analysis.valid_tilings():
            computation = tiled_computation(analysis, sizes)
            check_reads_inside_tiles(f, result, computation, ("arg3", range(6)))
            for number in (0, 1):
                for inst in computation.by_parameter()[number]:
                    bounds = [v.bounds for v in inst.tile_offsets_indexing.runtime_vars]
                    assert bounds in ([], [Interval(0, 5)]), sizes
                    moving += bool(bounds)
        assert moving >= len(analysis.valid_tilings())


def test_a_scalar_output_read_at_a_runtime_start_has_one_program() -> None:
    # A scalar fusion (as diffrax's step-size controller compiles) has no tiling
    # parameter: one program, whose tile is read per value of the start. Its exactness is
    # enumerated over an empty tile grid (it raised numpy's ValueError).
    f = Fusion()
    x, start = f.parameter([8]), f.parameter([], "i32")
    result = f.reshape(f.dynamic_slice(x, [start], [1]), [])
    with functions_of(f.text("element", result)) as functions:
        analysis = analysis_of(functions["element"])
        assert analysis.valid_tilings() == [()]
        computation = tiled_computation(analysis, [])
        exactness = tiling_exactness(analysis, [])
        element, _ = exactness.operands
        assert (computation.num_programs, element.method, len(element.read_per_tile)) == (1, ENUMERATED, 8)
        assert check_reads_and_exactness(f, result, computation, exactness, runtime=("arg1", range(8))) == 9
        assert element.exactness == 1.0


def test_a_dot_operand_tile_is_read_once_per_contracting_step() -> None:
    text = """
    func.func @matmul(%a: tensor<8x6xf32>, %b: tensor<6x4xf32>) -> tensor<8x4xf32> {
      %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
      return %0 : tensor<8x4xf32>
    }"""
    with functions_of(text) as functions:
        analysis = analysis_of(functions["matmul"])
        # {K, M, N} = [2, 4, 4]: 2 output tiles of 4x4, 3 steps of 2 along K: 6 programs,
        # each reading a 4x2 block of a and a 2x4 block of b.
        a, b = tiling_exactness(analysis, [2, 4, 4]).operands
        assert (a.method, a.read_per_tile.tolist(), a.covered_per_tile.tolist()) == (COUNTED, [8] * 6, [8] * 6)
        assert (b.read_elements, b.tile_elements, b.exactness) == (48, 48, 1.0)
        # K tiles of 4 over 6: the second step holds 2 of the 4 columns (masked lanes).
        a, b = tiling_exactness(analysis, [4, 8, 4]).operands
        assert a.read_per_tile.tolist() == a.covered_per_tile.tolist() == [32, 16]


def test_past_the_limit_exactness_is_not_computed_with_the_reason() -> None:
    fusion, result = transpose_add()
    with functions_of(fusion.text("f", result)) as functions:
        analysis = analysis_of(functions["f"])
        assert tiling_exactness(analysis, [2, 2]).operands[0].method == ENUMERATED
        (operand,) = tiling_exactness(analysis, [2, 2], max_points=10).operands
        assert (operand.method, operand.exactness, operand.worst_tile) == (NOT_COMPUTED, None, None)
        assert "MAX_EXACTNESS_POINTS" in operand.reason
        assert operand.to_json()["exactness"] is None and "MAX_EXACTNESS_POINTS" in operand.to_json()["reason"]
        assert str(operand).startswith("parameter(0) not computed (")


def test_footprints_carry_the_exactness_in_text_and_json() -> None:
    fusion, result = dynamic_window()
    with functions_of(fusion.text("window", result)) as functions:
        analysis = analysis_of(functions["window"])
        plain = tiling_footprint(analysis, [2])
        assert plain.exactness is None and "exactness" not in plain.to_json() and "exactness" not in str(plain)
        footprint = with_exactness(analysis, plain)
        assert footprint == tiling_footprint(analysis, [2], exactness=True)
        assert str(footprint).endswith(", exactness parameter(0) 0.783 (worst tile 0.5), parameter(1) 1")
        entry = footprint.to_json()["exactness"][0]
        assert entry == {
            "index": 0,
            "name": "parameter(0)",
            "method": ENUMERATED,
            "exactness": pytest.approx(18 / 23),
            "worst_tile": 0.5,
            "read_elements": 18,
            "tile_elements": 23,
        }


def test_one_start_read_in_two_concatenate_regions_is_one_runtime_value() -> None:
    # Found by the property test: each region has its own dynamic-slice node, whose
    # runtime variables both read %arg1; the exactness enumerates its values once and
    # the footprint aligns the two regions' tiles by program and value.
    f = Fusion()
    x, start = f.parameter([3]), f.parameter([], "i32")
    window = f.dynamic_slice(x, [start], [2])
    result = f.concatenate([f.slice(window, [0], [1], [1]), window], 0)
    with functions_of(f.text("f", result)) as functions:
        analysis = analysis_of(functions["f"])
        computation = tiled_computation(analysis, [1])
        exactness = tiling_exactness(analysis, [1])
        assert exactness.operands[0].method == ENUMERATED
        assert check_reads_and_exactness(f, result, computation, exactness, runtime=f.starts[0]) == 3 * 2 + 3
        operand = tiling_footprint(analysis, [1]).operands[0]
        tiles = [parameter_tile(computation, 0, pid, [v]) for pid in range(3) for v in range(2)]
        assert (operand.bytes_per_tile, operand.bytes_moved) == (4 * max(map(len, tiles)), 4 * sum(map(len, tiles)) // 2)
