"""Tiles through ops that XLA's experimental tiling does not handle but our per-op rules
know (output to input; each rule covers every element the output tile reads):

* ``constant``, ``iota``, ``parameter``: no operands;
* ``optimization-barrier`` of one operand, ``bitcast-convert`` between types of one
  width: the tile passes through;
* ``reverse``: reversed dimensions start at ``size - 1 - last element`` (same size and
  stride, the elements in reverse order); their bound is the dimension size, since a
  tile cannot mask from below;
* ``reduce-window``: per dimension the hull of the windows of the output tile,
  ``out * stride + w * dilation - pad_low``, stride 1, bound the input size (no base
  dilation); the init values get rank-0 tiles;
* ``sort``: the whole sorted dimension, the output tile elsewhere, for every operand;
* ``dynamic-update-slice``: the operand gets the output tile, the update all of itself
  (its position is a runtime value without a tiling-space variable), the indices
  rank-0 tiles.

``gather``, ``scatter`` and ``select-and-scatter`` (data-dependent or scattered reads)
raise :class:`TilingError` (``UNIMPLEMENTED``) naming the reason.
"""

from __future__ import annotations

import re

from hlo_indexing.symbolic_tiling.experimental.convolution import window_field
from hlo_indexing.errors import TilingError
from hlo_indexing.symbolic_tiling.experimental.hlo_graph import Instruction
from hlo_indexing.symbolic_tiling.experimental.simplify import simplify
from hlo_indexing.symbolic_tiling.experimental.tile import DimTile, Tile
from hlo_indexing.symbolic_tiling.experimental.tile_expr import Expr

REFUSED = {
    "gather": "gather reads at data-dependent positions",
    "scatter": "scatter writes at data-dependent positions",
    "select-and-scatter": "select-and-scatter writes at data-dependent positions",
}


def _width(element_type: str) -> int | None:
    """Bits of an element type (``bf16`` -> 16, ``f8e4m3fn`` -> 8), None for ``pred``."""
    match = re.match(r"[a-z]*?(\d+)", element_type)
    return int(match.group(1)) if match else None


def more_ops_to_input(hlo: Instruction, tile: Tile) -> list[Tile] | None:
    """Operand tiles for the ops of the module doc; None for any other op."""
    op = hlo.opcode
    if op in ("constant", "iota", "parameter"):
        return []
    if op == "optimization-barrier" and len(hlo.operands) == 1:
        return [tile]
    if op == "bitcast-convert":
        source, target = hlo.operands[0].array, hlo.array
        if source.dims != target.dims or _width(source.element_type) != _width(target.element_type):
            raise TilingError("UNIMPLEMENTED", f"bitcast-convert {hlo.name} changes the element width")
        return [tile]
    if op in REFUSED:
        raise TilingError("UNIMPLEMENTED", f"{op} {hlo.name}: {REFUSED[op]}")
    if op == "reverse":
        reversed_dims = set(hlo.int_list("dimensions"))
        dims = []
        for axis, (d, size) in enumerate(zip(tile.dims, hlo.array.dims)):
            if axis in reversed_dims:
                last = d.offset + (d.size - 1) * d.stride
                dims.append(DimTile(simplify(Expr.const(size - 1) - last, {}), d.size, d.stride, Expr.const(size)))
            else:
                dims.append(d)
        return [tile.with_dims(dims)]
    if op == "reduce-window":
        return _reduce_window(hlo, tile)
    if op == "sort":
        axis = hlo.int_list("dimensions")[0]
        dims = list(tile.dims)
        dims[axis] = DimTile.full(hlo.array.dims[axis])
        return [tile.with_dims(dims)] * len(hlo.operands)
    if op == "dynamic-update-slice":
        update = tile.with_dims([DimTile.full(d) for d in hlo.operands[1].array.dims])
        return [tile, update] + [tile.scalar()] * (len(hlo.operands) - 2)
    return None


def _reduce_window(hlo: Instruction, tile: Tile) -> list[Tile]:
    rank = len(hlo.array.dims)
    if any(v != 1 for v in window_field(hlo, "lhs_dilate", rank, 1)):
        raise TilingError("UNIMPLEMENTED", f"reduce-window {hlo.name} with base dilation")
    sizes = window_field(hlo, "size", rank, 1)
    strides = window_field(hlo, "stride", rank, 1)
    dilations = window_field(hlo, "rhs_dilate", rank, 1)
    pads = window_field(hlo, "pad", rank, 0)
    inputs = len(hlo.operands) // 2
    dims = []
    for k, d in enumerate(tile.dims):
        offset = d.offset * strides[k] - pads[k]
        size = simplify((d.size - 1) * d.stride * strides[k] + (sizes[k] - 1) * dilations[k] + 1, {})
        dims.append(DimTile(offset, size, Expr.const(1), Expr.const(hlo.operands[0].array.dims[k])))
    return [tile.with_dims(dims)] * inputs + [tile.scalar()] * inputs
