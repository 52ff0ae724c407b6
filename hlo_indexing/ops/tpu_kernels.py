"""Pallas TPU kernels (``tpu_custom_call``): their maps from their grid and blocks.

A ``pallas_call`` runs its kernel once per point ``g`` of its grid; at ``g`` it reads the
block of each input its index map names, and writes the block of each output its index
map names (:func:`~hlo_indexing.dialect_glue.mosaic.mosaic_kernel` reads both from the
call; :mod:`.mosaic_index_functions` turns each index map into piecewise-affine block
indices: one affine expression of the grid indices per region of the grid). The kernel's
body is not read: a grid step is taken to read its input blocks whole. So an output
element ``e`` reads, over every grid point ``g`` whose output block holds ``e`` (range
variables: the grid indices), every element of the input blocks of ``g`` (range
variables: the offsets in the block), clipped to the input (a partial block): one map
per region where both index maps are affine (``jnp.where(i >= j, j, 0)`` gives two).
Exact at the granularity of blocks, an over-approximation within them (a note says so).
An output aliased to an input (``input_output_aliases``) also keeps that input's element
where no step writes it. A window without an index function (``memory_space=ANY``: the
kernel copies what it wants), the scalar-prefetch operands and an input whose block
index depends on a prefetched scalar are read whole, with a note; an output whose block
index depends on one is unknown.

Example: ``BlockSpec((8, 128), lambda i: (i, 0))`` for input and output over ``grid=(2,)``:
``(d0, d1)[s0, s1, s2] -> (s0 * 8 + s1, s2)`` with ``d0 - s0 * 8 in [0, 7]``.
"""

from __future__ import annotations

import re

from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.mosaic import Window, mosaic_kernel
from hlo_indexing.errors import UnsupportedError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.piecewise import Cases, Region, Space, TooManyCases
from hlo_indexing.ops.map_builders import dims, make_map, syms, whole_map
from hlo_indexing.ops.mosaic_index_functions import block_indices
from hlo_indexing.ops.rule import Entry, OpInfo, RuleResult, UnknownIndexing

#: ``#stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 0, ...>``.
_ALIAS = re.compile(r"output_tuple_indices\s*=\s*\[([\d,\s]*)\],\s*operand_index\s*=\s*(\d+)")


class _ReadWhole(Exception):
    """Why an input's blocks cannot be followed (internal: the input is read whole)."""


def tpu_kernel_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Output -> input maps of a Pallas TPU kernel's call (see the module docstring)."""
    try:
        kernel = mosaic_kernel(info.op)
    except UnsupportedError as exc:
        raise UnknownIndexing(exc.message) from None
    inputs = info.num_operands - kernel.scalar_prefetch
    if inputs < 0 or len(kernel.windows) != inputs + info.num_results:
        raise op_attrs.invalid(
            info.op, "backend_config",
            f"kernel {kernel.name} has {len(kernel.windows)} windows for {info.num_operands} operands "
            f"({kernel.scalar_prefetch} scalar prefetch) and {info.num_results} results",
        )
    space = info.result(result_index)
    written = kernel.windows[inputs + result_index]
    grid = Space(kernel.grid, info.context)
    written_indices = block_indices(written.index, grid) if written.index is not None else []
    if grid.unknowns:
        raise UnknownIndexing(f"Pallas kernel {kernel.name}: the block index of output {result_index} depends on "
                              f"{grid.unknowns[0].origin}")
    note = f"Pallas kernel {kernel.name}: a grid step is taken to read its input blocks whole (its body is not read)"
    aliased = _aliased_operand(info, result_index)
    entries = []
    for k in range(info.num_operands):
        target = info.operand(k)
        said = note
        try:
            if k < kernel.scalar_prefetch:
                raise _ReadWhole(f"operand {k} is a scalar-prefetch operand")
            number = k - kernel.scalar_prefetch
            maps = _block_maps(grid, space, written, written_indices, target, kernel.windows[number], number)
        except _ReadWhole as reason:
            maps = [whole_map(info.context, space, target)]
            said = f"Pallas kernel {kernel.name}: {reason}; read whole"
        if k == aliased:
            maps.append(make_map(info.context, space, dims(len(space), info.context)))
        entries.append(Entry(tuple(maps), note=said))
    return entries


def _block_maps(
    grid: Space, space: tuple[int, ...], written: Window, written_indices: list[Cases], target: tuple[int, ...], read: Window,
    number: int,
) -> list[IndexingMap]:
    """From an output element to the elements of input ``number``'s blocks of the grid
    steps that write it (``written_indices``: the output's block indices over ``grid``),
    one map per region of the grid where both block indices are affine: range variables
    the grid indices, then the offsets in the block."""
    if read.block_shape is None or read.index is None:
        raise _ReadWhole(f"input {number} has memory_space=ANY (no block index map: the kernel copies what it wants)")
    known = len(grid.unknowns)
    read_indices = block_indices(read.index, grid)
    if len(grid.unknowns) > known:
        raise _ReadWhole(f"input {number} has a block index that depends on {grid.unknowns[known].origin}")
    try:
        pieces = grid.apply([*written_indices, *read_indices], lambda region, *values: [(region, values)])
    except TooManyCases:
        raise _ReadWhole(f"input {number}'s block indices split the grid into more regions than limits.MAX_INDEX_MAP_CASES") from None
    maps: list[IndexingMap] = []
    for region, values in pieces:
        assert isinstance(values, tuple)  # the block indices of one region (see the rule above)
        written_block = list(zip(written.block_shape or (), values[: len(written_indices)], strict=True))
        read_block = list(zip(read.block_shape, values[len(written_indices):], strict=True))
        maps.append(_piece_map(grid.context, region, space, written_block, target, read_block))
    return maps


def _piece_map(
    context: ir.Context, region: Region, space: tuple[int, ...], written: list[tuple[int, ir.AffineExpr]],
    target: tuple[int, ...], read: list[tuple[int, ir.AffineExpr]],
) -> IndexingMap:
    """The map of one region of the grid, where the output block ``written`` and the
    input block ``read`` are (block size, block index) per dimension."""
    grid = syms(len(region.dims), context)
    offsets = syms(len(target), context, start=len(grid))

    def of_grid(expr: ir.AffineExpr) -> ir.AffineExpr:
        return ax.substitute(expr, grid, [])

    constraints: dict[ir.AffineExpr, Interval] = {of_grid(expr): interval for expr, interval in region.constraints}
    results = []
    for j, ((size, index), offset) in enumerate(zip(read, offsets, strict=True)):
        element = of_grid(index) * size + offset
        results.append(element)
        constraints[element] = Interval(0, target[j] - 1)
    d = dims(len(space), context)
    for j, (size, index) in enumerate(written):
        constraints[d[j] - of_grid(index) * size] = Interval(0, size - 1)
    ranges: list[Interval | int] = [*region.dims, *(size for size, _ in read)]
    return make_map(context, space, results, ranges, constraints=constraints)


def _aliased_operand(info: OpInfo, result_index: int) -> int | None:
    """The operand result ``result_index`` is aliased to (``output_operand_aliases``), if any."""
    attributes = info.op.attributes
    if "output_operand_aliases" not in attributes:
        return None
    for output, operand in _ALIAS.findall(str(attributes["output_operand_aliases"])):
        indices = [int(i) for i in output.replace(" ", "").split(",") if i]
        if (indices or [0]) == [result_index] and int(operand) < info.num_operands:
            return int(operand)
    return None
