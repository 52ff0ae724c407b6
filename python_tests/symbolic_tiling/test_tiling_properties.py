"""Property tests (hypothesis) of the tiling analysis on generated StableHLO fusions of
small shapes: chains of elementwise, broadcast, transpose, reshape, slice, reduce,
concatenate, pad and (at most one: one runtime start) a dynamic slice (of a vector) or
a dynamic update slice (along dimension 0) on parameters of f32, bf16 or i8
(``tiling_fixtures.Fusion``).
For sampled valid tilings, against a brute-force numpy evaluation of the ops that
shares no code with the analysis:

(a) soundness: every parameter element the output tile reads lies in the parameter's
    tile at that program, and (without a dynamic update, whose maps read all of the
    operand it overwrites) the exactness counts those reads and that tile (with
    islpy, isl proves exactness 1 exactly where every tile's counts are equal);
(b) the footprint of every parameter and of the output, in a random XLA tiled layout,
    equals a count of the distinct layout tiles (padding included) of the tiles;
(c) the output's tiles cover it exactly once.

The normal suite runs a small budget; ``HLO_INDEXING_TILING_PROFILE=tiling-long``
runs the long profile (hypothesis settings profiles ``tiling`` and ``tiling-long``).
"""

from __future__ import annotations

import math
import os
from collections import Counter

import pytest

hypothesis = pytest.importorskip("hypothesis")  # test dependency (pyproject's test extra)
from hypothesis import HealthCheck, assume, currently_in_test_context, event, given, note, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from tiling_fixtures import (  # noqa: E402
    ELEMENT_BYTES,
    Fusion,
    Value,
    check_reads_and_exactness,
    check_reads_inside_tiles,
    functions_of,
    layout_tile_ids,
    output_tile,
    parameter_tile,
)

from hlo_indexing.symbolic_tiling.exactness import computation_exactness  # noqa: E402
from hlo_indexing.symbolic_tiling.footprint import tiling_footprint  # noqa: E402
from hlo_indexing.symbolic_tiling.tiled_computation import TiledComputation, tiled_computation  # noqa: E402
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion, TilingError, analyze_fusion  # noqa: E402

settings.register_profile(
    "tiling", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
settings.register_profile("tiling-long", settings.get_profile("tiling"), max_examples=1500)
PROFILE = settings.get_profile(os.environ.get("HLO_INDEXING_TILING_PROFILE", "tiling"))

#: Largest number of elements of a generated value.
MAX_ELEMENTS = 144
#: Tilings checked per generated fusion (spread over the valid ones).
TILINGS_PER_FUSION = 4


@st.composite
def fusions(draw: st.DrawFn) -> tuple[Fusion, Value]:
    """A fusion: one parameter (f32, bf16 or i8, converted to f32) through 1-4 ops,
    some of which read further parameters."""
    f = Fusion()
    shape = [draw(st.integers(1, 5)) for _ in range(draw(st.integers(1, 3)))]
    dtype = draw(st.sampled_from(["f32", "bf16", "i8"]))
    x = f.parameter(shape, dtype)
    if dtype != "f32":
        x = f.convert(x, "f32")
    for _ in range(draw(st.integers(1, 4))):
        x = draw(_step(f, x))
    return f, x


@st.composite
def _step(draw: st.DrawFn, f: Fusion, x: Value) -> Value:
    rank, shape = len(x.shape), list(x.shape)
    choices = ["elementwise", "slice", "concatenate", "pad"]
    if rank < 3 and math.prod(shape) * 4 <= MAX_ELEMENTS:
        choices.append("broadcast")
    if rank >= 2:
        choices += ["transpose", "reshape_merge", "reduce"]
    if rank < 3 and any(_divisors(n) for n in shape):
        choices.append("reshape_split")
    if rank == 1 and not f.starts:
        choices.append("dynamic_slice")
    if not f.starts:
        choices += ["update_into_buffer", "update_from_parameter"]
    op = draw(st.sampled_from(choices))
    if op == "elementwise":
        op = draw(st.sampled_from(["unary", "add_self", "add_parameter"]))
    if op == "unary":
        return f.unary(draw(st.sampled_from(["negate", "exponential"])), x)
    if op == "add_self":
        return f.binary("add", x, x)
    if op == "add_parameter":
        return f.binary("add", x, f.parameter(shape))
    if op == "broadcast":
        position = draw(st.integers(0, rank))
        out = shape[:position] + [draw(st.integers(1, 4))] + shape[position:]
        return f.broadcast(x, out, [i for i in range(rank + 1) if i != position])
    if op == "transpose":
        return f.transpose(x, draw(st.permutations(range(rank))))
    if op == "reshape_merge":
        i = draw(st.integers(0, rank - 2))
        return f.reshape(x, shape[:i] + [shape[i] * shape[i + 1]] + shape[i + 2 :])
    if op == "reshape_split":
        i = draw(st.sampled_from([i for i, n in enumerate(shape) if _divisors(n)]))
        d = draw(st.sampled_from(_divisors(shape[i])))
        return f.reshape(x, shape[:i] + [d, shape[i] // d] + shape[i + 1 :])
    if op == "reduce":
        return f.reduce(x, [draw(st.integers(0, rank - 1))])
    if op == "dynamic_slice":
        return f.dynamic_slice(x, [f.parameter([], "i32")], [draw(st.integers(1, shape[0]))])
    if op in ("update_into_buffer", "update_from_parameter"):
        # A dynamic update along dimension 0 at a runtime start (the others at 0): ``x``
        # written into a longer buffer (a scan stacking its rows), or a shorter
        # parameter written into ``x``.
        starts = [f.parameter([], "i32")] + [f.index_constant(0) for _ in range(rank - 1)]
        if op == "update_into_buffer":
            return f.dynamic_update_slice(f.parameter([shape[0] + draw(st.integers(0, 3))] + shape[1:]), x, starts)
        return f.dynamic_update_slice(x, f.parameter([draw(st.integers(1, shape[0]))] + shape[1:]), starts)
    if op == "slice":
        start = [draw(st.integers(0, n - 1)) for n in shape]
        limit = [draw(st.integers(a + 1, n)) for a, n in zip(start, shape)]
        return f.slice(x, start, limit, [draw(st.integers(1, 3)) for _ in shape])
    dim = draw(st.integers(0, rank - 1))
    if op == "pad":
        # One side only: a pad with both is read through two maps and not tiled.
        low = [0] * rank
        high = [0] * rank
        (low if draw(st.booleans()) else high)[dim] = draw(st.integers(1, 2))
        return f.pad(x, low, high)
    other = draw(st.sampled_from(["itself", "parameter", "slice"]))
    if other == "itself":
        return f.concatenate([x, x], dim)
    if other == "parameter":
        extra = shape[:dim] + [draw(st.integers(1, 3))] + shape[dim + 1 :]
        return f.concatenate([x, f.parameter(extra)], dim)
    limit = [n if i != dim else draw(st.integers(1, n)) for i, n in enumerate(shape)]
    return f.concatenate([f.slice(x, [0] * rank, limit, [1] * rank), x], dim)


def _divisors(n: int) -> list[int]:
    return [d for d in range(2, n) if n % d == 0]


@st.composite
def layouts(draw: st.DrawFn, rank: int) -> tuple[list[int], list[int]]:
    """``(minor_to_major, tile)`` of an XLA layout (no tile, or one of at most ``rank``
    dimensions)."""
    minor_to_major = list(draw(st.permutations(range(rank))))
    tile = [draw(st.sampled_from([1, 2, 4])) for _ in range(draw(st.integers(0, rank)))]
    return minor_to_major, tile


def layout_text(minor_to_major: list[int], tile: list[int]) -> str:
    tiles = f":T({','.join(map(str, tile))})" if tile else ""
    return "{" + ",".join(map(str, minor_to_major)) + tiles + "}"


def check_cover(computation: TiledComputation, shape: tuple[int, ...]) -> None:
    """(c): every output element lies in exactly one program's output tile."""
    counts: Counter[tuple[int, ...]] = Counter()
    for pid in range(computation.num_programs):
        counts.update(output_tile(computation, pid, shape))
    assert len(counts) == math.prod(shape) and set(counts.values()) == {1}, "the output tiles do not partition it"


def expected_bytes(
    tiles: list[set[tuple[int, ...]]], layout: tuple[list[int], list[int]], element_bytes: int, repeats: int = 1
) -> tuple[int, int]:
    """(max, sum) over tiles of the bytes of the layout tiles holding each tile, the
    sum averaged over ``repeats`` runtime values, in bytes rounded down (as footprints)."""
    minor_to_major, tile = layout
    units = [len(layout_tile_ids(t, minor_to_major, tile)) for t in tiles]
    unit_bytes = math.prod(tile) * element_bytes
    return max(units, default=0) * unit_bytes, sum(units) * unit_bytes // repeats


def check_footprint(
    fusion: Fusion, result: Value, analysis: TiledFusion, computation: TiledComputation, chosen: dict[int, tuple[list[int], list[int]]]
) -> None:
    """(b): per parameter (and the output, key -1 of ``chosen``) in its layout, the
    footprint's bytes per tile and bytes moved are those of the distinct layout tiles
    holding each tile's elements (runtime values averaged)."""
    sizes = list(computation.tile_sizes)
    operand_layouts = {k: layout_text(*v) for k, v in chosen.items() if k >= 0}
    footprint = tiling_footprint(analysis, sizes, layouts=operand_layouts, output_layouts={0: layout_text(*chosen[-1])})
    programs = range(computation.num_programs)
    for operand in footprint.operands:
        argument = fusion.arguments[operand.index]
        moves = any(inst.tile_offsets_indexing.runtime_vars for inst in computation.by_parameter()[operand.index])
        values = fusion.starts[0][1] if moves else range(1)
        tiles = [parameter_tile(computation, operand.index, pid, [v] if moves else []) for pid in programs for v in values]
        expected = expected_bytes(tiles, chosen[operand.index], ELEMENT_BYTES[argument.dtype], len(values))
        assert (operand.bytes_per_tile, operand.bytes_moved) == expected, (operand.name, operand.layout)
    (output,) = footprint.outputs
    tiles = [output_tile(computation, pid, result.shape) for pid in programs]
    assert (output.bytes_per_tile, output.bytes_moved) == expected_bytes(tiles, chosen[-1], 4)


def check_tilings(
    fusion: Fusion, result: Value, analysis: TiledFusion, tilings: list[tuple[int, ...]], chosen: dict[int, tuple[list[int], list[int]]]
) -> int:
    """(a), (b) and (c) for each of ``tilings`` the tiled computation accepts; how many."""
    checked = 0
    for sizes in tilings:
        if currently_in_test_context():
            note(f"tile sizes {list(sizes)}")
        try:
            computation = tiled_computation(analysis, list(sizes))
        except TilingError as exc:
            assert exc.status == "UNIMPLEMENTED", exc
            continue
        check_cover(computation, result.shape)
        if fusion.updates:  # the maps read the whole updated operand: soundness only
            check_reads_inside_tiles(fusion, result, computation, fusion.starts[0])
        else:
            exactness = computation_exactness(analysis, computation, prove=True)
            check_reads_and_exactness(fusion, result, computation, exactness, fusion.starts[0] if fusion.starts else None)
        check_footprint(fusion, result, analysis, computation, chosen)
        checked += 1
    return checked


@PROFILE
@given(fusions(), st.data())
def test_tiles_are_sound_exactly_counted_and_cover_the_output_once(generated: tuple[Fusion, Value], data: st.DataObject) -> None:
    fusion, result = generated
    note(fusion.text("fused", result))
    with functions_of(fusion.text("fused", result)) as functions:
        analysis = analyze_fusion(functions["fused"], allow_pad=True)
        assume(isinstance(analysis, TiledFusion))
        assert isinstance(analysis, TiledFusion)
        for op in sorted({line.split(" = ")[1].split()[0].split("(")[0] for line in fusion.lines}):
            event(op)  # --hypothesis-show-statistics: the ops of the fusions tiled
        tilings = analysis.valid_tilings()
        chosen = {k: data.draw(layouts(len(a.shape)), label=f"layout of {a.name}") for k, a in enumerate(fusion.arguments)}
        chosen[-1] = data.draw(layouts(len(result.shape)), label="output layout")
        checked = check_tilings(fusion, result, analysis, tilings[:: max(1, len(tilings) // TILINGS_PER_FUSION)], chosen)
        event(f"{checked} tilings checked")
        assume(checked > 0)


def padded_at_the_start() -> tuple[Fusion, Value]:
    f = Fusion()
    return f, f.pad(f.parameter([1]), [1], [0])


def padded_after_a_reshape() -> tuple[Fusion, Value]:
    f = Fusion()
    return f, f.pad(f.reshape(f.parameter([1, 4]), [1, 2, 2]), [0, 0, 0], [0, 2, 0])


def scalar_start_read_twice_beside_padding() -> tuple[Fusion, Value]:
    f = Fusion()
    padded = f.pad(f.dynamic_slice(f.parameter([1]), [f.parameter([], "i32")], [1]), [0], [1])
    return f, f.concatenate([padded, padded], 0)


@pytest.mark.parametrize("build", [padded_at_the_start, padded_after_a_reshape, scalar_start_read_twice_beside_padding])
def test_pads_found_by_the_property_test_are_tiled_soundly(build) -> None:
    # Found by hypothesis: a tile starting in a pad's low padding had no operand tile
    # (its program was left out of the offsets map's domain), a tile size above the
    # extent of a padded operand dimension gave a reshaped operand stride 4, not 2, and
    # a scalar (the dynamic slice's start) read at programs 0 and 2 of 4 was counted at
    # program 1 too (12 bytes moved, not 8: a scalar's box had no dimension to be empty in).
    fusion, result = build()
    with functions_of(fusion.text("fused", result)) as functions:
        analysis = analyze_fusion(functions["fused"], allow_pad=True)
        assert isinstance(analysis, TiledFusion), analysis
        chosen = {k: (list(range(len(a.shape))), []) for k, a in enumerate(fusion.arguments)}
        chosen[-1] = (list(range(len(result.shape))), [])
        assert check_tilings(fusion, result, analysis, analysis.valid_tilings(), chosen) >= 2


def update_partly_sliced_away() -> tuple[Fusion, Value]:
    f = Fusion()
    updated = f.dynamic_update_slice(f.parameter([3]), f.parameter([1]), [f.parameter([], "i32")])
    return f, f.slice(updated, [0], [2], [1])


def concatenated_then_sliced_at_a_start() -> tuple[Fusion, Value]:
    f = Fusion()
    x = f.parameter([1])
    return f, f.dynamic_slice(f.concatenate([x, x], 0), [f.parameter([], "i32")], [1])


@pytest.mark.parametrize("build", [update_partly_sliced_away, concatenated_then_sliced_at_a_start])
def test_runtime_starts_found_by_the_property_test(build) -> None:
    # Found by hypothesis: an update written at start 0, 1 or 2 of f32[3], of which only
    # elements 0..1 are kept, is read at starts 0 and 1 only: its bytes moved average
    # 8 bytes over the 3 starts (2, rounded down), not over the 2 starts its simplified
    # map kept (4). Two operands of a concatenate at one offset are read at every start
    # although their tiles do not move (one count per program and start).
    fusion, result = build()
    with functions_of(fusion.text("fused", result)) as functions:
        analysis = analyze_fusion(functions["fused"])
        assert isinstance(analysis, TiledFusion), analysis
        chosen = {k: (list(range(len(a.shape))), []) for k, a in enumerate(fusion.arguments)}
        chosen[-1] = (list(range(len(result.shape))), [])
        assert check_tilings(fusion, result, analysis, analysis.valid_tilings(), chosen) >= 1


def test_one_start_read_twice_in_one_map_is_one_value() -> None:
    # Row s of x written at row s of a buffer, whose rows 0..1 are kept: x is read
    # through the slice's start (s in 0..2) and the update's (its map keeps s in 0..1:
    # the row written at 2 is cut). Both are s: one variable over 0..1 in x's tile
    # offsets, which are sound, counted and cover the output once.
    f = Fusion()
    x, buffer, start = f.parameter([3, 4]), f.parameter([3, 4]), f.parameter([], "i32")
    zero = f.index_constant(0)
    updated = f.dynamic_update_slice(buffer, f.dynamic_slice(x, [start, zero], [1, 4]), [start, zero])
    result = f.slice(updated, [0, 0], [2, 4], [1, 1])
    with functions_of(f.text("fused", result)) as functions:
        analysis = analyze_fusion(functions["fused"])
        assert isinstance(analysis, TiledFusion), analysis
        chosen = {k: ([1, 0], []) if a.shape else ([], []) for k, a in enumerate(f.arguments)}
        chosen[-1] = ([1, 0], [])
        tilings = analysis.valid_tilings()
        assert check_tilings(f, result, analysis, tilings, chosen) == len(tilings)
        for sizes in tilings:
            for inst in tiled_computation(analysis, list(sizes)).by_parameter()[0]:
                assert len(inst.tile_offsets_indexing.runtime_vars) <= 1, sizes
