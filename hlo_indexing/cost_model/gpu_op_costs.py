"""FLOPs per output element of an instruction, as XLA's GPU indexing cost model counts
them (``GpuPerformanceModelWithIndexingAnalysis::FlopsPerElement``).

* indexing-only instructions (bitcast, broadcast, constant, dynamic-(update-)slice,
  gather, iota, pad, parameter, reshape, slice, transpose, tuple, get-tuple-element)
  cost 0;
* a concatenate costs 400 when it concatenates along a dimension other than 0 and its
  first operand's size there is not a multiple of 32 (a branch per element), else 6;
* an elementwise instruction costs what the device's op profile says for its opcode and
  *output* element type (measured clock cycles, ``xla_op_profiles.json``), 3 when the
  pair is not listed; the profile is ``sm_<major><minor>`` of the device, else ``sm_86``;
* a reduce costs (product of its reduced dimensions, each rounded up to a power of two,
  minus 1) times the sum of its reducer's instructions' costs;
* a dot costs 2 per multiply-add: 2 x the product of its contracting dimensions;
* a convolution 2 x kernel spatial elements x input features per group (every window
  position counted, padding included); a reduce-window (window elements - 1) x its
  reducer's cost;
* anything else costs 0 (XLA's cost analysis counts no FLOPs for data movement:
  gather, scatter, sort, select-and-scatter, custom calls are data movement or opaque).

Two readers share these rules: :func:`mlir_flops_per_element` (an op of a fusion
imported to StableHLO/MHLO) and :func:`hlo_flops_per_element` (an instruction of
:class:`~hlo_indexing.symbolic_tiling.experimental.hlo_graph.HloGraph`).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import TypedDict

from hlo_indexing.cost_model.element_types import tensor_element_type
from hlo_indexing.devices.types import GpuDevice
from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.ops.rules import ELEMENTWISE_KINDS
from hlo_indexing.symbolic_tiling.experimental.hlo_graph import HloGraph, Instruction

PROFILES_FILE = Path(__file__).resolve().parent / "xla_op_profiles.json"
#: Cost of an elementwise (opcode, type) the profile does not list.
DEFAULT_FLOPS_PER_ELEMENT = 3
#: Profile used when the device's own is not in the table.
DEFAULT_PROFILE = "sm_86"
#: XLA opcodes that only move or index data.
ZERO_COST_OPCODES = frozenset(
    """bitcast broadcast constant dynamic-slice dynamic-update-slice gather iota pad parameter
    reshape slice transpose tuple get-tuple-element""".split()
)
#: XLA opcode of MLIR op kinds whose names differ beyond ``_`` -> ``-``.
_XLA_OPCODES = {"dot_general": "dot", "broadcast_in_dim": "broadcast", "count_leading_zeros": "clz",
                "reduce_window": "reduce-window", "convolution": "convolution", "return": "tuple"}
#: XLA opcode of an analysis node's opcode (:attr:`~hlo_indexing.symbolic_tiling.tiled_fusion.TiledNode.opcode`)
#: where they differ.
XLA_OPCODE_OF_NODE = {"count-leading-zeros": "clz", "return": "tuple"}
#: XLA's elementwise opcodes (from the MLIR kinds, same meaning).
ELEMENTWISE_OPCODES = frozenset(_XLA_OPCODES.get(kind, kind.replace("_", "-")) for kind in ELEMENTWISE_KINDS)
#: Flops of one concatenated element: cheap, or a branch per element (unaligned minor concatenation).
CONCATENATE_ALIGNED_FLOPS = 6
CONCATENATE_UNALIGNED_FLOPS = 400


class _Profile(TypedDict):
    """One profile of ``xla_op_profiles.json``: cycles per element by opcode, then by
    element type (upper case)."""

    device_comment: str
    clock_cycles: dict[str, dict[str, int]]


@functools.cache
def _profiles() -> dict[str, _Profile]:
    """The table's profiles by name."""
    data: dict[str, _Profile] = json.loads(PROFILES_FILE.read_text())["profiles"]
    return data


@functools.cache
def profile_name(device: GpuDevice) -> str:
    """The op profile XLA picks for ``device``: ``sm_<major><minor>`` (ROCm/SYCL: the
    architecture name) when the table has it, else ``sm_86``."""
    capability = device.cuda_compute_capability
    wanted = f"sm_{capability[0]}{capability[1]}" if capability else device.compute_capability.split(":")[0]
    return wanted if wanted in _profiles() else DEFAULT_PROFILE


@functools.cache
def elementwise_flops(device: GpuDevice, opcode: str, element_type: str) -> int:
    """Cycles per element of an elementwise op on ``device`` (its output element type)."""
    table = _profiles()[profile_name(device)]["clock_cycles"]
    return int(table.get(opcode, {}).get(element_type.upper(), DEFAULT_FLOPS_PER_ELEMENT))


def concatenate_flops(dimension: int, first_operand_size: int) -> int:
    """Per element of a concatenate along ``dimension`` whose first operand has
    ``first_operand_size`` elements there."""
    return CONCATENATE_UNALIGNED_FLOPS if dimension > 0 and first_operand_size % 32 else CONCATENATE_ALIGNED_FLOPS


def reduce_flops(reduced_sizes: Iterable[int], reducer_flops: int) -> int:
    """Per output element of a reduce: the reducer applied (padded count - 1) times."""
    padded = math.prod(1 << max(0, (size - 1).bit_length()) for size in reduced_sizes)
    return (padded - 1) * reducer_flops


def xla_opcode(op: ir.Operation | ir.OpView) -> str:
    """XLA's opcode for a StableHLO/MHLO op (``stablehlo.dot_general`` -> ``dot``)."""
    kind = op.operation.name.split(".", 1)[-1]
    return _XLA_OPCODES.get(kind, kind.replace("_", "-"))


def _shape(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(value.type).shape)


def mlir_flops_per_element(op: ir.Operation | ir.OpView, device: GpuDevice) -> int:
    """FLOPs per output element of an op of a fused computation (module docstring)."""
    operation = op.operation
    opcode = xla_opcode(operation)
    if opcode in ZERO_COST_OPCODES or not operation.results:
        return 0
    if opcode == "concatenate":
        dimension = ir.IntegerAttr(operation.attributes["dimension"]).value
        return concatenate_flops(dimension, ir.RankedTensorType(operation.operands[0].type).shape[dimension])
    if opcode in ELEMENTWISE_OPCODES:
        return elementwise_flops(device, opcode, tensor_element_type(operation.results[0].type))
    if opcode == "reduce":
        shape = _shape(operation.operands[0])
        body = operation.regions[0].blocks[0]
        return reduce_flops([shape[d] for d in op_attrs.int_array(operation, "dimensions")], _body_flops(body, device))
    if opcode == "dot":
        lhs, rhs = _shape(operation.operands[0]), _shape(operation.operands[1])
        return 2 * math.prod(lhs[d] for d in op_attrs.dot_dimensions(operation, lhs, rhs).lhs_contracting)
    if opcode == "reduce-window":
        window = op_attrs.reduce_window(operation, len(_shape(operation.operands[0])))
        return (math.prod(window.sizes) - 1) * _body_flops(operation.regions[0].blocks[0], device)
    if opcode == "convolution":
        lhs, rhs = _shape(operation.operands[0]), _shape(operation.operands[1])
        dn = op_attrs.conv_dimensions(operation, lhs, rhs, _shape(operation.results[0]))
        return 2 * math.prod(rhs[d] for d in dn.kernel_spatial) * rhs[dn.kernel_input_feature]
    return 0


def _body_flops(block: ir.Block, device: GpuDevice) -> int:
    return sum(mlir_flops_per_element(inner, device) for inner in block.operations)


def hlo_flops_per_element(inst: Instruction, graph: HloGraph, device: GpuDevice) -> int:
    """FLOPs per output element of an HLO instruction (module docstring)."""
    opcode = inst.opcode
    if opcode in ZERO_COST_OPCODES:
        return 0
    if opcode == "concatenate":
        dimension = inst.int_list("dimensions")[0]
        return concatenate_flops(dimension, inst.operands[0].array.dims[dimension])
    if opcode in ELEMENTWISE_OPCODES:
        return elementwise_flops(device, opcode, inst.array.element_type)
    if opcode == "reduce":
        dims = inst.operands[0].array.dims
        reducer = graph.called(inst, "to_apply")
        return reduce_flops([dims[d] for d in inst.int_list("dimensions")],
                            sum(hlo_flops_per_element(i, graph, device) for i in reducer.instructions))
    if opcode == "dot":
        lhs = inst.operands[0].array.dims
        return 2 * math.prod(lhs[d] for d in inst.int_list("lhs_contracting_dims"))
    if opcode == "reduce-window":
        window = inst.attrs.get("window", "")
        sizes = [int(v) for v in window.split("size=")[1].split()[0].rstrip("}").split("x")] if "size=" in window else [1]
        reducer = graph.called(inst, "to_apply")
        return (math.prod(sizes) - 1) * sum(hlo_flops_per_element(i, graph, device) for i in reducer.instructions)
    if opcode == "convolution":
        kernel = inst.operands[1].array.dims
        labels = inst.attrs.get("dim_labels", "").split("_")[1].split("->")[0] if "dim_labels" in inst.attrs else ""
        spatial = math.prod(size for size, label in zip(kernel, labels) if label not in "io")
        return 2 * spatial * (kernel[labels.index("i")] if "i" in labels else 1)
    return 0

