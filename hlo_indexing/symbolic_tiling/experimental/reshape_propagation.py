"""Tiles through reshapes (and reshape-like bitcasts).

The shapes are split into groups of *significant* dimensions (size > 1) with equal
element counts; size-1 dimensions only carry offsets. Per group:

* one dimension on each side: the tile is copied;
* collapse (several -> one): the dimensions whose tile has a size other than 1 are the
  *active* ones. One active dimension ``j`` gives ``size = size_j``,
  ``stride = stride_j * flat_j`` (a strided tile); several must be adjacent, at most
  one of them (the innermost) with a stride other than 1, and every one after the first
  must span its dimension (``size * stride`` = the dimension, from an offset below the
  stride: all of it, or every ``stride``-th element): the elements are then one
  progression of ``prod(size)`` elements, ``stride_last * flat_last`` apart;
* expand (one -> several): a stride-1 tile fills the inner target dimensions fully and at
  most one partially; a strided tile must step by the flat stride of one target
  dimension. Symbolic sizes get whole-dimension tiles (covering, not exact);
* anything else (m -> n) is refused.

Offsets are linearised (``sum offset_i * flat_i``) or delinearised
(``(offset / flat_i) mod dim_i``). Errors are :class:`TilingError` with code
``UNIMPLEMENTED`` and XLA's wording.
"""

from __future__ import annotations

import math

from hlo_indexing.errors import TilingError
from hlo_indexing.symbolic_tiling.experimental.tile import DimTile, Tile
from hlo_indexing.symbolic_tiling.experimental.tile_expr import Expr


def _groups(source: tuple[int, ...], target: tuple[int, ...]) -> list[tuple[list[int], list[int]]]:
    """Groups of significant dimensions with equal products (None if the shapes differ)."""
    s = [i for i, d in enumerate(source) if d > 1]
    t = [i for i, d in enumerate(target) if d > 1]
    groups = []
    i = j = 0
    while i < len(s) or j < len(t):
        gs, gt = [s[i]], [t[j]]
        ps, pt = source[s[i]], target[t[j]]
        i, j = i + 1, j + 1
        while ps != pt:
            if ps < pt:
                gs.append(s[i])
                ps *= source[s[i]]
                i += 1
            else:
                gt.append(t[j])
                pt *= target[t[j]]
                j += 1
        groups.append((gs, gt))
    return groups


def _const(e: Expr) -> int | None:
    return e.value if e.is_const else None


def _flat(dims: list[int]) -> list[int]:
    out, acc = [], 1
    for d in reversed(dims):
        out.append(acc)
        acc *= d
    return list(reversed(out))


def _positive_stride(tile: DimTile) -> int:
    value = _const(tile.stride)
    if value is None or value <= 0:
        raise TilingError("UNIMPLEMENTED", f"Expect constant positive source tile stride. Got: {tile.stride}")
    return value


def _collapse(tiles: list[DimTile], dims: list[int]) -> DimTile:
    for t in tiles[:-1]:
        _positive_stride(t)
    flat = _flat(dims)
    active = [k for k, t in enumerate(tiles) if _const(t.size) != 1]
    offset: Expr = Expr.const(0)
    for k, t in enumerate(tiles):
        offset = offset + t.offset * flat[k]
    if len(active) <= 1:
        j = active[0] if active else len(tiles) - 1
        rest: Expr = Expr.const(0)
        for k, t in enumerate(tiles):
            if k != j:
                rest = rest + t.offset * flat[k]
        return DimTile(offset, tiles[j].size, tiles[j].stride * flat[j], rest + tiles[j].upper_bound * flat[j])
    strided = [k for k in active if _const(tiles[k].stride) != 1]
    if len(strided) > 1:
        raise TilingError("UNIMPLEMENTED", "At most one dimension can have stride >1")
    j, last = active[0], active[-1]
    if strided and strided[0] != last:
        raise TilingError("UNIMPLEMENTED", f"only the strided dimension {strided[0]} can have size > 1")
    # Every active dimension after the first spans its dimension, stepping by its
    # stride from an offset below it (the innermost may step: 0, 2 of 4 with stride 2)
    # and with no dimension between them: the elements are one progression.
    for k in active[1:]:
        count, step, start = _const(tiles[k].size), _const(tiles[k].stride), _const(tiles[k].offset)
        if count is None or step is None or count * step != dims[k] or k - 1 not in active:
            raise TilingError("UNIMPLEMENTED", "Multiple dimensions are partially tiled")
        if step != 1 and (start is None or not 0 <= start < step or _const(tiles[k].upper_bound) != dims[k]):
            raise TilingError("UNIMPLEMENTED", "Multiple dimensions are partially tiled")  # a step must start below it, unmasked
    size = tiles[j].size
    for k in active[1:]:
        size = size * tiles[k].size
    stride = tiles[last].stride * flat[last]
    if (_const(tiles[j].upper_bound) == dims[j] and _const(tiles[j].size) and dims[j] % tiles[j].size.value == 0
            and _const(stride) == 1):
        return DimTile(offset, size, stride, offset + size)  # contiguous tiles never cross the bound
    rest = Expr.const(0)
    for k in range(len(tiles)):
        if k != j:
            rest = rest + tiles[k].offset * flat[k]
    return DimTile(offset, size, stride, rest + tiles[j].upper_bound * flat[j])


def _stays_inside(offset: Expr, flat: int, size: int, dim: int) -> bool:
    """True when ``size`` consecutive elements from ``offset / flat`` never wrap ``dim``."""
    if offset.is_const:
        return (offset.value // flat) % dim + size <= dim
    return dim % size == 0 and is_multiple_of(offset, size * flat)


def is_multiple_of(e: Expr, factor: int) -> bool:
    """True when ``e`` is a multiple of ``factor`` for all values (structural check;
    every integer expression is a multiple of 1)."""
    if factor == 1:
        return True
    if e.is_const:
        return e.value % factor == 0
    if e.op == "add" and e.lhs is not None and e.rhs is not None:
        return is_multiple_of(e.lhs, factor) and is_multiple_of(e.rhs, factor)
    if e.op == "mul" and e.lhs is not None and e.rhs is not None:
        return is_multiple_of(e.lhs, factor) or is_multiple_of(e.rhs, factor)
    return False


def _split(offset: Expr, flat: list[int], dims: list[int], k: int) -> Expr:
    part = offset.floordiv(flat[k])
    return part if k == 0 else part.mod(dims[k])


def _expand(tile: DimTile, dims: list[int], source_shape: tuple[int, ...],
            target_shape: tuple[int, ...]) -> list[DimTile]:
    stride = _positive_stride(tile)
    size = _const(tile.size)
    flat = _flat(dims)
    if size is None:
        return [DimTile.full(d) for d in dims]
    sizes = [1] * len(dims)
    if stride > 1:
        if stride not in flat:
            raise TilingError("UNIMPLEMENTED", f"source stride {stride} is not the flat stride of a target dimension")
        j = flat.index(stride)
        sizes[j] = size
        if j > 0 and size > 1 and not _stays_inside(tile.offset, flat[j], size, dims[j]):
            raise TilingError("UNIMPLEMENTED", f"the strided tile of {size} elements may cross the boundary of "
                              f"target dimension {j} (size {dims[j]})")
    else:
        remaining = size
        for k in reversed(range(len(dims))):
            if remaining >= dims[k] and remaining % dims[k] == 0 and k > 0:
                sizes[k] = dims[k]
                remaining //= dims[k]
                continue
            if remaining > dims[k] and k > 0:
                raise TilingError("UNIMPLEMENTED", _non_contiguous(tile, size, dims, flat, source_shape, target_shape))
            sizes[k] = remaining
            if k > 0 and 1 < remaining < dims[k] and not _stays_inside(tile.offset, flat[k], remaining, dims[k]):
                raise TilingError("UNIMPLEMENTED", f"the tile of {remaining} elements may cross the boundary of "
                                  f"target dimension {k} (size {dims[k]}): not a tile of the target shape")
            break
    out = []
    for k, d in enumerate(dims):
        offset = _split(tile.offset, flat, dims, k)
        out.append(DimTile(offset, Expr.const(sizes[k]), Expr.const(1), offset + sizes[k]))
    return out


def _non_contiguous(tile: DimTile, size: int, dims: list[int], flat: list[int],
                    source_shape: tuple[int, ...], target_shape: tuple[int, ...]) -> str:
    """XLA's message for an expand that would need several partial dimensions."""
    names = {v: Expr.var("v" + v.split("_")[1]) for v in tile.offset.variables() if v.startswith("tid_")}
    source = tile.substitute(names)
    inner = math.gcd(size, dims[-1])
    sizes = [1] * len(dims)
    sizes[-1] = inner
    sizes[-2] = -(-size // dims[-1])
    parts = []
    for k in range(len(dims)):
        offset = _split(source.offset, flat, dims, k)
        parts.append(DimTile(offset, Expr.const(sizes[k]), Expr.const(1), offset + sizes[k]).to_string())
    return (f"Reshape is non-contiguous {list(source_shape)} -> {list(target_shape)}, tiling "
            f"{source.to_string()} -> {'; '.join(parts)}: Multiple dimensions are partially tiled")


def propagate_through_reshape(tile: Tile, source: tuple[int, ...], target: tuple[int, ...]) -> Tile:
    """The tile of the ``target``-shaped array holding the elements of ``tile`` on the
    ``source``-shaped array (see module doc). Raises TilingError when unsupported."""
    if math.prod(source) != math.prod(target):
        raise TilingError("INVALID_ARGUMENT", f"reshape {list(source)} -> {list(target)} changes the element count")
    out = [DimTile.full(d) for d in target]
    for gs, gt in _groups(source, target):
        if len(gs) == 1 and len(gt) == 1:
            out[gt[0]] = tile.dims[gs[0]]
        elif len(gt) == 1:
            out[gt[0]] = _collapse([tile.dims[k] for k in gs], [source[k] for k in gs])
        elif len(gs) == 1:
            for k, dim_tile in zip(gt, _expand(tile.dims[gs[0]], [target[k] for k in gt], source, target)):
                out[k] = dim_tile
        else:
            raise TilingError("UNIMPLEMENTED", "Unsupported reshape (kGeneric).")
    return tile.with_dims(out)
