"""Tile propagation through one HLO instruction (XLA's experimental
``PropagateTileToInput`` / ``PropagateTileToOutput``).

``propagate_to_input(space, hlo, output_tile, output_index)`` gives one tile per operand
covering every element the output tile reads; ``propagate_to_output(space, hlo,
input_tile, input_index)`` one tile per output holding what the operand tile feeds.
Rules per opcode: elementwise ops (and all-reduce, map) pass the tile through;
broadcast, transpose, slice, dynamic slice (offsets become runtime variables), pad
(edge padding only), concatenate (piecewise, with XLA's divisibility checks), dot,
scaled dot (scales by block), ragged dot, reduce, scan, all-gather (the gathered
dimension splits into a replica-id tile), get-tuple-element, convolution (see
:mod:`convolution`), reshape and bitcast (as
reshape or transpose, see :mod:`reshape_propagation`); the ops of :mod:`more_ops`
(beyond XLA: reverse, reduce-window, sort, dynamic-update-slice, ...). Reduced and contracted
dimensions take the tile of their tiling-space dimension. Anything else raises
:class:`TilingError` (``UNIMPLEMENTED``), as XLA returns an error status.
"""

from __future__ import annotations

from hlo_indexing.symbolic_tiling.experimental.convolution import conv_labels, convolution_operand_tiles
from hlo_indexing.errors import TilingError
from hlo_indexing.symbolic_tiling.experimental.hlo_graph import Instruction
from hlo_indexing.symbolic_tiling.experimental.more_ops import more_ops_to_input
from hlo_indexing.symbolic_tiling.experimental.reshape_propagation import is_multiple_of, propagate_through_reshape
from hlo_indexing.symbolic_tiling.experimental.simplify import simplify
from hlo_indexing.symbolic_tiling.experimental.tile import DimTile, Tile, rt
from hlo_indexing.symbolic_tiling.experimental.tile_expr import Expr
from hlo_indexing.symbolic_tiling.experimental.tiling_space import TilingSpace

ELEMENTWISE = frozenset("""
abs add and atan2 cbrt ceil clamp compare complex convert copy cos divide erf exp exponential
exponential-minus-one expm1 floor imag is-finite log log-plus-one logistic maximum minimum
multiply negate not or popcnt power real reduce-precision remainder round-nearest-afz
round-nearest-even rsqrt select shift-left shift-right-arithmetic shift-right-logical sign
sin sqrt subtract tan tanh xor all-reduce map stochastic-convert count-leading-zeros
""".split())


def _unimplemented(direction: str, hlo: Instruction) -> TilingError:
    return TilingError("UNIMPLEMENTED", f"{direction} tile propagation not implemented for {hlo.opcode}")


def _concatenate_checks(space: TilingSpace, hlo: Instruction, offset: Expr, size: Expr, axis: int) -> None:
    sizes = [o.array.dims[axis] for o in hlo.operands]
    base = offset.substitute({f"tid_{d.index}": 0 for d in space.dimensions})
    if not base.is_const or not size.is_const:
        return  # XLA records divisibility constraints on the tiling space here
    tile = size.value
    start, acc = 0, 0
    if base.value:
        while start < len(sizes) and base.value >= acc + sizes[start]:
            acc += sizes[start]
            start += 1
        if start >= len(sizes):
            raise TilingError("FAILED_PRECONDITION", "Tiling propagation rejected for Concatenate: The base offset "
                              f"{base.value} falls completely outside the total concatenate dimension size {acc}")
        step = simplify(offset - base.value, {})  # canonical: constants cancel
        if not is_multiple_of(step, tile):
            raise TilingError("FAILED_PRECONDITION", "Tiling propagation rejected for Concatenate: The variable "
                              f"step expression '{step}' must be a clean multiple of its tile size {tile}")
        remaining = acc + sizes[start] - base.value
        if start < len(sizes) - 1 and remaining % tile:
            raise TilingError("FAILED_PRECONDITION", "Tiling propagation rejected for Concatenate: The remaining "
                              f"dimension size {remaining} in the concatenate operand {start} must be a clean "
                              f"multiple of its tile size {tile}")
        first = start + 1
    else:
        if not is_multiple_of(offset, tile):
            raise TilingError("FAILED_PRECONDITION", "Tiling propagation rejected for Concatenate: The tile offset "
                              f"expression '{offset}' must be a clean multiple of its tile size {tile}")
        first = 0
    for k in range(first, len(sizes) - 1):
        if sizes[k] % tile:
            raise TilingError("FAILED_PRECONDITION", "Tiling propagation rejected for Concatenate: The operand "
                              f"dimension size {sizes[k]} in the concatenate dimension must be a clean multiple "
                              f"of its tile size {tile}")


def _slice_tile(tile: Tile, starts: list[Expr], strides: list[int]) -> Tile:
    return tile.with_dims([
        DimTile(start + d.offset * step, d.size, d.stride * step, d.upper_bound * step + start)
        for d, start, step in zip(tile.dims, starts, strides)])


def _constant_value(hlo: Instruction) -> int | None:
    if hlo.opcode != "constant" or hlo.array.dims or hlo.literal is None:
        return None
    try:
        return int(float(hlo.literal))
    except ValueError:
        return None


def _dot_tiles(space: TilingSpace, hlo: Instruction, out: Tile) -> tuple[list[DimTile], list[DimTile]]:
    lhs_shape, rhs_shape = hlo.operands[0].array.dims, hlo.operands[1].array.dims
    lb, rb = hlo.int_list("lhs_batch_dims"), hlo.int_list("rhs_batch_dims")
    lc, rc = hlo.int_list("lhs_contracting_dims"), hlo.int_list("rhs_contracting_dims")
    lhs: list[DimTile | None] = [None] * len(lhs_shape)
    rhs: list[DimTile | None] = [None] * len(rhs_shape)
    k = 0
    for a, b in zip(lb, rb):
        lhs[a] = rhs[b] = out.dims[k]
        k += 1
    for a in range(len(lhs_shape)):
        if a not in lb and a not in lc:
            lhs[a] = out.dims[k]
            k += 1
    for b in range(len(rhs_shape)):
        if b not in rb and b not in rc:
            rhs[b] = out.dims[k]
            k += 1
    for a, b in zip(lc, rc):
        lhs[a] = rhs[b] = space.dim_tile(space.dimension(hlo, k))
        k += 1
    return [t for t in lhs if t is not None], [t for t in rhs if t is not None]


def _scale_tile(scale: tuple[int, ...], operand: tuple[int, ...], tile: Tile) -> Tile:
    dims = []
    for d, scale_size, operand_size in zip(tile.dims, scale, operand):
        if scale_size == operand_size:
            dims.append(d)
            continue
        block = operand_size // scale_size
        first = d.offset.floordiv(block)
        last = (d.offset + (d.size - 1) * d.stride).floordiv(block)
        dims.append(DimTile(first, last - first + 1, Expr.const(1), d.upper_bound.floordiv(block)))
    return tile.with_dims(dims)


def _ragged_dot(space: TilingSpace, hlo: Instruction, out: Tile) -> list[Tile]:
    lhs_shape, rhs_shape = hlo.operands[0].array.dims, hlo.operands[1].array.dims
    lb, rb = hlo.int_list("lhs_batch_dims"), hlo.int_list("rhs_batch_dims")
    lc, rc = hlo.int_list("lhs_contracting_dims"), hlo.int_list("rhs_contracting_dims")
    ragged = hlo.int_list("lhs_ragged_dims")[0]
    rank = len(hlo.array.dims)
    lhs: list[DimTile | None] = [None] * len(lhs_shape)
    rhs: list[DimTile | None] = [None] * len(rhs_shape)
    lhs_nc = [a for a in range(len(lhs_shape)) if a not in lb and a not in lc]
    if ragged in lb:
        raise TilingError("UNIMPLEMENTED", "ragged dot with a ragged batch dimension")
    group_size = rt(space.rt_var(hlo, 2).index)
    if ragged not in lc:  # ragged non-contracting: output (batch, M, N)
        groups = hlo.int_list("rhs_group_dims")
        rhs_nc = [b for b in range(len(rhs_shape)) if b not in rb and b not in rc and b not in groups]
        g_tile = space.dim_tile(space.dimension(hlo, rank))
        k_tiles = [space.dim_tile(space.dimension(hlo, rank + 1 + i)) for i in range(len(lc))]
        for i, (a, b) in enumerate(zip(lb, rb)):
            lhs[a] = rhs[b] = out.dims[i]
        k = len(lb)
        for a in lhs_nc:
            m = out.dims[k]
            lhs[a] = DimTile(m.offset, m.size, m.stride, group_size)
            k += 1
        for b in rhs_nc:
            rhs[b] = out.dims[k]
            k += 1
        for g in groups:
            rhs[g] = g_tile
        for a, b, t in zip(lc, rc, k_tiles):
            lhs[a] = rhs[b] = t
        gs = [out.dims[i] for i in range(len(lb))] + [g_tile]
    else:  # ragged contracting: output (G, batch, K, N)
        rhs_nc = [b for b in range(len(rhs_shape)) if b not in rb and b not in rc]
        m_tile = space.dim_tile(space.dimension(hlo, rank))
        m_tile = DimTile(m_tile.offset, m_tile.size, m_tile.stride, group_size)
        for i, (a, b) in enumerate(zip(lb, rb)):
            lhs[a] = rhs[b] = out.dims[1 + i]
        k = 1 + len(lb)
        for a in lhs_nc:
            lhs[a] = out.dims[k]
            k += 1
        for b in rhs_nc:
            rhs[b] = out.dims[k]
            k += 1
        for a, b in zip(lc, rc):
            lhs[a] = rhs[b] = m_tile
        gs = [out.dims[0]]
    return [out.with_dims([t for t in lhs if t is not None]), out.with_dims([t for t in rhs if t is not None]),
            out.with_dims(gs)]


def _bitcast_kind(hlo: Instruction) -> tuple[str, list[int]]:
    """("transpose", permutation) or ("reshape", []) for a bitcast, or TilingError."""
    source, target = hlo.operands[0].array, hlo.array
    s_major = list(reversed(source.minor_to_major))
    t_major = list(reversed(target.minor_to_major))
    if [source.dims[d] for d in s_major] == [target.dims[d] for d in t_major] and len(source.dims) == len(target.dims):
        perm = [0] * len(target.dims)  # output dim t_major[k] reads operand dim s_major[k]
        for k in range(len(t_major)):
            perm[t_major[k]] = s_major[k]
        return "transpose", perm
    if s_major == sorted(s_major) and t_major == sorted(t_major):
        return "reshape", []
    raise TilingError("UNIMPLEMENTED", f"bitcast {hlo.name} is neither a reshape nor a transpose")


def _transpose_to_input(tile: Tile, perm: list[int]) -> Tile:
    dims: list[DimTile | None] = [None] * len(perm)
    for d, p in enumerate(perm):
        dims[p] = tile.dims[d]
    return tile.with_dims([t for t in dims if t is not None])


def _transpose_to_output(tile: Tile, perm: list[int]) -> Tile:
    return tile.with_dims([tile.dims[p] for p in perm])


def propagate_to_input(space: TilingSpace, hlo: Instruction, output_tile: Tile, output_index: int = 0) -> list[Tile]:
    """One tile per operand of ``hlo`` covering what ``output_tile`` (of output
    ``output_index``) reads. Raises TilingError (with XLA's status code) when unsupported."""
    op = hlo.opcode
    tile = output_tile
    if op in ELEMENTWISE:
        return [tile] * len(hlo.operands)
    if op == "get-tuple-element":
        return [tile]
    if op == "broadcast":
        return [tile.with_dims([tile.dims[d] for d in hlo.int_list("dimensions")])]
    if op == "transpose":
        return [_transpose_to_input(tile, hlo.int_list("dimensions"))]
    if op == "slice":
        ranges = [part.split(":") for part in hlo.attrs["slice"].strip("{}").replace("[", "").split("]")
                  if part.strip(", ")]
        starts = [Expr.const(int(r[0].strip(", "))) for r in ranges]
        steps = [int(r[2]) if len(r) > 2 else 1 for r in ranges]
        return [_slice_tile(tile, starts, steps)]
    if op == "dynamic-slice":
        starts = []
        for axis in range(len(tile.dims)):
            var = space.rt_var(hlo, axis + 1)
            value = _constant_value(hlo.operands[axis + 1])
            starts.append(Expr.const(min(max(value, var.bounds[0]), var.bounds[1])) if value is not None
                          else rt(var.index))
        return [_slice_tile(tile, starts, [1] * len(tile.dims))] + [tile.scalar()] * (len(hlo.operands) - 1)
    if op == "pad":
        config = [part.split("_") for part in hlo.attrs["padding"].split("x")]
        dims = []
        for d, part, size in zip(tile.dims, config, hlo.operands[0].array.dims):
            if len(part) > 2 and int(part[2]) != 0:
                raise TilingError("UNIMPLEMENTED", "Can't propagate tile to input of pad op with interior padding.")
            dims.append(DimTile(d.offset - int(part[0]), d.size, d.stride, Expr.const(size)))
        return [tile.with_dims(dims), tile.scalar()]
    if op == "concatenate":
        axis = hlo.int_list("dimensions")[0]
        _concatenate_checks(space, hlo, tile.dims[axis].offset, tile.dims[axis].size, axis)
        out, start = [], 0
        bound = tile.dims[axis].upper_bound
        for operand in hlo.operands:
            size = operand.array.dims[axis]
            dims = list(tile.dims)
            d = dims[axis]
            dims[axis] = DimTile(d.offset - start, d.size, d.stride, (bound - start).min(size).max(0))
            out.append(tile.with_dims(dims))
            start += size
        return out
    if op == "dot":
        lhs, rhs = _dot_tiles(space, hlo, tile)
        return [tile.with_dims(lhs), tile.with_dims(rhs)]
    if op == "scaled-dot":
        lhs, rhs = _dot_tiles(space, hlo, tile)
        shapes = [o.array.dims for o in hlo.operands]
        lhs_tile, rhs_tile = tile.with_dims(lhs), tile.with_dims(rhs)
        return [lhs_tile, rhs_tile, _scale_tile(shapes[2], shapes[0], lhs_tile),
                _scale_tile(shapes[3], shapes[1], rhs_tile)]
    if op == "ragged-dot":
        return _ragged_dot(space, hlo, tile)
    if op == "convolution":
        rank = len(hlo.array.dims)
        spatial = len(conv_labels(hlo).input_spatial)
        kernel = [space.dim_tile(space.dimension(hlo, rank + k)) for k in range(spatial)]
        feature = space.dim_tile(space.dimension(hlo, rank + spatial))
        return convolution_operand_tiles(hlo, tile, kernel, feature)
    if op == "reduce":
        reduced = hlo.int_list("dimensions")
        rank = len(hlo.array.dims)
        dims, k = [], 0
        for a in range(len(hlo.operands[0].array.dims)):
            if a in reduced:
                dims.append(space.dim_tile(space.dimension(hlo, rank + reduced.index(a))))
            else:
                dims.append(tile.dims[k])
                k += 1
        n = len(hlo.operands) // 2
        return [tile.with_dims(dims)] * n + [tile.scalar()] * n
    if op == "scan":
        carries = int(hlo.attrs.get("num_carries", "0"))
        inputs = len(hlo.operands) - carries
        if output_index >= inputs:
            raise TilingError("INVALID_ARGUMENT", f"scan {hlo.name}: tiles of carry output {output_index} "
                              "cannot be propagated to the inputs")
        axes = hlo.int_list("dimensions")
        carry = tile.with_dims([d for i, d in enumerate(tile.dims) if i not in axes])
        return [tile] * inputs + [carry] * carries
    if op == "all-gather":
        axis = hlo.int_list("dimensions")[0]
        size = hlo.operands[0].array.dims[axis]
        groups = hlo.attrs.get("replica_groups", "{}")
        group = groups.strip("{}").split("},{")[0]
        replicas = len([x for x in group.split(",") if x.strip()]) or 1
        dims = list(tile.dims)
        d = dims[axis]
        dims[axis] = DimTile(d.offset.mod(size), d.size, d.stride, Expr.const(size))
        replica = (DimTile.of(d.offset.floordiv(size), 1, 1, replicas),)
        return [Tile(tile.num_dims, tile.num_rt, tuple(dims), replica)]
    if op == "reshape":
        return [propagate_through_reshape(tile, hlo.array.dims, hlo.operands[0].array.dims)]
    if op == "bitcast":
        kind, perm = _bitcast_kind(hlo)
        if kind == "transpose":
            return [_transpose_to_input(tile, perm)]
        return [propagate_through_reshape(tile, hlo.array.dims, hlo.operands[0].array.dims)]
    more = more_ops_to_input(hlo, tile)
    if more is not None:
        return more
    raise _unimplemented("Output to input", hlo)


def propagate_to_output(space: TilingSpace, hlo: Instruction, input_tile: Tile, input_index: int = 0) -> list[Tile]:
    """One tile per output of ``hlo`` holding what ``input_tile`` (of operand
    ``input_index``) feeds. Raises TilingError when unsupported."""
    op = hlo.opcode
    tile = input_tile
    if op in ELEMENTWISE:
        return [tile]
    if op == "broadcast":
        kept = hlo.int_list("dimensions")
        return [tile.with_dims([tile.dims[kept.index(d)] if d in kept else DimTile.full(size)
                                for d, size in enumerate(hlo.array.dims)])]
    if op == "transpose":
        return [_transpose_to_output(tile, hlo.int_list("dimensions"))]
    if op == "reduce":
        if input_index >= len(hlo.operands) // 2:
            raise TilingError("UNIMPLEMENTED", "Input to output tile propagation not implemented from reduction "
                              "init operands.")
        reduced = hlo.int_list("dimensions")
        out = tile.with_dims([d for i, d in enumerate(tile.dims) if i not in reduced])
        return [out] * (len(hlo.operands) // 2)
    if op == "concatenate":
        axis = hlo.int_list("dimensions")[0]
        start = sum(o.array.dims[axis] for o in hlo.operands[:input_index])
        dims = list(tile.dims)
        d = dims[axis]
        dims[axis] = DimTile(d.offset + start, d.size, d.stride, d.upper_bound + start)
        return [tile.with_dims(dims)]
    if op == "get-tuple-element":
        return [tile]
    if op == "scan":
        axes = hlo.int_list("dimensions")
        carries = int(hlo.attrs.get("num_carries", "0"))
        if input_index >= len(hlo.operands) - carries:
            raise TilingError("INVALID_ARGUMENT", f"scan {hlo.name}: tiles of carry operand {input_index} "
                              "cannot be propagated to the outputs")
        outputs = len(hlo.shape) if isinstance(hlo.shape, tuple) else 1
        carry = tile.with_dims([d for i, d in enumerate(tile.dims) if i not in axes])
        return [tile] * (outputs - carries) + [carry] * carries
    if op == "reshape":
        return [propagate_through_reshape(tile, hlo.operands[0].array.dims, hlo.array.dims)]
    if op == "bitcast":
        kind, perm = _bitcast_kind(hlo)
        if kind == "transpose":
            return [_transpose_to_output(tile, perm)]
        return [propagate_through_reshape(tile, hlo.operands[0].array.dims, hlo.array.dims)]
    raise _unimplemented("Input to output", hlo)
