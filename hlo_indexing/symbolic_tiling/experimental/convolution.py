"""Convolution attributes for tiling: dimension labels and the window.

A convolution's tiling space has, after the output dimensions, one sequential
dimension per kernel spatial dimension (window order) and one for the input feature
dimension. The operand tiles (:func:`convolution_operand_tiles`):

* input: batch from the output tile, feature from the input-feature dimension, spatial
  ``k`` the hull of every position read,
  ``out * stride + kernel * dilation - pad_low``: offset
  ``out.offset * stride + kernel.offset * dilation - pad_low``, stride 1 and size
  ``(out.size - 1) * out.stride * stride + (kernel.size - 1) * dilation + 1`` (XLA keeps
  the output tile's size and stride there, which covers the reads only for kernel tiles
  of one element); bound: the input dimension;
* kernel: spatial dimensions and input feature from the sequential dimensions, output
  feature from the output tile.

Base dilation, feature or batch groups are refused (``UNIMPLEMENTED``).
"""

from __future__ import annotations

import re

from hlo_indexing.dialect_glue.op_attrs import ConvDimensions
from hlo_indexing.errors import TilingError
from hlo_indexing.symbolic_tiling.experimental.hlo_graph import Instruction
from hlo_indexing.symbolic_tiling.experimental.simplify import simplify
from hlo_indexing.symbolic_tiling.experimental.tile import DimTile, Tile
from hlo_indexing.symbolic_tiling.experimental.tile_expr import Expr


def conv_labels(hlo: Instruction) -> ConvDimensions:
    """The dimension numbers of HLO text's ``dim_labels=b01f_01io->b01f`` (the record the
    per-op analysis reads from StableHLO, :class:`~hlo_indexing.dialect_glue.op_attrs.ConvDimensions`)."""
    match = re.fullmatch(r"(\w+)_(\w+)->(\w+)", hlo.attrs.get("dim_labels", ""))
    if match is None:
        raise TilingError("UNIMPLEMENTED", f"convolution {hlo.name} without dim_labels")
    lhs, rhs, out = match.groups()

    def spatial(labels: str) -> tuple[int, ...]:
        digits = sorted((c, i) for i, c in enumerate(labels) if c.isdigit())
        return tuple(i for _, i in digits)

    return ConvDimensions(lhs.index("b"), lhs.index("f"), spatial(lhs), rhs.index("i"), rhs.index("o"),
                      spatial(rhs), out.index("b"), out.index("f"), spatial(out))


def window_field(hlo: Instruction, name: str, rank: int, default: int) -> list[int]:
    """One ``AxB`` field of ``window={...}`` (``pad`` gives the low paddings)."""
    match = re.search(rf"\b{name}=([\d_x-]+)", hlo.attrs.get("window", ""))
    if match is None:
        return [default] * rank
    return [int(part.split("_")[0]) for part in match.group(1).split("x")]


def convolution_operand_tiles(hlo: Instruction, out: Tile, kernel: list[DimTile], feature: DimTile) -> list[Tile]:
    """Input and kernel tiles for the output tile ``out``, the kernel spatial tiles and
    the input-feature tile (see module doc)."""
    labels = conv_labels(hlo)
    rank = len(labels.input_spatial)
    if (any(v != 1 for v in window_field(hlo, "lhs_dilate", rank, 1))
            or int(hlo.attrs.get("feature_group_count", "1")) != 1
            or int(hlo.attrs.get("batch_group_count", "1")) != 1):
        raise TilingError("UNIMPLEMENTED", f"convolution {hlo.name}: base dilation or grouped convolution")
    strides = window_field(hlo, "stride", rank, 1)
    dilations = window_field(hlo, "rhs_dilate", rank, 1)
    pads = window_field(hlo, "pad", rank, 0)
    lhs_dims = hlo.operands[0].array.dims
    lhs: list[DimTile | None] = [None] * len(lhs_dims)
    rhs: list[DimTile | None] = [None] * len(hlo.operands[1].array.dims)
    lhs[labels.input_batch] = out.dims[labels.output_batch]
    lhs[labels.input_feature] = feature
    rhs[labels.kernel_input_feature] = feature
    rhs[labels.kernel_output_feature] = out.dims[labels.output_feature]
    for k in range(rank):
        o, w = out.dims[labels.output_spatial[k]], kernel[k]
        offset = o.offset * strides[k] + w.offset * dilations[k] - pads[k]
        size = simplify((o.size - 1) * o.stride * strides[k] + (w.size - 1) * dilations[k] + 1, {})
        lhs[labels.input_spatial[k]] = DimTile(offset, size, Expr.const(1), Expr.const(lhs_dims[labels.input_spatial[k]]))
        rhs[labels.kernel_spatial[k]] = w
    return [out.with_dims([t for t in lhs if t is not None]), out.with_dims([t for t in rhs if t is not None])]
