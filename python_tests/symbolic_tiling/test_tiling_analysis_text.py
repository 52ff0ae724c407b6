"""``analysis_to_string``: a tiled fusion in the layout of XLA's
``SymbolicTileAnalysis::ToString()`` (the conformance record
``ToStringPrintsInstructionsWithRegions`` checks it against XLA's exact text). Here a
dot fusion, whose operands lie in the dot's region, each tile name numbered per
instruction; the expected maps are derived by hand from the tiling parameters
``{K, M, N}``."""

from __future__ import annotations

from hlo_indexing.symbolic_tiling import hlo_source
from hlo_indexing.symbolic_tiling.analysis_text import analysis_to_string
from hlo_indexing.symbolic_tiling.tiled_fusion import analyze_fusion

DOT = """HloModule m
fused {
  a = f32[4,8] parameter(0)
  b = f32[8,2] parameter(1)
  n = f32[4,8] negate(a)
  ROOT d = f32[4,2] dot(n, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  p = f32[4,8] parameter(0)
  q = f32[8,2] parameter(1)
  ROOT f = f32[4,2] fusion(p, q), kind=kLoop, calls=fused
}
"""

DOMAIN = "domain: d0 in [0, 7], d1 in [0, 3], d2 in [0, 1]"


def tile(indent: str, sizes: str, maps: str) -> list[str]:
    return [
        f"{indent}Symbolic tile with",
        f"{indent}offset_map: (d0, d1, d2) -> (0, 0)",
        f"{indent}size_map: (d0, d1, d2) -> ({sizes})",
        f"{indent}stride_map: (d0, d1, d2) -> (1, 1)",
        f"{indent}indexing map: (d0, d1, d2) -> ({maps}), {DOMAIN}",
    ]


def test_a_dot_prints_its_operands_in_its_region():
    module = hlo_source.import_hlo(DOT)
    analysis = analyze_fusion(hlo_source.computation(module, "fused"))
    text = analysis_to_string(analysis, lambda node: (node.name, f"%{node.name} = ..."))
    expected = [
        "d.tile_0 = dot(n.tile_0, b.tile_0)",
        "  hlo: %d = ...",
        *tile("  ", "d1, d2", "d1, d2"),
        "  regions sizes: [3]",
        "  region 0 {",
        "    a.tile_0 = parameter()",
        "      hlo: %a = ...",
        *tile("      ", "d1, d0", "d1, d0"),
        "    n.tile_0 = negate(a.tile_0)",
        "      hlo: %n = ...",
        *tile("      ", "d1, d0", "d1, d0"),
        "    b.tile_0 = parameter()",
        "      hlo: %b = ...",
        *tile("      ", "d0, d2", "d0, d2"),
        "  }",
    ]
    assert text == "\n".join(expected) + "\n"


def test_tile_names_count_per_instruction():
    module = hlo_source.import_hlo(DOT)
    analysis = analyze_fusion(hlo_source.computation(module, "fused"))
    text = analysis_to_string(analysis, lambda node: ("same", ""))  # every node one instruction
    names = [line.split(" = ")[0].strip() for line in text.splitlines() if " = " in line and "hlo:" not in line]
    assert names == ["same.tile_3", "same.tile_0", "same.tile_1", "same.tile_2"]
