"""Pallas TPU kernels (``tpu_custom_call``): their maps from their grid and blocks.

A ``pallas_call`` runs its kernel once per point ``g`` of its grid; at ``g`` it reads the
block of each input its index map names, and writes the block of each output its index
map names (:func:`~hlo_indexing.dialect_glue.mosaic.mosaic_kernel` reads both from the
call). The kernel's body is not read: a grid step is taken to read its input blocks
whole. So an output element ``e`` reads, over every grid point ``g`` whose output block
holds ``e`` (range variables: the grid indices), every element of the input blocks of
``g`` (range variables: the offsets in the block), clipped to the input (a partial
block). Exact at the granularity of blocks, an over-approximation within them (a note
says so). An output aliased to an input (``input_output_aliases``) also keeps that
input's element where no step writes it. A window without an index function
(``memory_space=ANY``: the kernel copies what it wants) and the scalar-prefetch operands
are read whole; an output whose index function is not affine is unknown.

Example: ``BlockSpec((8, 128), lambda i: (i, 0))`` for input and output over ``grid=(2,)``:
``(d0, d1)[s0, s1, s2] -> (s0 * 8 + s1, s2)`` with ``d0 - s0 * 8 in [0, 7]``.
"""

from __future__ import annotations

import re

from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.mosaic import AffineIndex, MosaicKernel, Window, mosaic_kernel
from hlo_indexing.errors import UnsupportedError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.interval import Interval
from hlo_indexing.ops.map_builders import dims, make_map, syms, whole_map
from hlo_indexing.ops.rule import Entry, OpInfo, RuleResult, UnknownIndexing

#: ``#stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 0, ...>``.
_ALIAS = re.compile(r"output_tuple_indices\s*=\s*\[([\d,\s]*)\],\s*operand_index\s*=\s*(\d+)")


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
    if written.block_shape is not None and written.block_index is None:
        raise UnknownIndexing(f"Pallas kernel {kernel.name}: the index map of output {result_index}: {written.reason}")
    note = f"Pallas kernel {kernel.name}: a grid step is taken to read its input blocks whole (its body is not read)"
    aliased = _aliased_operand(info, result_index)
    entries = []
    for k in range(info.num_operands):
        target = info.operand(k)
        window = kernel.windows[k - kernel.scalar_prefetch] if k >= kernel.scalar_prefetch else Window(None, None)
        said = note
        if window.block_shape is None or window.block_index is None:
            maps = [whole_map(info.context, space, target)]
            if window.block_shape is not None:
                said = f"Pallas kernel {kernel.name}: the index map of input {k - kernel.scalar_prefetch}: {window.reason}; read whole"
        else:
            maps = [_block_map(info.context, kernel, space, written, target, window)]
        if k == aliased:
            maps.append(make_map(info.context, space, dims(len(space), info.context)))
        entries.append(Entry(tuple(maps), note=said))
    return entries


def _block_map(
    context: ir.Context, kernel: MosaicKernel, space: tuple[int, ...], written: Window, target: tuple[int, ...], read: Window
) -> IndexingMap:
    """From an output element to the elements of the input blocks of the grid steps
    that write it: range variables the grid indices, then the offsets in the block."""
    grid = syms(len(kernel.grid), context)
    offsets = syms(len(target), context, start=len(grid))
    assert read.block_shape is not None and read.block_index is not None  # the caller reads whole windows apart
    constraints: dict[ir.AffineExpr, Interval] = {}
    results = []
    for j, (size, index, offset) in enumerate(zip(read.block_shape, read.block_index, offsets, strict=True)):
        element = _expr(index, grid, context) * size + offset
        results.append(element)
        constraints[element] = Interval(0, target[j] - 1)
    if written.block_shape is not None and written.block_index is not None:
        d = dims(len(space), context)
        for j, (size, index) in enumerate(zip(written.block_shape, written.block_index, strict=True)):
            constraints[d[j] - _expr(index, grid, context) * size] = Interval(0, size - 1)
    ranges = list(kernel.grid) + list(read.block_shape)
    return make_map(context, space, results, ranges, constraints=constraints)


def _expr(index: AffineIndex, grid: list[ir.AffineExpr], context: ir.Context) -> ir.AffineExpr:
    expr = ax.constant(index.constant, context)
    for coefficient, variable in zip(index.coefficients, grid, strict=True):
        if coefficient:
            expr = expr + variable * coefficient
    return expr


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
