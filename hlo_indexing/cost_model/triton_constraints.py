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
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from hlo_indexing.analysis.per_op import output_to_input_indexing
from hlo_indexing.cost_model import gpu_constants as constants
from hlo_indexing.cost_model.estimate import Rejection
from hlo_indexing.cost_model.gpu_model import padded
from hlo_indexing.devices.types import GpuDevice
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.symbolic_tiling import tiled_hlo
from hlo_indexing.symbolic_tiling.hlo_graph import first_array
from hlo_indexing.symbolic_tiling.symbolic_tile import NotATile, symbolic_tile
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion, TiledNode, defining_op


@dataclass(frozen=True)
class ConstraintCheck:
    """One rule on one subject over all candidates: ``ok`` per candidate, and the
    :class:`Rejection` of a candidate that breaks it (``rejection(i)``)."""

    rule: str
    subject: str
    ok: np.ndarray
    describe: Callable[[int], str]

    def rejection(self, index: int) -> Rejection:
        """The rejection of candidate ``index`` (which breaks the rule)."""
        return Rejection(self.rule, self.describe(index), self.subject)


def _values(expr: ir.AffineExpr, flat_sizes: Sequence[np.ndarray], count: int) -> np.ndarray:
    value = ax.constant_value(expr)
    if value is not None:
        return np.full(count, value, np.int64)
    defined = np.ones(count, bool)
    return np.broadcast_to(ax.evaluate_array(expr, list(flat_sizes), [], defined), (count,)).astype(np.int64)


def _text(values: np.ndarray, index: int) -> str:
    return "[" + ", ".join(str(int(v)) for v in values[index]) + "]"


def _tile_sizes(node: TiledNode, flat_sizes: Sequence[np.ndarray], count: int) -> np.ndarray:
    """``[candidates, rank]`` sizes of the node's tile."""
    columns = [_values(expr, flat_sizes, count) for expr in node.tile.sizes]
    return np.stack(columns, axis=1) if columns else np.ones((count, 0), np.int64)


def _is_power_of_two(values: np.ndarray) -> np.ndarray:
    return (values > 0) & ((values & (values - 1)) == 0)


def symbolic_checks(
    fusion: TiledFusion, flat_sizes: Sequence[np.ndarray], device: GpuDevice, *, tiled_only: bool = False
) -> list[ConstraintCheck]:
    """Every rule on every subject (module docstring) for the candidates ``flat_sizes``
    (per tiling parameter, its size at each candidate)."""
    count = len(flat_sizes[0]) if flat_sizes else 1
    padded_sizes = [padded(sizes) for sizes in flat_sizes]
    checks: list[ConstraintCheck] = []
    if not tiled_only:
        checks += _tile_element_checks(fusion, flat_sizes, count)
        checks.append(_grid_check(fusion, flat_sizes, count, device))
        checks += _dot_checks(fusion, padded_sizes, count)
        checks += _root_checks(fusion, flat_sizes, count)
    checks += _tiled_checks(fusion, padded_sizes, count)
    return checks


def _tile_element_checks(fusion: TiledFusion, flat_sizes: Sequence[np.ndarray], count: int) -> list[ConstraintCheck]:
    checks = []
    seen: set[tuple[ir.AffineExpr, ...]] = set()
    for node in fusion.nodes:
        key = tuple(node.tile.sizes)
        if key in seen:
            continue
        seen.add(key)
        sizes = padded(_tile_sizes(node, flat_sizes, count))
        elements = np.prod(sizes, axis=1, dtype=np.int64)

        def describe(i: int, node: TiledNode = node, sizes: np.ndarray = sizes, elements: np.ndarray = elements) -> str:
            return (f"{node.name}: padded tile {_text(sizes, i)} has {int(elements[i])} elements, more than Triton's "
                    f"{constants.MAX_TENSOR_ELEMENTS}")

        checks.append(ConstraintCheck("triton.tile-elements", node.name, elements <= constants.MAX_TENSOR_ELEMENTS, describe))
    return checks


def _grid_check(fusion: TiledFusion, flat_sizes: Sequence[np.ndarray], count: int, device: GpuDevice) -> ConstraintCheck:
    root = fusion.root_candidates[0][0]
    shape = list(ir.RankedTensorType(root.value.type).shape)
    blocks = np.ones(count, np.int64)
    for dim, sizes in zip(shape, flat_sizes):
        blocks = blocks * (-(-dim // sizes))
    limit = device.block_dim_limit_x

    def describe(i: int) -> str:
        return f"{int(blocks[i])} blocks, the device's grid holds fewer than {limit}"

    return ConstraintCheck("triton.grid", root.name, blocks < limit, describe)


def _dot_checks(fusion: TiledFusion, padded_sizes: Sequence[np.ndarray], count: int) -> list[ConstraintCheck]:
    checks = []
    for node in fusion.nodes:
        if node.opcode != "dot" or node.parameter_number is not None:
            continue
        for operand in node.operands:
            sizes = _tile_sizes(operand, padded_sizes, count)
            ok = np.all((sizes >= 1) & (sizes <= constants.MAX_MMA_DIM_SIZE), axis=1)

            def describe(i: int, node: TiledNode = node, operand: TiledNode = operand, sizes: np.ndarray = sizes) -> str:
                return (f"{node.name}: operand {operand.name} has the tile {_text(sizes, i)} at padded tile sizes; "
                        f"a dot operand tile must be in [1, {constants.MAX_MMA_DIM_SIZE}] per dimension")

            checks.append(ConstraintCheck("triton.dot-operand-tile", operand.name, ok, describe))
    return checks


def _root_checks(fusion: TiledFusion, flat_sizes: Sequence[np.ndarray], count: int) -> list[ConstraintCheck]:
    root_values = {candidates[0].value for candidates in fusion.root_candidates}
    checks = []
    for node in fusion.nodes:
        if node.value not in root_values:
            continue
        shape = np.asarray(ir.RankedTensorType(node.value.type).shape, np.int64)
        sizes = _tile_sizes(node, flat_sizes, count)
        ok = np.all(_is_power_of_two(sizes) | (sizes == shape), axis=1)

        def describe(i: int, node: TiledNode = node, sizes: np.ndarray = sizes, shape: np.ndarray = shape) -> str:
            bad = [k for k in range(len(shape)) if not (sizes[i, k] == shape[k] or _is_power_of_two(sizes[i, k:k + 1])[0])]
            k = bad[0]
            return (f"output {node.name} has the tile {_text(sizes, i)}: size {int(sizes[i, k])} in dimension {k} is "
                    f"neither a power of 2 nor the dimension size {int(shape[k])}")

        checks.append(ConstraintCheck("triton.root-tile", node.name, ok, describe))
    return checks


def _tiled_checks(fusion: TiledFusion, padded_sizes: Sequence[np.ndarray], count: int) -> list[ConstraintCheck]:
    checks: list[ConstraintCheck] = []
    for node in fusion.nodes:
        if node.parameter_number is not None:
            continue
        op = defining_op(node.value)
        if op is None:
            continue
        if node.opcode in ("reshape", "bitcast"):
            checks += _reshape_check(node, op, padded_sizes, count)
        elif node.opcode == "concatenate":
            checks += _concatenate_checks(node, op, padded_sizes, count)
    return checks


def _reshape_check(node: TiledNode, op: ir.Operation, padded_sizes: Sequence[np.ndarray], count: int) -> list[ConstraintCheck]:
    own = symbolic_tile(next(iter(output_to_input_indexing(op, 0).maps[0])))
    if isinstance(own, NotATile) or own.constraints.is_always_satisfied:
        return []
    sizes = padded(_tile_sizes(node, padded_sizes, count))
    ok = np.array([own.constraints.is_satisfied_by([int(v) for v in row]) for row in sizes], bool)

    def describe(i: int) -> str:
        return (f"{node.name}: its padded tile {_text(sizes, i)} breaks the reshape's own tile constraints "
                f"{own.constraints}")

    return [ConstraintCheck("tiled.reshape", node.name, ok, describe)]


def _concatenate_checks(node: TiledNode, op: ir.Operation, padded_sizes: Sequence[np.ndarray], count: int) -> list[ConstraintCheck]:
    axis = ir.IntegerAttr(op.attributes["dimension"]).value
    tile = padded(_values(node.tile.sizes[axis], padded_sizes, count))
    operand_sizes = [ir.RankedTensorType(v.type).shape[axis] for v in op.operands]
    divisible = np.ones(count, bool)
    for size in operand_sizes[:-1]:
        divisible &= size % np.maximum(tile, 1) == 0
    offset = _values(node.tile.offsets[axis], padded_sizes, count) if not node.tile.runtime_vars else np.ones(count, np.int64)
    stride = _values(node.tile.strides[axis], padded_sizes, count)

    def divisibility(i: int) -> str:
        return (f"{node.name}: padded tile size {int(tile[i])} along dimension {axis} does not divide every operand "
                f"size but the last ({operand_sizes[:-1]})")

    def offset_text(i: int) -> str:
        return f"{node.name}: its tile starts at offset {int(offset[i])} along the concatenated dimension {axis}, not 0"

    def stride_text(i: int) -> str:
        return f"{node.name}: its tile has stride {int(stride[i])} along the concatenated dimension {axis}, not 1"

    return [
        ConstraintCheck("tiled.concatenate-divisibility", node.name, divisible, divisibility),
        ConstraintCheck("tiled.concatenate-offset", node.name, offset == 0, offset_text),
        ConstraintCheck("tiled.concatenate-stride", node.name, stride == 1, stride_text),
    ]


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
