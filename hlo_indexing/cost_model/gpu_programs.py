"""Tiled fusions as the GPU model sees them (:class:`~.gpu_model.TiledProgram`), from
either of the project's tilings at one tiling:

* :func:`symbolic_program`: a :class:`~hlo_indexing.symbolic_tiling.tiled_computation.TiledComputation`
  (XLA's ``SymbolicTileAnalysis`` path, fusions imported to StableHLO/MHLO);
* :func:`experimental_program`: a :class:`~hlo_indexing.symbolic_tiling.experimental.tiled_hlo.TiledComputation`
  (XLA's experimental ``TilingSpace`` path, on the HLO instruction graph).

Block counts (``GetNumBlocksForRegion``): an instruction in a dot's operand region is
loaded once per step of the dot's contracting loop (``ceil(K / tile)`` per lhs
contracting dimension), one in operand ``i``'s region of a concatenate by the share of
the output that operand covers (``blocks * operand_size / output_size`` along the
concatenated dimension, integer arithmetic); regions nest.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from hlo_indexing.cost_model.element_types import byte_size, tensor_element_type
from hlo_indexing.cost_model.gpu_dot_model import DotProblem
from hlo_indexing.cost_model.gpu_model import DotVisit, TiledProgram, TiledVisit
from hlo_indexing.cost_model.gpu_op_costs import hlo_flops_per_element, mlir_flops_per_element
from hlo_indexing.devices.types import GpuDevice
from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.layout.types import Layout
from hlo_indexing.symbolic_tiling.experimental import tiled_hlo
from hlo_indexing.symbolic_tiling.experimental.tile import DimTile
from hlo_indexing.symbolic_tiling.experimental.hlo_graph import ArrayShape, HloGraph, Instruction, first_array
from hlo_indexing.symbolic_tiling.tiled_computation import TiledComputation, TiledInstruction
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion, TiledNode, defining_op


def _one(values: tuple[int, ...]) -> np.ndarray:
    return np.asarray([values], np.int64).reshape(1, len(values))


def _shape(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(value.type).shape)


def dot_problem(op: ir.Operation, transposed_downstream: bool | None = None) -> DotProblem | None:
    """The dot model's problem for a dot op, None when the model does not describe it
    (``IsSupported``: one non-contracting and one contracting dimension per side, no
    transpose downstream; ``transposed_downstream``: whether one is, when the caller
    knows, else found by walking the op's users)."""
    lhs, rhs = _shape(op.operands[0]), _shape(op.operands[1])
    dn = op_attrs.dot_dimensions(op, lhs, rhs)
    lhs_free = [d for d in range(len(lhs)) if d not in dn.lhs_batch and d not in dn.lhs_contracting]
    rhs_free = [d for d in range(len(rhs)) if d not in dn.rhs_batch and d not in dn.rhs_contracting]
    if len(lhs_free) != 1 or len(rhs_free) != 1 or len(dn.lhs_contracting) != 1:
        return None
    if transposed_downstream if transposed_downstream is not None else _transposed_downstream(op):
        return None
    return DotProblem(
        b=math.prod(lhs[d] for d in dn.lhs_batch),
        m=lhs[lhs_free[0]],
        n=rhs[rhs_free[0]],
        k=lhs[dn.lhs_contracting[0]],
        lhs_type=tensor_element_type(op.operands[0].type),
        rhs_type=tensor_element_type(op.operands[1].type),
        out_type=tensor_element_type(op.results[0].type),
    )


def _transposed_downstream(op: ir.Operation) -> bool:
    seen: set[ir.Operation] = set()
    stack = [op]
    while stack:
        current = stack.pop()
        for result in current.results:
            for use in result.uses:
                user = use.owner.operation
                if user in seen:
                    continue
                seen.add(user)
                if user.name.endswith(".transpose"):
                    return True
                stack.append(user)
    return False


def symbolic_program(
    fusion: TiledFusion,
    computation: TiledComputation,
    device: GpuDevice,
    layouts: Mapping[int, Layout] | None = None,
) -> TiledProgram:
    """The program of one symbolic tiled computation (``layouts``: per fusion parameter
    number, its layout when not row-major)."""
    by_serial = {node.serial: node for node in fusion.nodes}
    sizes = list(computation.tile_sizes)
    blocks = computation.num_programs
    visits: dict[int, TiledVisit] = {}
    for inst in computation.instructions:
        visits[id(inst)] = _symbolic_visit(fusion, inst, by_serial, sizes, blocks, device, layouts or {})
    for inst in computation.instructions:
        visit = visits[id(inst)]
        if visit.dot is not None:
            lhs = inst.operands[0]
            contracting = op_attrs.dot_dimensions(
                _op(inst.node), _shape(_op(inst.node).operands[0]), _shape(_op(inst.node).operands[1])
            ).lhs_contracting[0]
            visit.dot = DotVisit(visit.dot.problem, np.asarray([lhs.tile_sizes[contracting]], np.int64))
    roots = [(visits[id(root)], _bytes_of(root.node.value.type)) for root in computation.roots]
    return TiledProgram(np.asarray([blocks], np.int64), list(visits.values()), roots)


def _op(node: TiledNode) -> ir.Operation:
    op = defining_op(node.value)
    assert op is not None, "an instruction inside the fusion is an op result"
    return op


def _bytes_of(value_type: ir.Type) -> int:
    return math.prod(_shape_of_type(value_type)) * byte_size(tensor_element_type(value_type))


def _shape_of_type(value_type: ir.Type) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(value_type).shape)


def region_blocks(fusion: TiledFusion, node: TiledNode, by_serial: Mapping[int, TiledNode], sizes: list[int], blocks: int) -> int:
    """The blocks that load ``node``: ``blocks`` scaled along its region path (module
    docstring)."""
    for owner_serial, index in node.region:
        owner = by_serial[owner_serial]
        if owner.opcode == "dot":
            for p, parameter in enumerate(fusion.parameters):
                if parameter.contracting and parameter.owner == owner.name:
                    blocks *= -(-parameter.size // sizes[p])
        elif owner.opcode == "concatenate":
            op = _op(owner)
            axis = ir.IntegerAttr(op.attributes["dimension"]).value
            blocks = blocks * _shape(op.operands[index])[axis] // _shape(op.results[0])[axis]
    return blocks


def _symbolic_visit(
    fusion: TiledFusion,
    inst: TiledInstruction,
    by_serial: Mapping[int, TiledNode],
    sizes: list[int],
    blocks: int,
    device: GpuDevice,
    layouts: Mapping[int, Layout],
) -> TiledVisit:
    node = inst.node
    shape = _shape(node.value)
    element = tensor_element_type(node.value.type)
    number = node.parameter_number
    layout = layouts.get(number) if number is not None else None
    visit = TiledVisit(
        name=node.name,
        opcode=node.opcode,
        operand=number,
        shape=shape,
        element_bytes=byte_size(element),
        minor_to_major=layout.minor_to_major if layout is not None else tuple(reversed(range(len(shape)))),
        sizes=_one(inst.tile_sizes),
        strides=_one(inst.tile_strides),
        blocks=np.asarray([region_blocks(fusion, node, by_serial, sizes, blocks)], np.int64),
        present=np.ones(1, bool),
    )
    if number is None:
        op = _op(node)
        visit.flops_per_element = mlir_flops_per_element(op, device)
        if node.opcode == "dot":
            problem = dot_problem(op)
            if problem is not None:
                visit.dot = DotVisit(problem, np.zeros(1, np.int64))
    return visit


# ---------------------------------------------------------------- experimental tiling


def _evaluated(dims: tuple[DimTile, ...], field: str) -> tuple[int, ...]:
    """A tile's sizes or strides (``field``), constants once tile sizes are assigned."""
    return tuple(getattr(dim, field).evaluate({}) for dim in dims)


def experimental_program(computation: tiled_hlo.TiledComputation, graph: HloGraph, device: GpuDevice) -> TiledProgram:
    """The program of one experimental tiled computation (tile sizes assigned)."""
    space = computation.space
    num_blocks = math.prod(-(-d.size // (d.tile_size or d.size)) for d in space.dimensions if d.type == "parallel")
    fused = {id(i) for i in graph.computations[computation.roots[0].hlo.computation].instructions}
    visits: dict[int, TiledVisit] = {}
    for inst in computation.instructions:
        hlo = inst.hlo
        array = first_array(hlo.shape) if hlo.opcode != "get-tuple-element" else hlo.array
        parameter = int(hlo.text.split("parameter(", 1)[1].split(")", 1)[0]) if hlo.opcode == "parameter" and id(hlo) in fused else None
        visit = TiledVisit(
            name=inst.name,
            opcode=hlo.opcode,
            operand=parameter,
            shape=array.dims,
            element_bytes=byte_size(array.element_type),
            minor_to_major=array.minor_to_major,
            sizes=_one(_evaluated(inst.tile.dims, "size")),
            strides=_one(_evaluated(inst.tile.dims, "stride")),
            blocks=np.asarray([_experimental_blocks(inst, num_blocks)], np.int64),
            present=np.ones(1, bool),
        )
        if parameter is None:
            visit.flops_per_element = hlo_flops_per_element(hlo, graph, device)
            if hlo.opcode == "dot":
                problem = _dot_problem_hlo(hlo)
                if problem is not None and inst.operands:
                    contracting = hlo.int_list("lhs_contracting_dims")[0]
                    block_k = _evaluated(inst.operands[0].tile.dims, "size")[contracting]
                    visit.dot = DotVisit(problem, np.asarray([block_k], np.int64))
        visits[id(inst)] = visit
    roots = []
    for root in computation.roots:
        array = first_array(root.hlo.shape) if not isinstance(root.hlo.shape, tuple) else _output(root)
        roots.append((visits[id(root)], math.prod(array.dims) * byte_size(array.element_type)))
    return TiledProgram(np.asarray([num_blocks], np.int64), list(visits.values()), roots)


def _output(root: tiled_hlo.TiledInstruction) -> ArrayShape:
    shape = root.hlo.shape
    element = shape[root.output_index] if isinstance(shape, tuple) else shape
    return first_array(element)


def _experimental_blocks(inst: tiled_hlo.TiledInstruction, blocks: int) -> int:
    for owner, index in inst.region:
        hlo = owner.hlo
        if hlo.opcode in ("dot", "scaled-dot") and owner.operands:
            lhs = hlo.operands[0].array.dims
            lhs_tile = _evaluated(owner.operands[0].tile.dims, "size")
            for d in hlo.int_list("lhs_contracting_dims"):
                blocks *= -(-lhs[d] // lhs_tile[d])
        elif hlo.opcode == "concatenate":
            axis = hlo.int_list("dimensions")[0]
            blocks = blocks * hlo.operands[index].array.dims[axis] // hlo.array.dims[axis]
    return blocks


def _dot_problem_hlo(hlo: Instruction) -> DotProblem | None:
    lhs, rhs = hlo.operands[0].array, hlo.operands[1].array
    lhs_batch, rhs_batch = hlo.int_list("lhs_batch_dims"), hlo.int_list("rhs_batch_dims")
    lhs_contracting, rhs_contracting = hlo.int_list("lhs_contracting_dims"), hlo.int_list("rhs_contracting_dims")
    lhs_free = [d for d in range(len(lhs.dims)) if d not in lhs_batch and d not in lhs_contracting]
    rhs_free = [d for d in range(len(rhs.dims)) if d not in rhs_batch and d not in rhs_contracting]
    if len(lhs_free) != 1 or len(rhs_free) != 1 or len(lhs_contracting) != 1 or len(rhs_contracting) != 1:
        return None
    return DotProblem(
        b=math.prod(lhs.dims[d] for d in lhs_batch),
        m=lhs.dims[lhs_free[0]],
        n=rhs.dims[rhs_free[0]],
        k=lhs.dims[lhs_contracting[0]],
        lhs_type=lhs.element_type,
        rhs_type=rhs.element_type,
        out_type=hlo.array.element_type,
    )
