"""Pallas ``BlockSpec``s of a tiling, as Python text a Pallas user pastes.

A tiling's tiles are Pallas *blocks* when every tile of every fusion parameter and
output has stride 1 and offsets that are multiples of its sizes at every program id:
then ``pl.BlockSpec(block_shape, index_map)`` with ``block_shape`` the tile sizes and
``index_map`` the offsets divided by the sizes describes it. The grid has one axis per
output tiling parameter (the number of tiles along it), then one per contracting
parameter of a dot (the kernel accumulates over it); a spec whose tile does not move
along an axis ignores that index. :func:`pallas_blockspecs` returns::

    grid = (4, 1)
    in_specs = [
        pl.BlockSpec((1, 6), lambda i, j: (i, 0)),  # parameter 0: tensor<4x6xf32>
    ]
    out_specs = pl.BlockSpec((1, 6), lambda i, j: (i, 0))  # output 0: tensor<4x6xf32>

and :func:`block_index_maps` the same maps as :class:`IndexingMap` s (grid indices ->
block indices), for checking.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import compose
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.symbolic_tiling.tiled_computation import TiledInstruction, tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion

#: Names of the grid indices in the generated lambdas (``g6``, ``g7``, ... after these).
INDEX_NAMES = ("i", "j", "k", "l", "m", "n")


class NotABlockError(HloIndexingError):
    """A tile of the tiling is not a Pallas block (the message names it and why)."""


@dataclass(frozen=True)
class BlockSpec:
    """One operand's (``kind`` ``parameter``/``output``, number ``index``) block:
    ``block_shape`` and ``index_map`` (grid indices -> block indices)."""

    kind: str
    index: int
    type: str
    block_shape: tuple[int, ...]
    index_map: IndexingMap


@dataclass(frozen=True)
class PallasTiling:
    """The grid and the block specs of the parameters and outputs."""

    grid: tuple[int, ...]
    in_specs: tuple[BlockSpec, ...]
    out_specs: tuple[BlockSpec, ...]


def block_index_maps(fusion: TiledFusion, tile_sizes: Sequence[int]) -> PallasTiling:
    """The grid and block specs of flat ``tile_sizes`` (see the module docstring).
    Raises :class:`NotABlockError` when a tile is not a block, or a parameter is read
    through two different tiles; :class:`~hlo_indexing.errors.TilingError` for invalid sizes."""
    sizes = list(tile_sizes)
    computation = tiled_computation(fusion, sizes)
    parameters = fusion.parameters
    axes = [i for i, p in enumerate(parameters) if not p.contracting] + [i for i, p in enumerate(parameters) if p.contracting]
    counts = [-(-parameters[i].size // sizes[i]) for i in axes]
    n_outputs = sum(1 for p in parameters if not p.contracting)
    by_parameter: dict[int, list[TiledInstruction]] = {}
    for inst in computation.instructions:
        number = inst.node.parameter_number
        if number is not None:
            by_parameter.setdefault(number, []).append(inst)
    in_specs = []
    for number, insts in sorted(by_parameter.items()):
        distinct = {(i.tile_sizes, i.tile_strides, str(i.tile_offsets_indexing)) for i in insts}
        if len(distinct) > 1:
            raise NotABlockError(f"parameter {number} is read through {len(distinct)} different tiles: no single BlockSpec")
        in_specs.append(_spec("parameter", number, insts[0], axes, counts, n_outputs))
    out_specs = [_spec("output", k, root, axes, counts, n_outputs) for k, root in enumerate(computation.roots)]
    return PallasTiling(tuple(counts), tuple(in_specs), tuple(out_specs))


def _spec(kind: str, index: int, inst: TiledInstruction, axes: list[int], counts: list[int], n_outputs: int) -> BlockSpec:
    label = f"{kind} {index} ({inst.name})"
    offsets_map = inst.tile_offsets_indexing
    if offsets_map.runtime_vars:
        raise NotABlockError(f"{label}: its offsets depend on runtime values")
    if any(stride != 1 and size > 1 for size, stride in zip(inst.tile_sizes, inst.tile_strides)):
        raise NotABlockError(f"{label}: strides {list(inst.tile_strides)} are not 1")
    _, offsets = offsets_map.enumerate()
    block = np.maximum(np.asarray(inst.tile_sizes, np.int64), 1)
    if offsets.size and np.any(offsets % block):
        raise NotABlockError(f"{label}: offsets are not multiples of the tile sizes {list(inst.tile_sizes)}")
    ctx = offsets_map.context
    # The node's program id runs over the output axes, then its own contracting axes
    # (minor-most), as tiled_computation numbers programs.
    order = list(range(n_outputs)) + [axes.index(p) for p in inst.node.hidden]
    pid = ax.constant(0, ctx)
    for position in order:
        pid = ax.add(ax.mul(pid, counts[position]), ax.dim(position, ctx))
    grid_vars = [Variable(Interval(0, n - 1), _name(k)) for k, n in enumerate(counts)]
    grid_to_offsets = compose(IndexingMap.from_exprs(grid_vars, [pid], context=ctx), offsets_map)
    results = [ax.floordiv(e, int(b)) for e, b in zip(grid_to_offsets.results, block)]
    index_map = IndexingMap.from_exprs(grid_vars, results, context=ctx).simplify()
    return BlockSpec(kind, index, str(inst.node.value.type), inst.tile_sizes, index_map)


def _name(k: int) -> str:
    return INDEX_NAMES[k] if k < len(INDEX_NAMES) else f"g{k}"


def python_expr(expr: ir.AffineExpr, names: Sequence[str]) -> str:
    """An affine expression of grid dims as Python (``floordiv`` -> ``//``, ``mod`` -> ``%``)."""
    text = str(expr).replace(" floordiv ", " // ").replace(" mod ", " % ")
    if "ceildiv" in text or re.search(r"\bs\d+\b", text):
        raise NotABlockError(f"cannot write {expr} in Python")
    return re.sub(r"\bd(\d+)\b", lambda m: names[int(m.group(1))], text)


def pallas_blockspecs(fusion: TiledFusion, tile_sizes: Sequence[int]) -> str:
    """Python text: ``grid = (...)``, ``in_specs = [pl.BlockSpec(...), ...]`` (one per
    fusion parameter read, in parameter order) and ``out_specs`` (one spec, or a list
    for several outputs); see :func:`block_index_maps` for when it raises."""
    tiling = block_index_maps(fusion, tile_sizes)
    names = [_name(k) for k in range(len(tiling.grid))]
    args = ", ".join(names) if names else "*_"

    def spec(s: BlockSpec) -> str:
        results = [python_expr(e, names) for e in s.index_map.results]
        index = "(" + ", ".join(results) + ("," if len(results) == 1 else "") + ")"
        shape = "(" + ", ".join(map(str, s.block_shape)) + ("," if len(s.block_shape) == 1 else "") + ")"
        return f"pl.BlockSpec({shape}, lambda {args}: {index}),  # {s.kind} {s.index}: {s.type}"

    grid = "(" + ", ".join(map(str, tiling.grid)) + ("," if len(tiling.grid) == 1 else "") + ")"
    lines = [f"grid = {grid}", "in_specs = ["] + ["    " + spec(s) for s in tiling.in_specs] + ["]"]
    if len(tiling.out_specs) == 1:
        text = spec(tiling.out_specs[0])
        lines.append("out_specs = " + _drop_comma(text))
    else:
        lines += ["out_specs = ["] + ["    " + spec(s) for s in tiling.out_specs] + ["]"]
    return "\n".join(lines) + "\n"


def _drop_comma(text: str) -> str:
    code, comment = text.split("  # ", 1)
    return f"{code.rstrip(',')}  # {comment}"
