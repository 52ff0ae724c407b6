"""The GPU backend over many candidate tilings at once: XLA's model (:mod:`.gpu_model`)
and Triton's constraints (:mod:`.triton_constraints`) evaluated as numpy arrays, one
entry per candidate, without instantiating a tiled computation per candidate.

Each node of the symbolic analysis is one visit whose tile sizes, strides and block
counts are its symbolic expressions evaluated over the candidates. What the tiled
computation would add per candidate is reproduced:

* *deduplication*: two nodes of the same value are one tiled instruction at a candidate
  where their tile sizes, strides and offsets agree (XLA's ``ComputeTiledComputation``
  keys); offsets are compared as expressions of the tile origins, with the parameters
  that have a single tile at that candidate set to 0;
* *roots*: the output's node; fusions with several outputs, or nodes of one value read
  at runtime-dependent offsets, are evaluated one candidate at a time through the tiled
  computation (:func:`~.gpu_programs.symbolic_program`);
* *unimplemented tilings*: a negative stride or a concatenate tile across two operands
  (``tiling.unimplemented``), as the tiled computation refuses them.

Infinite estimates (XLA's register rule) are reported as the ``gpu.register-spill``
rule: XLA's own search drops them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import NamedTuple

import numpy as np

from hlo_indexing.cost_model import gpu_constants as constants
from hlo_indexing.cost_model.element_types import byte_size, xla_name
from hlo_indexing.cost_model.estimate import RULE_UNIMPLEMENTED, BreakdownItem, CandidateEstimates, ConstraintCheck
from hlo_indexing.cost_model.gpu_model import DotVisit, ProgramEstimates, TiledProgram, TiledVisit, estimate
from hlo_indexing.cost_model.gpu_op_costs import (
    ELEMENTWISE_OPCODES,
    XLA_OPCODE_OF_NODE,
    ZERO_COST_OPCODES,
    elementwise_flops,
    mlir_flops_per_element,
)
from hlo_indexing.cost_model.gpu_programs import dot_problem, symbolic_program
from hlo_indexing.cost_model.tile_arrays import TileArrays, failing, padded
from hlo_indexing.cost_model.triton_constraints import symbolic_checks
from hlo_indexing.devices.types import GpuDevice
from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import TilingError
from hlo_indexing.layout.types import Layout
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.points import distinct_rows
from hlo_indexing.symbolic_tiling.tiled_computation import tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion, TiledNode, defining_op


def _op(node: TiledNode) -> ir.Operation:
    op = defining_op(node.value)
    assert op is not None, "an instruction inside the fusion is an op result"
    return op


def _shape(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(value.type).shape)


def _nodes_of_values(fusion: TiledFusion) -> dict[object, list[TiledNode]]:
    """The fusion's nodes by value (in node order)."""
    by_value: dict[object, list[TiledNode]] = {}
    for node in fusion.nodes:
        found = by_value.get(node.value)
        if found is None:
            by_value[node.value] = [node]
        else:
            found.append(node)
    return by_value


def _needs_per_candidate(fusion: TiledFusion, by_value: Mapping[object, list[TiledNode]]) -> bool:
    """Whether the vectorized evaluation does not apply (module docstring); ``by_value``:
    :func:`_nodes_of_values`."""
    if len(fusion.root_candidates) != 1:
        return True
    return any(len(nodes) > 1 and any(node.indexing_map.runtime_vars for node in nodes) for nodes in by_value.values())


def _blocks(fusion: TiledFusion, node: TiledNode, by_serial: Mapping[int, TiledNode], flat_sizes: Sequence[np.ndarray],
            num_blocks: np.ndarray) -> np.ndarray:
    blocks = num_blocks
    for owner_serial, index in node.region:
        owner = by_serial[owner_serial]
        if owner.opcode == "dot":
            for p, parameter in enumerate(fusion.parameters):
                if parameter.contracting and parameter.owner == owner.name:
                    blocks = blocks * -(-parameter.size // flat_sizes[p])
        elif owner.opcode == "concatenate":
            op = _op(owner)
            axis = ir.IntegerAttr(op.attributes["dimension"]).value
            blocks = blocks * _shape(op.operands[index])[axis] // _shape(op.results[0])[axis]
    return blocks


def _origin_exprs(node: TiledNode) -> list[ir.AffineExpr]:
    """The node's tile offsets as expressions of the tile origins (range variables at
    their lower bounds)."""
    m = node.indexing_map
    ctx = m.context
    dims = [ax.dim(i, ctx) for i in range(m.num_dims)]
    symbols = [ax.constant(v.bounds.lower, ctx) for v in m.range_vars]
    return [ax.substitute(e, dims, symbols) for e in m.results]


def _same_offsets(first: TiledNode, second: TiledNode, single: np.ndarray) -> np.ndarray:
    """Per candidate: whether the two nodes' offsets agree at every program (``single``:
    ``[candidates, parameters]``, True where a parameter has one tile, its origin 0)."""
    a, b = _origin_exprs(first), _origin_exprs(second)
    if len(a) != len(b):
        return np.zeros(len(single), bool)
    used: set[int] = set()
    for expr in a + b:
        symbols: set[int] = set()
        ax.used_variables(expr, used, symbols)
    columns = sorted(used)
    result = np.zeros(len(single), bool)
    if not columns:
        return np.full(len(single), a == b)
    patterns, _, inverse = distinct_rows(single[:, columns])
    ctx = first.indexing_map.context
    for k, pattern in enumerate(patterns):
        dims = [ax.dim(i, ctx) for i in range(first.indexing_map.num_dims)]
        for column, is_single in zip(columns, pattern):
            if is_single:
                dims[column] = ax.constant(0, ctx)
        equal = all(ax.substitute(x, dims, []) == ax.substitute(y, dims, []) for x, y in zip(a, b))
        result[inverse == k] = equal
    return result


class _Static(NamedTuple):
    """What a node's visit needs that does not depend on the tiling."""

    number: int | None
    shape: tuple[int, ...]
    element_bytes: int
    flops_per_element: int
    op: ir.Operation | None


def _type_facts(value_type: ir.Type) -> tuple[tuple[int, ...], str, int]:
    """(shape, XLA element type name, bytes per element)."""
    ranked = ir.RankedTensorType(value_type)
    element = xla_name(ranked.element_type)
    return tuple(ranked.shape), element, byte_size(element)


def _static(node: TiledNode, device: GpuDevice, types: dict[ir.Type, tuple[tuple[int, ...], str, int]]) -> _Static:
    """A node's static facts; the op itself is read only when its flops or the dot
    model need more than its opcode and element type. Facts of a type are read once
    (``types``, shared by the fusions of a module)."""
    number = node.parameter_number
    value_type = node.value.type
    facts = types.get(value_type)
    if facts is None:
        facts = types[value_type] = _type_facts(value_type)
    shape, element, element_bytes = facts
    opcode = XLA_OPCODE_OF_NODE.get(node.opcode, node.opcode)
    op = None
    if number is not None or opcode in ZERO_COST_OPCODES:
        flops = 0
    elif opcode in ELEMENTWISE_OPCODES:
        flops = elementwise_flops(device, opcode, element)
    else:
        op = _op(node)
        flops = mlir_flops_per_element(op, device)
    if op is None and opcode in ("concatenate", "dot"):
        op = _op(node)
    return _Static(number, shape, element_bytes, flops, op)


def _program(fusion: TiledFusion, tiles: TileArrays, device: GpuDevice, layouts: Mapping[int, Layout],
             by_value: Mapping[object, list[TiledNode]]) -> tuple[TiledProgram, np.ndarray]:
    """The vectorized program and the candidates the tiled computation would refuse
    (``by_value``: :func:`_nodes_of_values`). Instructions that only compute (not a
    parameter, root, iota or dot, and the only node of their value) and share a tile and
    block count are one visit, their flops per element summed."""
    count = tiles.count
    flat = tiles.flat
    contracting = tuple(p.contracting for p in fusion.parameters)
    num_blocks = tiles.memo(("output tiles", contracting), lambda: _output_tiles(fusion, flat, count))
    by_serial: dict[int, TiledNode] = {}
    types: dict[ir.Type, tuple[tuple[int, ...], str, int]] = tiles.fact("type facts", dict)
    root = fusion.root_candidates[0][0]
    everywhere = tiles.memo("all candidates", lambda: np.ones(count, bool))
    implemented = everywhere
    present = _present(fusion, tiles, by_value)
    blocks_of: dict[tuple[object, ...], np.ndarray] = {}
    root_visit: TiledVisit | None = None
    root_bytes = 0
    kept: list[TiledVisit] = []
    groups: dict[tuple[object, ...], TiledVisit] = {}
    for node in fusion.nodes:
        info = _static(node, device, types)
        strides = tuple(node.tile.strides)
        nonnegative = tiles.memo(("strides >= 0", strides), lambda: _nonnegative(strides, tiles))
        if nonnegative is not None:
            implemented = implemented & nonnegative
        if node.opcode == "concatenate" and info.op is not None:
            implemented = implemented & _concatenate_aligned(info.op, tiles.columns(node.tile.sizes))
        mask = present.get(id(node))
        lone = info.number is not None or node is root or node.opcode in ("dot", "iota") or mask is not None
        group_key = (tuple(node.tile.sizes), node.region, node.hidden)
        if not lone and group_key in groups:
            groups[group_key].flops_per_element += info.flops_per_element
            continue
        block_key = (node.region, node.hidden)
        if block_key not in blocks_of:
            if node.region and not by_serial:
                by_serial.update((other.serial, other) for other in fusion.nodes)
            blocks_of[block_key] = _blocks(fusion, node, by_serial, flat, num_blocks)
        layout = layouts.get(info.number) if info.number is not None else None
        rank = len(info.shape)
        visit = TiledVisit(
            name=node.name,
            opcode=node.opcode,
            operand=info.number,
            shape=info.shape,
            element_bytes=info.element_bytes,
            minor_to_major=layout.minor_to_major if layout is not None else tuple(range(rank - 1, -1, -1)),
            sizes=tiles.columns(node.tile.sizes),
            strides=tiles.columns(strides),
            blocks=blocks_of[block_key],
            present=mask if mask is not None else everywhere,
            flops_per_element=info.flops_per_element,
            padded_elements=tiles.padded_elements(node.tile.sizes),
            always=True if mask is None else None,
        )
        if (info.number is not None or node is root) and not node.region:
            visit.key = (contracting, info.shape, visit.minor_to_major, info.element_bytes, tuple(node.tile.sizes),
                         strides)
        if node.opcode == "dot" and info.op is not None:
            problem = dot_problem(info.op, _transposed_downstream(fusion, node))
            if problem is not None:
                lhs = tiles.columns(node.operands[0].tile.sizes)
                lhs_k = op_attrs.dot_dimensions(info.op, _shape(info.op.operands[0]),
                                                _shape(info.op.operands[1])).lhs_contracting[0]
                visit.dot = DotVisit(problem, lhs[:, lhs_k])
        if node is root:
            root_visit, root_bytes = visit, math.prod(info.shape) * info.element_bytes
        kept.append(visit)
        if not lone:
            groups[group_key] = visit
    assert root_visit is not None, "the root is a lone node: it has its own visit"
    return TiledProgram(num_blocks, kept, [(root_visit, root_bytes)], ("output tiles", contracting)), implemented


def _output_tiles(fusion: TiledFusion, flat: Sequence[np.ndarray], count: int) -> np.ndarray:
    """Per candidate, the programs of the grid: the tiles of the non-contracting parameters."""
    num_blocks = np.ones(count, np.int64)
    for p, parameter in enumerate(fusion.parameters):
        if not parameter.contracting:
            num_blocks = num_blocks * -(-parameter.size // flat[p])
    return num_blocks


def _nonnegative(strides: tuple[ir.AffineExpr, ...], tiles: TileArrays) -> np.ndarray | None:
    """Per candidate, whether every stride is nonnegative; None when all are everywhere
    (constant strides, read without evaluating them)."""
    constants = [ax.constant_value(e) for e in strides]
    if all(c is not None and c >= 0 for c in constants):
        return None
    ok = np.logical_and.reduce(tiles.columns(strides) >= 0, axis=1)
    return None if ok.all() else ok


def _transposed_downstream(fusion: TiledFusion, dot: TiledNode) -> bool:
    """Whether a transpose uses the dot's result, directly or through other nodes."""
    users: dict[int, list[TiledNode]] = {}
    for node in fusion.nodes:
        for operand in node.operands:
            users.setdefault(id(operand), []).append(node)
    stack, seen = [dot], {id(dot)}
    while stack:
        for user in users.get(id(stack.pop()), []):
            if user.opcode == "transpose":
                return True
            if id(user) not in seen:
                seen.add(id(user))
                stack.append(user)
    return False


def _concatenate_aligned(op: ir.Operation, sizes: np.ndarray) -> np.ndarray:
    axis = ir.IntegerAttr(op.attributes["dimension"]).value
    tile = np.maximum(sizes[:, axis], 1)
    ok = np.ones(len(sizes), bool)
    start = 0
    for operand in op.operands:
        ok &= start % tile == 0
        start += _shape(operand)[axis]
    return ok


def _present(fusion: TiledFusion, tiles: TileArrays, by_value: Mapping[object, list[TiledNode]]) -> dict[int, np.ndarray]:
    """For the nodes of a value read through several nodes (``by_value``:
    :func:`_nodes_of_values`): per candidate, whether the node is its own tiled
    instruction (False where an earlier node of the same value has the same tile sizes,
    strides and offsets: XLA's deduplication)."""
    count = tiles.count
    present: dict[int, np.ndarray] = {}
    for nodes in by_value.values():
        if len(nodes) < 2:
            continue
        single = tiles.memo("single tile", lambda: _single_tile(fusion, tiles))
        for node in nodes:
            present[id(node)] = np.ones(count, bool)
        for first, second in combinations(nodes, 2):
            if len(first.tile.sizes) != len(second.tile.sizes):
                continue
            same = ((tiles.columns(first.tile.sizes) == tiles.columns(second.tile.sizes)).all(axis=1)
                    & (tiles.columns(first.tile.strides) == tiles.columns(second.tile.strides)).all(axis=1)
                    & present[id(first)])
            # Programs iterate over the hidden (contracting) parameters too: the two agree
            # where those of one and not the other have a single tile.
            for p in set(first.hidden) ^ set(second.hidden):
                same &= single[:, p]
            if same.any():
                same &= _same_offsets(first, second, single)
            present[id(second)] = present[id(second)] & ~same
    return present


def _single_tile(fusion: TiledFusion, tiles: TileArrays) -> np.ndarray:
    """``[candidates, parameters]``: True where a parameter has a single tile."""
    if not fusion.parameters:
        return np.ones((tiles.count, 0), bool)
    return np.stack([tiles.flat[p] >= parameter.size for p, parameter in enumerate(fusion.parameters)], axis=1)


def evaluate_candidates(
    fusion: TiledFusion,
    tiles: TileArrays,
    device: GpuDevice,
    layouts: Mapping[int, Layout] | None = None,
) -> CandidateEstimates:
    """XLA's model and Triton's constraints for every candidate of ``tiles``, with the
    warps XLA's search would choose."""
    count = tiles.count
    checks = list(symbolic_checks(fusion, tiles, device))
    program = None
    register_checks: list[ConstraintCheck] = []
    by_value = _nodes_of_values(fusion)
    if _needs_per_candidate(fusion, by_value):
        figures, implemented = _per_candidate(fusion, tiles.flat, device, layouts or {})
    else:
        program, implemented = _program(fusion, tiles, device, layouts or {}, by_value)
        register_checks = _register_checks(program, device)
        fits = tiles.memo("all candidates", lambda: np.ones(count, bool))
        for check in register_checks:
            fits = fits & check.ok
        figures = estimate(program, device, cache=tiles, fits=fits)
    checks.append(ConstraintCheck(RULE_UNIMPLEMENTED, "", implemented, lambda i: (
        "the tiled computation cannot be built: a negative stride, a concatenate tile across two operands, or an "
        "extra output its tiles do not partition")))
    if program is not None:
        checks += register_checks
    else:
        spills = figures.spills & implemented
        checks.append(ConstraintCheck("gpu.register-spill", "", ~spills, lambda i: (
            f"a root, parameter or iota tile has more padded elements than {constants.REGISTER_FRACTION_FOR_TILES:.0%} "
            f"of the {device.registers_per_block_limit} registers of a block (XLA estimates it as infinite)")))
    checks = [check for check in checks if failing(check.ok) is not None]  # only the rules some candidate breaks
    return CandidateEstimates(
        checks=checks,
        exec_time_ns=figures.exec_ns,
        read_time_ns=figures.read_ns,
        write_time_ns=figures.write_ns,
        compute_time_ns=figures.compute_ns,
        bytes_read=figures.bytes_read,
        bytes_written=np.full(count, figures.bytes_written, np.int64),
        flops=figures.flops,
        num_blocks=figures.num_blocks,
        num_warps=figures.num_warps,
        breakdown=lambda i: _breakdown(figures, i),
    )


def _register_checks(program: TiledProgram, device: GpuDevice) -> list[ConstraintCheck]:
    """XLA's register rule (:func:`~.gpu_model.fits_in_registers`) per tile it looks at."""
    if device.registers_per_block_limit is None:
        return []
    limit = constants.REGISTER_FRACTION_FOR_TILES * device.registers_per_block_limit
    checked = [root for root, _ in program.roots]
    roots = {id(root) for root in checked}
    checked += [v for v in program.visits if (v.operand is not None or v.opcode == "iota") and id(v) not in roots]
    checks = []
    for visit in checked:
        fits = visit.padded_elements <= limit
        ok = failing(fits if visit.always else ~visit.present | fits)
        if ok is None:
            continue

        def describe(i: int, visit: TiledVisit = visit) -> str:
            sizes = ", ".join(str(int(v)) for v in padded(visit.sizes[i]))
            return (f"{visit.name}: padded tile [{sizes}] has {int(visit.padded_elements[i])} elements, more than "
                    f"{constants.REGISTER_FRACTION_FOR_TILES:.0%} of the {device.registers_per_block_limit} registers of a "
                    f"block ({int(limit)}): XLA estimates the tiling as infinite")

        checks.append(ConstraintCheck("gpu.register-spill", visit.name, ok, describe))
    return checks


def _breakdown(figures: ProgramEstimates, index: int) -> tuple[BreakdownItem, ...]:
    return figures.at(index).breakdown


def _per_candidate(fusion: TiledFusion, flat: Sequence[np.ndarray], device: GpuDevice,
                   layouts: Mapping[int, Layout]) -> tuple[ProgramEstimates, np.ndarray]:
    """The figures of each candidate through its tiled computation (fusions the
    vectorized path does not cover); a candidate the tiled computation refuses is
    infinite and unimplemented."""
    count = len(flat[0]) if flat else 1
    rows: list[ProgramEstimates | None] = []
    implemented = np.ones(count, bool)
    for i in range(count):
        sizes = [int(column[i]) for column in flat]
        if not fusion.satisfies_constraints(sizes):  # never ranked: not worth a tiled computation
            implemented[i] = False
            rows.append(None)
            continue
        try:
            computation = tiled_computation(fusion, sizes, constraints_are_known_satisfied=True)
        except TilingError:
            implemented[i] = False
            rows.append(None)
            continue
        rows.append(estimate(symbolic_program(fusion, computation, device, layouts), device))
    return _stacked(rows, count), implemented


def _stacked(rows: list[ProgramEstimates | None], count: int) -> ProgramEstimates:
    inf = np.inf

    def column(name: str, missing: float) -> np.ndarray:
        return np.asarray([getattr(r, name)[0] if r is not None else missing for r in rows])

    reads: dict[int, tuple[str, np.ndarray, np.ndarray]] = {}
    for i, r in enumerate(rows):
        if r is None:
            continue
        for key, (name, time, total) in r.operand_reads.items():
            entry = reads.setdefault(key, (name, np.zeros(count), np.zeros(count, np.int64)))
            entry[1][i], entry[2][i] = time[0], total[0]
    return ProgramEstimates(
        exec_ns=column("exec_ns", inf), read_ns=column("read_ns", inf), write_ns=column("write_ns", inf),
        compute_ns=column("compute_ns", inf), bytes_read=column("bytes_read", 0).astype(np.int64),
        bytes_written=next((r.bytes_written for r in rows if r is not None), 0),
        flops=column("flops", 0).astype(np.int64), num_blocks=column("num_blocks", 0).astype(np.int64),
        num_warps=column("num_warps", 1).astype(np.int64), spills=column("spills", 0).astype(bool),
        operand_reads=reads, dot_exec_ns=column("dot_exec_ns", 0.0),
    )
