"""``allow_pad`` (option ``allow-pad``): pads outside gemm fusions, which XLA's Triton
tiling refuses, tiled on request. Every tile of every tiling the tilings document ranks
holds what its output tile reads, enumerated by the brute-force evaluator of
``tiling_fixtures`` (which shares no code with the analysis), and the document's
exactness counts are those counts; the keyword is type-checked and refused with a
device."""

from __future__ import annotations

import itertools

import pytest
from tiling_fixtures import Fusion, Value, analysis_of, functions_of, output_tile, parameter_tile

from hlo_indexing import module_tilings
from hlo_indexing.errors import HloIndexingError, InvalidArgumentError, UnsupportedError
from hlo_indexing.symbolic_tiling.hlo_source import import_hlo
from hlo_indexing.symbolic_tiling.tile_picture import tile_picture
from hlo_indexing.symbolic_tiling.tiled_computation import tiled_computation


def padded_columns() -> tuple[Fusion, Value]:
    """``exp(p0)`` of f32[6,8] padded with 8 columns at the end."""
    f = Fusion()
    return f, f.pad(f.unary("exponential", f.parameter([6, 8])), [0, 0], [0, 8])


def padded_at_the_start_plus_a_vector() -> tuple[Fusion, Value]:
    """f32[5] padded with 3 elements in front, plus an f32[8] parameter."""
    f = Fusion()
    padded = f.pad(f.parameter([5]), [3], [0])
    return f, f.binary("add", padded, f.parameter([8]))


def padded_rows_summed() -> tuple[Fusion, Value]:
    """f32[6,5] padded to 8 columns, each row summed: a tile holds whole padded rows."""
    f = Fusion()
    return f, f.reduce(f.pad(f.parameter([6, 5]), [0, 0], [0, 3]), [1])


def reshaped_then_padded() -> tuple[Fusion, Value]:
    """f32[2,8] reshaped to [2,4,2], then padded to [2,6,2]."""
    f = Fusion()
    return f, f.pad(f.reshape(f.parameter([2, 8]), [2, 4, 2]), [0, 0, 0], [0, 2, 0])


def padded_on_every_side() -> tuple[Fusion, Value]:
    """f32[5,6] padded on both sides of both dimensions to [8,9], minus an f32[8,9]: the
    padding value is read through four maps (one per padded side), taken as one."""
    f = Fusion()
    return f, f.binary("subtract", f.pad(f.parameter([5, 6]), [1, 2], [2, 1]), f.parameter([8, 9]))


PADDED = [padded_columns, padded_at_the_start_plus_a_vector, padded_rows_summed, reshaped_then_padded,
          padded_on_every_side]


@pytest.mark.parametrize("build", PADDED)
def test_without_allow_pad_the_failure_names_the_option(build) -> None:
    fusion, result = build()
    with functions_of(fusion.text("fused", result)) as functions:
        (entry,) = module_tilings(functions.module, 1 << 20, 3)["computations"]
    assert entry["failure"] is not None and "pad is only supported in gemm fusions" in entry["failure"]
    assert "allow-pad (allow_pad=True) tiles it" in entry["failure"], entry["failure"]


@pytest.mark.parametrize("build", PADDED)
def test_every_ranked_tiling_holds_what_its_output_tiles_read(build) -> None:
    fusion, result = build()
    with functions_of(fusion.text("fused", result)) as functions:
        document = module_tilings(functions.module, 1 << 20, 100, allow_pad=True)
        assert document["allow_pad"] is True
        (entry,) = document["computations"]
        assert entry["failure"] is None and entry["error"] is None, entry
        assert entry["tilings"], entry
        analysis = analysis_of(functions["fused"], allow_pad=True)
        dependencies = fusion.dependencies(result)
        every_output_element = set(itertools.product(*(range(n) for n in result.shape)))
        for tiling in entry["tilings"]:
            computation = tiled_computation(analysis, tiling["tile_sizes"])
            assert computation.num_programs == tiling["num_tiles"]
            outputs = [output_tile(computation, pid, result.shape) for pid in range(computation.num_programs)]
            assert set().union(*outputs) == every_output_element
            assert sum(len(tile) for tile in outputs) == len(every_output_element)  # each element once
            for exactness in tiling["exactness"]:
                number = exactness["index"]
                read = held = 0
                for pid, written in enumerate(outputs):
                    reads = fusion.reads(dependencies, written, number)
                    tile = parameter_tile(computation, number, pid)
                    assert reads <= tile, (tiling["tile_sizes"], pid, sorted(reads - tile)[:4])
                    read, held = read + len(reads), held + len(tile)
                assert (exactness["read_elements"], exactness["tile_elements"]) == (read, held), tiling["tile_sizes"]


def test_a_tile_in_the_padding_reads_nothing() -> None:
    fusion, result = padded_columns()
    with functions_of(fusion.text("fused", result)) as functions:
        analysis = analysis_of(functions["fused"], allow_pad=True)
        computation = tiled_computation(analysis, [2, 8])
        # Programs are numbered major to minor: odd ones hold columns 8..15, the padding.
        assert [bool(parameter_tile(computation, 0, pid)) for pid in range(6)] == [True, False] * 3
        picture = tile_picture(functions["fused"], [2, 8], 1, allow_pad=True)
        assert picture.output.needed == {(r, c) for r in range(2) for c in range(8, 16)}
        assert picture.operands[0].needed == frozenset() and picture.operands[0].boxes == ()
        with pytest.raises(UnsupportedError, match="allow-pad"):
            tile_picture(functions["fused"], [2, 8], 1)


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_allow_pad_must_be_a_bool(bad: object) -> None:
    fusion, result = padded_columns()
    with functions_of(fusion.text("fused", result)) as functions:
        with pytest.raises(HloIndexingError, match="allow_pad must be True or False"):
            module_tilings(functions.module, allow_pad=bad)
        with pytest.raises(InvalidArgumentError, match="allow_pad must be True or False"):
            module_tilings(functions.module, allow_pad=bad, device="h100")


@pytest.mark.parametrize("device, reason", [("h100", "Triton tiling refuses a pad outside a gemm fusion"),
                                            ("tpu-v5e", "no block of the padded operand")])
def test_allow_pad_is_refused_with_a_device(device: str, reason: str) -> None:
    fusion, result = padded_columns()
    with functions_of(fusion.text("fused", result)) as functions:
        with pytest.raises(InvalidArgumentError, match=reason):
            module_tilings(functions.module, allow_pad=True, device=device)
        (entry,) = module_tilings(functions.module, device=device)["computations"]
        assert "allow-pad (allow_pad=True) tiles it" in entry["failure"]


#: One padded body in fusions of four backend configs: XLA's Triton tiling tiles the pad
#: of the two gemm kinds only; a malformed config is no gemm fusion.
GEMM_KINDS_HLO = """
HloModule kinds

padded {
  p0 = f32[6,8]{1,0} parameter(0)
  c = f32[] constant(0)
  ROOT pad = f32[6,16]{1,0} pad(p0, c), padding=0_0x0_8
}

ENTRY main {
  x = f32[6,8]{1,0} parameter(0)
  loop = f32[6,16]{1,0} fusion(x), kind=kLoop, calls=padded
  gemm = f32[6,16]{1,0} fusion(x), kind=kCustom, calls=padded, backend_config={"fusion_backend_config":{"kind":"__triton_gemm"}}
  nested = f32[6,16]{1,0} fusion(x), kind=kCustom, calls=padded, backend_config={"fusion_backend_config":{"kind":"__triton_nested_gemm_fusion"}}
  softmax = f32[6,16]{1,0} fusion(x), kind=kCustom, calls=padded, backend_config={"fusion_backend_config":{"kind":"__triton"}}
  ROOT t = (f32[6,16]{1,0}, f32[6,16]{1,0}, f32[6,16]{1,0}, f32[6,16]{1,0}) tuple(loop, gemm, nested, softmax)
}
"""


def test_pads_are_tiled_in_gemm_fusions_without_the_option() -> None:
    module = import_hlo(GEMM_KINDS_HLO)
    for document in (module_tilings(module, 1 << 20, 2), module_tilings(module, max_tilings=1, device="h100")):
        fusions = {e["name"]: e for e in document["computations"] if e["kind"] == "mhlo.fusion"}
        # One body, analysed once per rule: a refusal is not shared with the gemm fusions.
        assert {name: e["failure"] is None for name, e in fusions.items()} == {
            "loop": False, "gemm": True, "nested": True, "softmax": False}, fusions
        assert "allow-pad" in fusions["loop"]["failure"] and fusions["gemm"]["tilings"]
    fusion, result = padded_columns()
    with functions_of(fusion.text("fused", result)) as functions:  # a func.func is no gemm fusion
        (entry,) = module_tilings(functions.module, 1 << 20, 3)["computations"]
        assert entry["failure"] is not None
