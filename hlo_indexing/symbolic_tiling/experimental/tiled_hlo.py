"""The tiled HLO computation (XLA's experimental ``TiledHloComputation``): every
instruction of a fused computation with the tile it computes, for concrete tile sizes.

:func:`tile_computation` starts from the root tiles of the tiling space and propagates
each tile to the operands (:mod:`propagation`), simplifying every tile under the
tile-id bounds. Identical (instruction, tile) pairs within a region are one tiled
instruction (roots are deduplicated among themselves). Operands computed inside a loop
of their user live in a *region* of it: every operand of a dot or convolution, operand ``k`` of a
concatenate in region ``k``, the reduced/scanned inputs of a reduce or scan whose
sequential dimension takes several tiles. :meth:`TiledComputation.ordered` gives XLA's
post-order: each instruction after the producers of the runtime variables its tile uses
and after its operands of the same region; a region follows its owner.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from hlo_indexing.symbolic_tiling.experimental.hlo_graph import HloGraph, Instruction
from hlo_indexing.symbolic_tiling.experimental.propagation import propagate_to_input
from hlo_indexing.symbolic_tiling.experimental.tile import Tile
from hlo_indexing.symbolic_tiling.experimental.tiling_space import TilingSpace

LEAVES = frozenset({"parameter", "constant", "iota"})


@dataclass(eq=False)
class TiledInstruction:
    """An instruction with its tile; ``region`` is the nesting path ``((owner, index), ...)``
    and ``regions`` the operands this instruction holds in its own regions."""

    name: str
    hlo: Instruction
    tile: Tile
    output_index: int
    region: tuple[tuple["TiledInstruction", int], ...]
    operands: list["TiledInstruction"] = field(default_factory=list)
    regions: dict[int, list["TiledInstruction"]] = field(default_factory=dict)

    def to_string(self) -> str:
        """XLA's ``TiledHloInstruction::ToString``: the HLO, then the tile with variables."""
        return f"hlo: {self.hlo.text}\ntile: {self.tile.to_string()}"

    def line(self) -> str:
        """``name = opcode(operands)  tile`` as in the computation's print (a parameter
        shows its number)."""
        if self.hlo.opcode == "parameter":
            args = self.hlo.text.split("parameter(", 1)[1].split(")", 1)[0]
        else:
            args = ", ".join(o.name for o in self.operands)
        return f"{self.name} = {self.hlo.opcode}({args})  {self.tile.to_string(False)}"


@dataclass
class TiledComputation:
    """Tiled instructions in creation order, the root ones, the tiling space."""

    space: TilingSpace
    roots: list[TiledInstruction]
    root_tiles: list[Tile]
    instructions: list[TiledInstruction]

    def ordered(self) -> list[TiledInstruction]:
        """The post-order of XLA's ``SortInstructionsPostOrder`` (see module doc)."""
        producers: dict[int, TiledInstruction] = {}
        for k, var in enumerate(self.space.rt_vars):
            for inst in self.instructions:
                if inst.hlo is var.hlo and not inst.region:
                    producers[k] = inst
                    break
        out: list[TiledInstruction] = []
        done: set[int] = set()

        def visit(node: TiledInstruction) -> None:
            if id(node) in done:
                return
            done.add(id(node))
            used = sorted(int(v[3:]) for v in _variables(node.tile) if v.startswith("rt_"))
            for k in used:
                if k in producers:
                    visit(producers[k])
            for operand in node.operands:
                if operand.region == node.region:
                    visit(operand)
            out.append(node)
            for index in sorted(node.regions):
                for member in node.regions[index]:
                    visit(member)

        for root in self.roots:
            visit(root)
        return out

    def to_string(self, ordered: bool = True) -> str:
        """XLA's ``TiledHloComputation::ToString``: the tiling space, then the tiled
        instructions, each region ``region #k { ... }`` after its owner."""
        lines = [self.space.to_string(), "", "Tiled HLO:"]
        if ordered:
            top = [i for i in self.ordered() if not i.region]
        else:
            top = [i for i in self.instructions if not i.region]
        order = self.ordered() if ordered else self.instructions

        def emit(node: TiledInstruction, depth: int) -> None:
            lines.append("  " * depth + node.line())
            for index in sorted(node.regions):
                lines.append("  " * depth + f"region #{index} {{")
                path = node.region + ((node, index),)
                for member in order:
                    if member.region == path:
                        emit(member, depth + 1)
                lines.append("  " * depth + "}")

        for node in top:
            emit(node, 1)
        return "\n".join(lines)


def _variables(tile: Tile) -> set[str]:
    names: set[str] = set()
    for d in tile.dims + (tile.replica or ()):
        for e in d.exprs():
            names |= e.variables()
    return names


def _operand_regions(space: TilingSpace, hlo: Instruction) -> list[int | None]:
    """Per operand: the region of ``hlo`` it lives in, or None (the user's region)."""
    n = len(hlo.operands)
    if hlo.opcode in ("dot", "scaled-dot", "ragged-dot", "convolution"):
        return [0] * n
    if hlo.opcode == "concatenate":
        return list(range(n))
    if hlo.opcode in ("reduce", "scan"):
        looped = any(d.hlo is hlo and d.type == "sequential" and (d.tile_size or 0) < d.size
                     for d in space.dimensions)
        inputs = n // 2 if hlo.opcode == "reduce" else n - int(hlo.attrs.get("num_carries", "0"))
        return [0 if looped and k < inputs else None for k in range(n)]
    return [None] * n


def tile_computation(graph: HloGraph, space: TilingSpace, *, simplify: bool = True) -> TiledComputation:
    """Tile the computation of ``space`` (created from ``graph``, tile sizes assigned);
    ``simplify=False`` keeps the tiles as propagated (XLA's state before ``Simplify()``).

    Raises TilingError when an instruction's tile cannot be propagated."""
    def finish(tile: Tile) -> Tile:
        tile = space.concretize(tile)
        return space.simplify_tile(tile) if simplify else tile

    created: list[TiledInstruction] = []
    counts: dict[int, int] = {}
    keys: dict[tuple, TiledInstruction] = {}
    queue: deque[TiledInstruction] = deque()

    def get(hlo: Instruction, tile: Tile, output_index: int,
            region: tuple[tuple[TiledInstruction, int], ...], scope: str) -> TiledInstruction:
        key = (scope, tuple((id(o), i) for o, i in region), id(hlo), output_index, tile.to_string())
        if key in keys:
            return keys[key]
        node = TiledInstruction(hlo.name, hlo, tile, output_index, region)
        keys[key] = node
        created.append(node)
        queue.append(node)
        return node

    root_tiles = [finish(t) for t in space.root_tiles()]
    roots = []
    seen_outputs: dict[int, int] = {}
    for hlo, tile in zip(space.roots, root_tiles):
        index = seen_outputs.get(id(hlo), -1) + 1 if isinstance(hlo.shape, tuple) and hlo.opcode != "tuple" else 0
        seen_outputs[id(hlo)] = index
        roots.append(get(hlo, tile, index, (), "root"))
    while queue:
        node = queue.popleft()
        hlo = node.hlo
        if hlo.opcode in LEAVES or not hlo.operands:
            continue
        tiles = propagate_to_input(space, hlo, node.tile, node.output_index)
        next_index = int(hlo.attrs.get("index", "0")) if hlo.opcode == "get-tuple-element" else 0
        for operand, region_index, tile in zip(hlo.operands, _operand_regions(space, hlo), tiles):
            region = node.region if region_index is None else node.region + ((node, region_index),)
            child = get(operand, finish(tile), next_index, region, "operand")
            node.operands.append(child)
            if region_index is not None:
                members = node.regions.setdefault(region_index, [])
                if child not in members:
                    members.append(child)
    computation = TiledComputation(space, roots, root_tiles, created)
    counts.clear()
    for node in computation.ordered():  # XLA numbers the tiles of an HLO in printed order
        k = counts.get(id(node.hlo), 0)
        counts[id(node.hlo)] = k + 1
        node.name = f"{node.hlo.name}.tile_{k}"
    return computation
