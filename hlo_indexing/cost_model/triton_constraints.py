"""Triton's emitter constraints on tilings, as XLA checks them, each broken rule a
:class:`~.estimate.Rejection` naming the instruction and the numbers.

On the symbolic analysis (XLA's ``TritonEmitterConstraints``, which wraps
``TiledEmitterConstraints``), evaluated for every candidate at once
(:func:`symbolic_checks`), in XLA's order:

1. ``triton.tile-elements``: every tile (each distinct size expression, fusion
   parameters included), each size padded to a power of two, has at most 1,048,576
   elements (Triton's ``TRITON_MAX_TENSOR_NUMEL``);
2. ``triton.grid``: the output's tiles (its dimensions zipped with the tiling
   parameters, as XLA zips them) number fewer than the device's grid X limit;
3. ``triton.dot-operand-tile``: every operand tile size of a dot, at the padded tile
   sizes, is in [1, 256] (``kMaxMMADimSize``);
4. ``triton.root-tile``: every tile of an output is, per dimension, a power of two or
   the whole dimension (unpadded sizes);
5. ``tiled.reshape``: a reshape's or bitcast's padded tile satisfies the constraints of
   the reshape's own symbolic tile; ``tiled.concatenate-divisibility``: every operand
   but the last of a concatenate has a size along the concatenated dimension that the
   padded tile size there divides; ``tiled.concatenate-offset`` /
   ``tiled.concatenate-stride``: a concatenate's tile starts at 0 with stride 1 along
   that dimension.

Only rule 5 applies with ``tiled_only`` (XLA's ``TiledEmitterConstraints`` alone).

On an experimental tiled computation (XLA's ``VerifyTritonConstraints``,
:func:`verify_experimental`): padded tile elements (``triton.tile-elements``), dot
operand tiles at most 256 (unpadded, ``triton.dot-operand-tile``), root tiles powers of
two or full (``triton.root-tile``) and the grid (``triton.grid``), with XLA's messages.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hlo_indexing.analysis.per_op import output_to_input_indexing
from hlo_indexing.cost_model import gpu_constants as constants
from hlo_indexing.cost_model.estimate import ConstraintCheck, Rejection
from hlo_indexing.cost_model.tile_arrays import TileArrays, failing, padded
from hlo_indexing.devices.types import GpuDevice
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.symbolic_tiling.experimental import tiled_hlo
from hlo_indexing.symbolic_tiling.experimental.hlo_graph import first_array
from hlo_indexing.symbolic_tiling.constraints import ConstraintExpression
from hlo_indexing.symbolic_tiling.ranking import constraint_mask
from hlo_indexing.symbolic_tiling.symbolic_tile import NotATile, symbolic_tile
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion, TiledNode, defining_op


def _text(values: np.ndarray, index: int) -> str:
    return "[" + ", ".join(str(int(v)) for v in values[index]) + "]"


def _is_power_of_two(values: np.ndarray) -> np.ndarray:
    return (values > 0) & ((values & (values - 1)) == 0)


def symbolic_checks(
    fusion: TiledFusion, flat_sizes: Sequence[np.ndarray] | TileArrays, device: GpuDevice, *, tiled_only: bool = False
) -> list[ConstraintCheck]:
    """Every rule on every subject (module docstring) that some of the candidates
    ``flat_sizes`` break (per tiling parameter, its size at each candidate; or their
    :class:`TileArrays`, whose memo then shares the rules' verdicts on the same tiles
    between fusions): a check every candidate passes rejects nothing and is left out."""
    tiles = flat_sizes if isinstance(flat_sizes, TileArrays) else TileArrays(flat_sizes)
    padded_tiles: TileArrays = tiles.memo("padded parameters",
                                          lambda: TileArrays([padded(sizes) for sizes in tiles.flat], tiles.facts))
    checks: list[ConstraintCheck] = []
    if not tiled_only:
        checks += _tile_element_checks(fusion, tiles)
        checks += _grid_checks(fusion, tiles, device)
        checks += _dot_checks(fusion, padded_tiles)
        checks += _root_checks(fusion, tiles)
    checks += _tiled_checks(fusion, padded_tiles)
    return checks


def _tile_element_checks(fusion: TiledFusion, tiles: TileArrays) -> list[ConstraintCheck]:
    checks = []
    seen: set[tuple[ir.AffineExpr, ...]] = set()
    for node in fusion.nodes:
        key = tuple(node.tile.sizes)
        if key in seen:
            continue
        seen.add(key)
        ok = tiles.memo(("tile elements ok", key),
                        lambda: failing(tiles.padded_elements(key) <= constants.MAX_TENSOR_ELEMENTS))
        if ok is None:
            continue
        elements = tiles.padded_elements(key)
        sizes = tiles.padded_columns(key)

        def describe(i: int, node: TiledNode = node, sizes: np.ndarray = sizes, elements: np.ndarray = elements) -> str:
            return (f"{node.name}: padded tile {_text(sizes, i)} has {int(elements[i])} elements, more than Triton's "
                    f"{constants.MAX_TENSOR_ELEMENTS}")

        checks.append(ConstraintCheck("triton.tile-elements", node.name, ok, describe))
    return checks


def _grid_checks(fusion: TiledFusion, tiles: TileArrays, device: GpuDevice) -> list[ConstraintCheck]:
    root = fusion.root_candidates[0][0]
    shape = tuple(ir.RankedTensorType(root.value.type).shape)
    limit = device.block_dim_limit_x

    def grid() -> tuple[np.ndarray, np.ndarray | None]:
        blocks = np.ones(tiles.count, np.int64)
        for dim, sizes in zip(shape, tiles.flat):
            blocks = blocks * (-(-dim // sizes))
        return blocks, failing(blocks < limit)

    blocks, ok = tiles.memo(("grid", shape, limit), grid)
    if ok is None:
        return []

    def describe(i: int) -> str:
        return f"{int(blocks[i])} blocks, the device's grid holds fewer than {limit}"

    return [ConstraintCheck("triton.grid", root.name, ok, describe)]


def _dot_checks(fusion: TiledFusion, padded_tiles: TileArrays) -> list[ConstraintCheck]:
    checks = []
    for node in fusion.nodes:
        if node.opcode != "dot":  # a parameter's opcode is "parameter"
            continue
        for operand in node.operands:
            sizes = padded_tiles.columns(operand.tile.sizes)
            ok = padded_tiles.memo(("dot operand ok", tuple(operand.tile.sizes)), lambda: failing(
                np.logical_and.reduce((sizes >= 1) & (sizes <= constants.MAX_MMA_DIM_SIZE), axis=1)))
            if ok is None:
                continue

            def describe(i: int, node: TiledNode = node, operand: TiledNode = operand, sizes: np.ndarray = sizes) -> str:
                return (f"{node.name}: operand {operand.name} has the tile {_text(sizes, i)} at padded tile sizes; "
                        f"a dot operand tile must be in [1, {constants.MAX_MMA_DIM_SIZE}] per dimension")

            checks.append(ConstraintCheck("triton.dot-operand-tile", operand.name, ok, describe))
    return checks


def _root_checks(fusion: TiledFusion, tiles: TileArrays) -> list[ConstraintCheck]:
    root_values = {candidates[0].value for candidates in fusion.root_candidates}
    checks = []
    for node in fusion.nodes:
        if node.value not in root_values:
            continue
        dims = tuple(ir.RankedTensorType(node.value.type).shape)
        sizes = tiles.columns(node.tile.sizes)
        ok = tiles.memo(("root tile ok", tuple(node.tile.sizes), dims), lambda: failing(
            (_is_power_of_two(sizes) | (sizes == np.asarray(dims, np.int64))).all(axis=1)))
        if ok is None:
            continue
        shape = np.asarray(dims, np.int64)

        def describe(i: int, node: TiledNode = node, sizes: np.ndarray = sizes, shape: np.ndarray = shape) -> str:
            bad = [k for k in range(len(shape)) if not (sizes[i, k] == shape[k] or _is_power_of_two(sizes[i, k:k + 1])[0])]
            k = bad[0]
            return (f"output {node.name} has the tile {_text(sizes, i)}: size {int(sizes[i, k])} in dimension {k} is "
                    f"neither a power of 2 nor the dimension size {int(shape[k])}")

        checks.append(ConstraintCheck("triton.root-tile", node.name, ok, describe))
    return checks


def _tiled_checks(fusion: TiledFusion, padded_tiles: TileArrays) -> list[ConstraintCheck]:
    checks: list[ConstraintCheck] = []
    for node in fusion.nodes:
        if node.opcode not in ("reshape", "bitcast", "concatenate"):  # a parameter's opcode is "parameter"
            continue
        op = defining_op(node.value)
        if op is None:
            continue
        if node.opcode in ("reshape", "bitcast"):
            checks += _reshape_check(node, op, padded_tiles)
        elif node.opcode == "concatenate":
            checks += _concatenate_checks(node, op, padded_tiles)
    return checks


def _reshape_constraints(op: ir.Operation) -> ConstraintExpression | None:
    # Unsimplified, as the tiling analysis reads the op (the per-op cache then has it):
    # symbolic_tile simplifies the map itself.
    own = symbolic_tile(next(iter(output_to_input_indexing(op, 0, simplify=False).maps[0])))
    return None if isinstance(own, NotATile) or own.constraints.is_always_satisfied else own.constraints


def _reshape_check(node: TiledNode, op: ir.Operation, padded_tiles: TileArrays) -> list[ConstraintCheck]:
    shapes = (node.operands[0].value.type, node.value.type) if node.operands else (op.operands[0].type, node.value.type)
    constraints: ConstraintExpression | None = padded_tiles.fact(("reshape", shapes), lambda: _reshape_constraints(op))
    if constraints is None:
        return []
    sizes = padded_tiles.padded_columns(node.tile.sizes)
    ok = padded_tiles.memo(("reshape ok", shapes, tuple(node.tile.sizes)), lambda: failing(constraint_mask(
        constraints, [padded_tiles.padded_value(e) for e in node.tile.sizes], padded_tiles.count)))
    if ok is None:
        return []
    own = constraints

    def describe(i: int) -> str:
        return (f"{node.name}: its padded tile {_text(sizes, i)} breaks the reshape's own tile constraints "
                f"{own}")

    return [ConstraintCheck("tiled.reshape", node.name, ok, describe)]


def _concatenate_checks(node: TiledNode, op: ir.Operation, padded_tiles: TileArrays) -> list[ConstraintCheck]:
    axis = ir.IntegerAttr(op.attributes["dimension"]).value
    count = padded_tiles.count
    tile = padded(padded_tiles.value(node.tile.sizes[axis]))
    operand_sizes = [ir.RankedTensorType(v.type).shape[axis] for v in op.operands]
    divisible = np.ones(count, bool)
    for size in operand_sizes[:-1]:
        divisible &= size % np.maximum(tile, 1) == 0
    offset = padded_tiles.value(node.tile.offsets[axis]) if not node.tile.runtime_vars else np.ones(count, np.int64)
    stride = padded_tiles.value(node.tile.strides[axis])

    def divisibility(i: int) -> str:
        return (f"{node.name}: padded tile size {int(tile[i])} along dimension {axis} does not divide every operand "
                f"size but the last ({operand_sizes[:-1]})")

    def offset_text(i: int) -> str:
        return f"{node.name}: its tile starts at offset {int(offset[i])} along the concatenated dimension {axis}, not 0"

    def stride_text(i: int) -> str:
        return f"{node.name}: its tile has stride {int(stride[i])} along the concatenated dimension {axis}, not 1"

    checks = [
        ConstraintCheck("tiled.concatenate-divisibility", node.name, divisible, divisibility),
        ConstraintCheck("tiled.concatenate-offset", node.name, offset == 0, offset_text),
        ConstraintCheck("tiled.concatenate-stride", node.name, stride == 1, stride_text),
    ]
    return [check for check in checks if not check.ok.all()]


def rejections_at(checks: Sequence[ConstraintCheck], index: int) -> tuple[Rejection, ...]:
    """The rules candidate ``index`` breaks, in check order."""
    return tuple(check.rejection(index) for check in checks if not check.ok[index])


def all_satisfied(checks: Sequence[ConstraintCheck], count: int) -> np.ndarray:
    """Per candidate: whether it breaks no rule."""
    ok = np.ones(count, bool)
    for check in checks:
        ok &= check.ok
    return ok


# ---------------------------------------------------------------- experimental tiling


def _sizes(inst: tiled_hlo.TiledInstruction) -> tuple[int, ...]:
    return tuple(dim.size.evaluate({}) for dim in inst.tile.dims)


def verify_experimental(computation: tiled_hlo.TiledComputation, device: GpuDevice) -> tuple[Rejection, ...]:
    """``VerifyTritonConstraints`` on an experimental tiled computation (module
    docstring): the rules it breaks, XLA's messages (first broken rule first)."""
    found: list[Rejection] = []
    for inst in computation.ordered():
        sizes = _sizes(inst)
        elements = math.prod(int(v) for v in padded(np.asarray(sizes, np.int64))) if sizes else 1
        if elements > constants.MAX_TENSOR_ELEMENTS:
            found.append(Rejection(
                "triton.tile-elements",
                f"Instruction `{inst.name}` has a padded tile size product that exceeds the maximum allowed tensor size "
                f"of {constants.MAX_TENSOR_ELEMENTS} elements.",
                inst.name,
            ))
        if inst.hlo.opcode in ("dot", "scaled-dot"):
            for operand in inst.operands:
                for size in _sizes(operand):
                    if size > constants.MAX_MMA_DIM_SIZE:
                        found.append(Rejection(
                            "triton.dot-operand-tile",
                            f"Dot operand instruction `{operand.name}` has a tile size of `{size}`, which exceeds the "
                            f"maximum MMA dimension size of {constants.MAX_MMA_DIM_SIZE}.",
                            operand.name,
                        ))
    for root in computation.roots:
        shape = first_array(root.hlo.shape if not isinstance(root.hlo.shape, tuple) else root.hlo.shape[root.output_index])
        sizes = _sizes(root)
        for k, (size, dim) in enumerate(zip(sizes, shape.dims)):
            if size != dim and (size & (size - 1)):
                found.append(Rejection(
                    "triton.root-tile",
                    f"Root instruction `{root.name}` has a tile size of `{size}` in dimension `{k}`, which is neither a "
                    f"power of 2 nor equal to the dimension size `{dim}`.",
                    root.name,
                ))
        counts = [-(-dim // size) for size, dim in zip(sizes, shape.dims)]
        if math.prod(counts) > device.block_dim_limit_x:
            found.append(Rejection(
                "triton.grid",
                f"Number of blocks `{'*'.join(map(str, counts))}` exceeds the device grid X limit of "
                f"`{device.block_dim_limit_x}`.",
                root.name,
            ))
    return tuple(found)
