"""A symbolic tiling in the text of XLA's ``SymbolicTileAnalysis::ToString()``.

Every tiled node gets a tile name ``<instruction>.tile_<k>`` (``k`` counts the nodes of
one instruction, in the analysis' order: operands before users); the top-level nodes are
printed in order, each with its operands, its HLO instruction, its symbolic tile and its
indexing map, and a node owning regions (a concatenate, a dot's operands) prints their
sizes and each region's nodes nested in ``region k { ... }``::

    concatenate.tile_0 = concatenate(add.tile_0, p1.1.tile_1)
      hlo: %concatenate = f32[2,3]{1,0} concatenate(%add, %p1), dimensions={0}
      Symbolic tile with
      offset_map: (d0, d1) -> (0, 0)
      ...
      indexing map: (d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2]
      regions sizes: [3, 1]
      region 0 {
        p0.1.tile_0 = parameter()
        ...
      }

The instruction names and their HLO text are XLA's (the caller's ``describe``: e.g. from
XLA's own parse of the HLO module, where a fusion's parameters are the operands of the
fusion instruction, as XLA's fusion adaptor sees them); this module lays them out.
"""

from __future__ import annotations

from collections.abc import Callable

from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion, TiledNode

#: ``describe(node) -> (instruction name, HLO text of the instruction)``.
Describe = Callable[[TiledNode], tuple[str, str]]


def analysis_to_string(fusion: TiledFusion, describe: Describe) -> str:
    """``fusion`` in the text of ``SymbolicTileAnalysis::ToString()`` (see the module
    docstring), names and HLO text from ``describe``."""
    described = {id(node): describe(node) for node in fusion.nodes}
    counts: dict[str, int] = {}
    names: dict[int, str] = {}
    for node in fusion.nodes:
        instruction = described[id(node)][0]
        names[id(node)] = f"{instruction}.tile_{counts.get(instruction, 0)}"
        counts[instruction] = counts.get(instruction, 0) + 1
    lines: list[str] = []
    for node in fusion.top_level():
        _node_lines(fusion, node, described, names, "", lines)
    return "".join(line + "\n" for line in lines)


def _node_lines(
    fusion: TiledFusion,
    node: TiledNode,
    described: dict[int, tuple[str, str]],
    names: dict[int, str],
    indent: str,
    lines: list[str],
) -> None:
    operands = ", ".join(names[id(o)] for o in node.operands)
    lines.append(f"{indent}{names[id(node)]} = {node.opcode}({operands})")
    inner = indent + "  "
    lines.append(f"{inner}hlo: {described[id(node)][1]}")
    lines.extend(f"{inner}{line.strip()}" for line in str(node.tile).splitlines())
    lines.append(f"{inner}indexing map: {node.indexing_map}")
    regions = fusion.regions(node)
    if regions:
        lines.append(f"{inner}regions sizes: [{', '.join(str(len(r)) for r in regions)}]")
        for k, region in enumerate(regions):
            lines.append(f"{inner}region {k} {{")
            for member in region:
                _node_lines(fusion, member, described, names, inner + "  ", lines)
            lines.append(f"{inner}}}")
