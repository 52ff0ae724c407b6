"""Tiled fusions, checked by enumeration on generated HLO fusions of small shapes: for
every valid tiling, the root's tiles cover its output exactly once, and every tiled
instruction's tile at every program id holds every element the root's tile reads from
that instruction (soundness of the fused tiles)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from tiling_fixtures import box, hlo_analysis

hypothesis = pytest.importorskip("hypothesis")  # test dependency (pyproject's test extra)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.symbolic_tiling.tiled_computation import TiledComputation, program_id_map, tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import (
    AnalysisFailure,
    TiledFusion,
    TilingError,
    flat_tilings_for_input_space,
)

ADD = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"


def shape_text(shape: list[int]) -> str:
    return f"f32[{','.join(map(str, shape))}]"


@st.composite
def fusions(draw: st.DrawFn) -> str:
    """HLO text of a fusion: a parameter through 1-3 shape or elementwise ops."""
    shape = [draw(st.integers(1, 6)), draw(st.integers(1, 6))]
    lines = [f"  v0 = {shape_text(shape)} parameter(0)"]
    for step in range(1, draw(st.integers(1, 3)) + 1):
        rank = len(shape)
        choices = ["negate", "add"]
        if rank == 2:
            choices += ["transpose", "reshape_flat", "reduce", "broadcast", "slice"]
        if rank == 1 and shape[0] % 2 == 0:
            choices += ["reshape_split"]
        op = draw(st.sampled_from(choices))
        prev = f"v{step - 1}"
        if op == "negate":
            body = f"negate({prev})"
        elif op == "add":
            body = f"add({prev}, {prev})"
        elif op == "transpose":
            shape = shape[::-1]
            body = f"transpose({prev}), dimensions={{1,0}}"
        elif op == "reshape_flat":
            shape = [shape[0] * shape[1]]
            body = f"reshape({prev})"
        elif op == "reshape_split":
            shape = [2, shape[0] // 2]
            body = f"reshape({prev})"
        elif op == "reduce":
            lines.append(f"  z{step} = f32[] constant(0)")
            shape = [shape[0]]
            body = f"reduce({prev}, z{step}), dimensions={{1}}, to_apply=add"
        elif op == "broadcast":
            shape = [shape[0], shape[1], 3]
            body = f"broadcast({prev}), dimensions={{0,1}}"
        else:
            stride = draw(st.integers(1, 2))
            start = draw(st.integers(0, shape[1] - 1))
            size = len(range(start, shape[1], stride))
            body = f"slice({prev}), slice={{[0:{shape[0]}:1], [{start}:{shape[1]}:{stride}]}}"
            shape = [shape[0], size]
        lines.append(f"  v{step} = {shape_text(shape)} {body}")
    lines[-1] = lines[-1].replace(f"  v{step} =", f"  ROOT v{step} =")
    entry_shape = lines[0].split(" = ")[1].split(" ")[0]
    return (
        f"HloModule m\n{ADD}\nfused {{\n" + "\n".join(lines) + "\n}\n\n"
        f"ENTRY e {{\n  p = {entry_shape} parameter(0)\n  ROOT f = {shape_text(shape)} fusion(p), kind=kLoop, calls=fused\n}}\n"
    )


def check_tiling(analysis: TiledFusion, computation: TiledComputation, root_shape: list[int]) -> None:
    root = computation.roots[0]
    covered: dict[tuple[int, ...], int] = {}
    root_tiles = {}
    for pid in range(computation.num_programs):
        offsets = root.tile_offsets_indexing.evaluate([pid])
        tile = box(offsets, root.tile_sizes, root.tile_strides, root_shape)
        root_tiles[pid] = tile
        for element in tile:
            covered[element] = covered.get(element, 0) + 1
    assert len(covered) == int(np.prod(root_shape)) and set(covered.values()) == {1}, "root tiles do not partition the output"
    for inst in computation.instructions:
        points, images = inst.node.indexing_map.enumerate()
        dims = [tuple(p) for p in points[:, : inst.node.indexing_map.num_dims].tolist()]
        reads = {}
        for d, image in zip(dims, images.tolist()):
            reads.setdefault(d, set()).add(tuple(image))
        for pid, tile in root_tiles.items():
            wanted = set().union(*(reads.get(e, set()) for e in tile)) if tile else set()
            offsets = inst.tile_offsets_indexing.evaluate([pid])
            have = box(offsets, inst.tile_sizes, inst.tile_strides)
            assert wanted <= have, f"{inst.name} at pid {pid}: reads {sorted(wanted - have)[:4]} outside its tile"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(fusions())
def test_valid_tilings_partition_the_output_and_tiles_are_sound(text: str) -> None:
    module, analysis = hlo_analysis(text, "fused")  # the module keeps its ops alive
    assume(not isinstance(analysis, AnalysisFailure))
    root_shape = [p.size for p in analysis.parameters]
    tilings = analysis.valid_tilings()
    assert all(analysis.satisfies_constraints(list(t)) for t in tilings)
    for tiling in tilings[:: max(1, len(tilings) // 6)]:
        try:
            computation = tiled_computation(analysis, list(tiling))
        except TilingError as exc:
            assert exc.status == "UNIMPLEMENTED", exc
            continue
        check_tiling(analysis, computation, root_shape)


def test_flat_tilings_are_powers_of_two_then_the_size() -> None:
    assert flat_tilings_for_input_space([5]) == [(1,), (2,), (4,), (5,)]
    assert flat_tilings_for_input_space([]) == [()]
    assert flat_tilings_for_input_space([2, 3]) == [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)]


def test_constraints_exclude_tilings_a_reshape_cannot_express() -> None:
    text = (
        "fused {\n  p0 = f32[4,6] parameter(0)\n  ROOT r = f32[24] reshape(p0)\n}\n"
        "ENTRY e {\n  p = f32[4,6] parameter(0)\n  ROOT f = f32[24] fusion(p), kind=kLoop, calls=fused\n}\n"
    )
    module, analysis = hlo_analysis(text, "fused")  # the module keeps its ops alive
    assert isinstance(analysis, TiledFusion)
    # A tile of 4 elements of the flat output is a partial row of 6: not a tile of p0.
    assert [list(t) for t in analysis.valid_tilings()] == [[1], [2], [24]]
    with pytest.raises(TilingError) as error:
        tiled_computation(analysis, [4])
    assert error.value.status == "INVALID_ARGUMENT"
    check_tiling(analysis, tiled_computation(analysis, [2]), [24])


def test_tiles_larger_than_the_dimension_of_an_expanding_reshape_are_sound() -> None:
    # XLA's ExpandingReshapeIsSupportedWithTileParamsOutsideBounds: tiles of 8 along a
    # dimension of 5; the parameter's stride is evaluated at the size clamped to 5.
    text = (
        "fused {\n  p0 = f32[20] parameter(0)\n  a = f32[20] abs(p0)\n  ROOT r = f32[4,5] reshape(a)\n}\n"
        "ENTRY e {\n  p = f32[20] parameter(0)\n  ROOT f = f32[4,5] fusion(p), kind=kCustom, calls=fused\n}\n"
    )
    module, analysis = hlo_analysis(text, "fused")  # the module keeps its ops alive
    assert isinstance(analysis, TiledFusion), analysis
    for sizes in ([1, 8], [1, 16], [2, 8]):
        if not analysis.satisfies_constraints(sizes):
            continue
        computation = tiled_computation(analysis, sizes)
        check_tiling(analysis, computation, [4, 5])  # unclamped, the stride of p0 was 2: it missed elements
        parameter = next(i for i in computation.instructions if i.name == "p0")
        assert parameter.tile_strides == (1,), (sizes, parameter.tile_strides)
    assert analysis.satisfies_constraints([1, 8])


def test_a_fusion_that_cannot_be_tiled_says_why() -> None:
    text = (
        "fused {\n  p0 = f32[63] parameter(0)\n  c = f32[] constant(0)\n  ROOT r = f32[64] pad(p0, c), padding=0_1\n}\n"
        "ENTRY e {\n  p = f32[63] parameter(0)\n  ROOT f = f32[64] fusion(p), kind=kLoop, calls=fused\n}\n"
    )
    module, analysis = hlo_analysis(text, "fused")  # the module keeps its ops alive
    assert isinstance(analysis, AnalysisFailure) and "pad" in analysis.reason


def test_runtime_variables_name_the_values_they_read() -> None:
    # Dynamic slices whose offsets are computed in the fusion (XLA's
    # AssignRuntimeVariablesToDynamicSlice): the offsets of `convert` depend on both.
    text = (
        "f {\n  p0 = f32[64] parameter(0)\n  c0 = s32[64] convert(p0)\n  slice1 = s32[1] slice(c0), slice={[0:1]}\n"
        "  off = s32[] reshape(slice1)\n  d1 = s32[20] dynamic-slice(c0, off), dynamic_slice_sizes={20}\n"
        "  slice2 = s32[1] slice(d1), slice={[1:2]}\n  off2 = s32[] reshape(slice2)\n"
        "  ROOT d2 = s32[10] dynamic-slice(d1, off2), dynamic_slice_sizes={10}\n}\n"
        "ENTRY e {\n  p0 = f32[64] parameter(0)\n  ROOT fusion = s32[10] fusion(p0), kind=kCustom, calls=f\n}\n"
    )
    module, analysis = hlo_analysis(text, "f")  # the module keeps its ops alive
    assert isinstance(analysis, TiledFusion), analysis
    computation = tiled_computation(analysis, [1])
    d1 = computation.roots[0].operands[0]
    convert = d1.operands[0]
    assert [v.name for v in d1.runtime_variables] == ["off2"]
    assert sorted(v.name for v in convert.runtime_variables) == ["off", "off2"]
    ranges = {v.name: r for v, r in zip(convert.runtime_variables, convert.tile_offsets_indexing.runtime_vars)}
    assert ranges["off"].bounds.upper == 44 and ranges["off2"].bounds.upper == 10
    for pid in range(10):
        for off, off2 in [(0, 0), (44, 10), (3, 7)]:
            values = [off if v.name == "off" else off2 for v in convert.runtime_variables]
            # convert[i] is read at pid + off2 + off (d2 reads d1 at pid + off2, d1 reads c0 at + off).
            assert convert.tile_offsets_indexing.evaluate([pid], values) == (pid + off + off2,)


#: A gather of one element per row (what XLA:CPU fuses for jnp.take_along_axis in a
#: diffrax solve): row r of the output reads x[clamp(idx[r, 0]), clamp(idx[r, 1])].
GATHER_ROWS = (
    "f {\n  x = f32[6,8] parameter(0)\n  idx = s32[6,2] parameter(1)\n"
    "  g = f32[6,1,1] gather(x, idx), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, "
    "index_vector_dim=1, slice_sizes={1,1}\n  ROOT n = f32[6,1,1] negate(g)\n}\n"
    "ENTRY e {\n  x = f32[6,8] parameter(0)\n  idx = s32[6,2] parameter(1)\n"
    "  ROOT fusion = f32[6,1,1] fusion(x, idx), kind=kLoop, calls=f\n}\n"
)


def test_a_gathers_offsets_read_per_row_are_two_values_and_tile_rows_one_by_one() -> None:
    """The gather's two runtime offsets read one indices row at two elements: two
    values (they were merged into one, reading x only on its diagonal), and they change
    with the output row, so a tile of x at one value of each holds what a program reads
    only for one row per program. Every tiling of every index array drawn: each
    program's tile of x, at the offsets its row reads, holds the element the gather
    reads (numpy)."""
    module, analysis = hlo_analysis(GATHER_ROWS, "f")  # the module keeps its ops alive
    assert isinstance(analysis, TiledFusion), analysis
    candidates = itertools.product([1, 2, 4, 6], [1], [1])
    tilings = [sizes for sizes in candidates if analysis.satisfies_constraints(list(sizes))]
    assert tilings == [(1, 1, 1)]
    computation = tiled_computation(analysis, [1, 1, 1])
    (x_tile,) = [i for i in computation.instructions if i.node.parameter_number == 0]
    assert len(x_tile.runtime_variables) == 2
    rng = np.random.default_rng(0)
    for idx in rng.integers(-2, 10, size=(20, 6, 2)):
        for row in range(6):
            element = (int(np.clip(idx[row, 0], 0, 5)), int(np.clip(idx[row, 1], 0, 7)))
            offsets = x_tile.tile_offsets_indexing.evaluate([row], list(element))
            assert box(offsets, x_tile.tile_sizes, x_tile.tile_strides) == {element}


def test_a_nested_fusion_feeding_a_dot_is_one_node() -> None:
    # XLA's AnalyseNestedFusionWithRuntimeVariables: the dot's rhs is a nested fusion
    # (abs); its tile is the one XLA gives the abs in the unnested form of the test.
    text = (
        "dot_lhs {\n  ROOT p0 = f32[2,4] parameter(0)\n}\n"
        "dot_rhs {\n  p0 = f32[5,2] parameter(0)\n  ROOT result = f32[5,2] abs(p0)\n}\n"
        "triton_gemm {\n  dot_lhs_param = f32[2,4] parameter(0)\n"
        "  lhs = f32[2,4] fusion(dot_lhs_param), kind=kCustom, calls=dot_lhs\n"
        "  rhs_param = f32[5,2] parameter(1)\n  rhs = f32[5,2] fusion(rhs_param), kind=kCustom, calls=dot_rhs\n"
        "  gemm = f32[4,5] dot(lhs, rhs), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n"
        "  off0 = s32[] parameter(2)\n  off1 = s32[] parameter(3)\n"
        "  ROOT result = f32[2,3] dynamic-slice(gemm, off0, off1), dynamic_slice_sizes={2,3}\n}\n"
        "ENTRY e {\n  p0 = f32[2,4] parameter(0)\n  p1 = f32[5,2] parameter(1)\n  p2 = s32[] parameter(2)\n"
        "  c0 = s32[] constant(0)\n  ROOT fusion = f32[2,3] fusion(p0, p1, p2, c0), kind=kCustom, calls=triton_gemm\n}\n"
    )
    module, analysis = hlo_analysis(text, "triton_gemm")  # the module keeps its ops alive
    assert isinstance(analysis, TiledFusion), analysis
    computation = tiled_computation(analysis, analysis.flat_tile_sizes({"result": [2, 4], "gemm": [8]}))
    rhs = computation.roots[0].operands[0].operands[1]
    assert (rhs.name, rhs.tile_sizes, rhs.tile_strides) == ("rhs", (4, 8), (1, 1))
    for rt0 in range(3):
        assert rhs.tile_offsets_indexing.evaluate([0], [rt0]) == (rt0, 0)


# XLA's SimpleConvolutionWithRegions (symbolic_tile_analysis_test.cc), and a 2-D
# convolution with input features: a convolution tiles as a dot does, its window
# positions and input features becoming hidden (contracting) tiling parameters.
CONV_1D = (
    "conv {\n  conv.p0 = f32[1,8,1]{2,1,0} parameter(0)\n  conv.p1 = f32[1,3,1]{2,1,0} parameter(1)\n"
    "  ROOT conv = f32[1,6,1]{2,1,0} convolution(conv.p0, conv.p1), window={size=3}, dim_labels=b0f_i0o->b0f\n}\n"
    "ENTRY main {\n  main.p0 = f32[1,8,1]{2,1,0} parameter(0)\n  main.p1 = f32[1,3,1]{2,1,0} parameter(1)\n"
    "  ROOT fusion = f32[1,6,1]{2,1,0} fusion(main.p0, main.p1), kind=kCustom, calls=conv\n}\n"
)
CONV_2D = (
    "conv {\n  p0 = f32[2,5,4,3] parameter(0)\n  p1 = f32[3,2,3,2] parameter(1)\n"
    "  ROOT conv = f32[2,3,3,2] convolution(p0, p1), window={size=3x2}, dim_labels=b01f_01io->b01f\n}\n"
    "ENTRY main {\n  a = f32[2,5,4,3] parameter(0)\n  b = f32[3,2,3,2] parameter(1)\n"
    "  ROOT fusion = f32[2,3,3,2] fusion(a, b), kind=kCustom, calls=conv\n}\n"
)

# The same with padding (SAME on x, one column after y: JAX's padded convolutions): the
# reads of the padding are no element, the map's constraints (``d0 + d4 in [1, 5]``)
# are on no result, and the first and last windows start in the padding.
CONV_2D_PADDED = (
    "conv {\n  p0 = f32[2,5,4,3] parameter(0)\n  p1 = f32[3,2,3,2] parameter(1)\n"
    "  ROOT conv = f32[2,5,4,2] convolution(p0, p1), window={size=3x2 pad=1_1x0_1}, dim_labels=b01f_01io->b01f\n}\n"
    "ENTRY main {\n  a = f32[2,5,4,3] parameter(0)\n  b = f32[3,2,3,2] parameter(1)\n"
    "  ROOT fusion = f32[2,5,4,2] fusion(a, b), kind=kCustom, calls=conv\n}\n"
)


SCALED_DOT = (
    "fusion {\n  lhs = f8e4m3fn[4,32] parameter(0)\n  rhs = f8e4m3fn[32,6] parameter(1)\n"
    "  ls = f8e8m0fnu[4,4] parameter(2)\n  rs = f8e8m0fnu[4,6] parameter(3)\n"
    "  ROOT dot = f32[4,6] scaled-dot(lhs, rhs, ls, rs), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"
    "ENTRY e {\n  a = f8e4m3fn[4,32] parameter(0)\n  b = f8e4m3fn[32,6] parameter(1)\n"
    "  c = f8e8m0fnu[4,4] parameter(2)\n  d = f8e8m0fnu[4,6] parameter(3)\n"
    "  ROOT fusion = f32[4,6] fusion(a, b, c, d), kind=kCustom, calls=fusion\n}\n"
)


def conv_1d_reads(p: dict[str, int]) -> tuple[tuple[int, ...], ...]:
    """Output (b, x, o) reads input (b, x + kx, i) and kernel (i, kx, o)."""
    return (p["b"], p["x"] + p["kx"], p["i"]), (p["i"], p["kx"], p["o"])


def conv_2d_reads(p: dict[str, int]) -> tuple[tuple[int, ...], ...]:
    """Output (b, x, y, o) reads input (b, x + kx, y + ky, i) and kernel (kx, ky, i, o)."""
    return (p["b"], p["x"] + p["kx"], p["y"] + p["ky"], p["i"]), (p["kx"], p["ky"], p["i"], p["o"])


def conv_2d_padded_reads(p: dict[str, int]) -> tuple[tuple[int, ...], ...]:
    """Output (b, x, y, o) reads input (b, x + kx - 1, y + ky, i), when inside it, and
    kernel (kx, ky, i, o)."""
    return (p["b"], p["x"] + p["kx"] - 1, p["y"] + p["ky"], p["i"]), (p["kx"], p["ky"], p["i"], p["o"])


def scaled_dot_reads(p: dict[str, int]) -> tuple[tuple[int, ...], ...]:
    """Output (m, n) reads lhs (m, k), rhs (k, n) and their scales, one per block of 8 k."""
    return (p["m"], p["k"]), (p["k"], p["n"]), (p["m"], p["k"] // 8), (p["k"] // 8, p["n"])


#: name -> (HLO, fused computation, reads of one output element at one contracting
#: point, the tiling parameters in XLA's order: contracted first, then the output's,
#: whether it needs allow_pad: XLA's tiling refuses a window cut by padding at its low end).
CONTRACTIONS = {
    "conv_1d": (CONV_1D, "conv", conv_1d_reads, ["kx", "i", "b", "x", "o"], False),
    "conv_2d": (CONV_2D, "conv", conv_2d_reads, ["kx", "ky", "i", "b", "x", "y", "o"], False),
    "conv_2d_padded": (CONV_2D_PADDED, "conv", conv_2d_padded_reads, ["kx", "ky", "i", "b", "x", "y", "o"], True),
    "scaled_dot": (SCALED_DOT, "fusion", scaled_dot_reads, ["k", "m", "n"], False),
}


def test_a_convolution_tiles_with_its_window_as_xla_names_it() -> None:
    module, analysis = hlo_analysis(CONV_1D, "conv")
    assert isinstance(analysis, TiledFusion), analysis
    assert [(p.size, p.contracting) for p in analysis.parameters] == [(3, True), (1, True), (1, False), (6, False), (1, False)]
    expected = {  # XLA's expectations, compared as relations
        "conv": "(d0, d1, d2, d3, d4) -> (d2, d3, d4)",
        "conv.p0": "(d0, d1, d2, d3, d4) -> (0, d0 + d3, 0)",
        "conv.p1": "(d0, d1, d2, d3, d4) -> (0, d0, 0)",
    }
    domain = ", domain: d0 in [0, 2], d1 in [0, 0], d2 in [0, 0], d3 in [0, 5], d4 in [0, 0]"
    for node in analysis.nodes:
        assert node.indexing_map.relation() == IndexingMap.parse(expected[node.name] + domain).relation(), node.name


@pytest.mark.parametrize("name", sorted(CONTRACTIONS))
def test_contraction_tiles_hold_what_each_program_reads(name: str) -> None:
    # For every valid tiling and program (output tile x contracting step): the operand
    # elements the program's output elements read at its contracting points lie in the
    # operands' tiles, which are exactly those elements when no parameter's tile is cut
    # by its bound.
    text, computation_name, reads_of, names, allow_pad = CONTRACTIONS[name]
    if allow_pad:
        _, refused = hlo_analysis(text, computation_name)
        assert isinstance(refused, AnalysisFailure) and "allow-pad tiles it without a device" in refused.reason, refused
    module, analysis = hlo_analysis(text, computation_name, allow_pad=allow_pad)
    assert isinstance(analysis, TiledFusion), analysis
    assert [p.contracting for p in analysis.parameters] == [n in ("k", "kx", "ky", "i") for n in names]
    tilings = analysis.valid_tilings()
    assert len(tilings) >= 12
    checked = 0
    for sizes in tilings:
        root = tiled_computation(analysis, list(sizes)).roots[0]
        for operand_index, inst in enumerate(root.operands):
            pid_map, programs = program_id_map(analysis.parameters, list(sizes), "major_to_minor", inst.node.hidden)
            shape = ir.RankedTensorType(inst.node.value.type).shape
            for pid in range(programs):
                starts = pid_map.evaluate([pid])
                ranges = [range(s, min(s + n, p.size)) for s, n, p in zip(starts, sizes, analysis.parameters)]
                reads = {reads_of(dict(zip(names, point)))[operand_index] for point in itertools.product(*ranges)}
                reads = {r for r in reads if all(0 <= c < n for c, n in zip(r, shape))}  # padding: no element
                tile = box(inst.tile_offsets_indexing.evaluate([pid]), inst.tile_sizes, inst.tile_strides, shape)
                assert reads <= tile, (sizes, pid, operand_index, sorted(reads - tile)[:3])
                if all(s + n <= p.size for s, n, p in zip(starts, sizes, analysis.parameters)):
                    assert reads == tile, (sizes, pid, operand_index)
                checked += 1
    assert checked > 100
