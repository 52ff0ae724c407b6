"""The TPU backend over many candidate tilings at once (the ``tpu`` entry of
:data:`~.backends.EVALUATORS`): the candidates :func:`.tpu.assess_tpu` would be asked
about, judged with numpy arrays, with the same rules, messages and figures.

1. **Block shapes** (:func:`shape_checks`). Every fusion parameter and the output is read
   or written through one tile per candidate (the symbolic tiles of its nodes, evaluated
   over the candidates by :class:`~.tile_arrays.TileArrays`); Mosaic's rules on the last
   two dimensions (:func:`.mosaic.shape_ok`, the same rules the Pallas checker applies)
   reject most candidates without building anything.
2. **Kernels.** The candidates left that satisfy the fusion's constraints, the fewest
   grid steps first, at most :data:`~hlo_indexing.limits.MAX_FOOTPRINTS_PER_FUSION` of
   them (:func:`.per_tiling.asked_candidates`: the fewest grid steps are the ones the
   model favours, a step costing :data:`.tpu_figures.STEP_OVERHEAD_NS`), are judged
   together: whether the tiles are blocks (``mosaic.not-a-block``), the VMEM budget
   (``mosaic.vmem``) and the estimate (:func:`.tpu_figures.tpu_figures`).

The kernels are judged in closed form when the fusion's structure allows (a
:class:`_KernelPlan`): one output; no concatenate and no runtime offsets; the map of
every parameter and output node, and of every node of a value read through several
different tiles, affine-linear in the tiling parameters and range variables, without
constraints, over the whole tiling domain. A tile's offset along each dimension is then
``k + sum(c_p * s_p * t_p)`` at grid index ``t`` (``s_p`` the tile size of parameter
``p``; ``t_p`` 0 for a contracting parameter of another dot), so it is a block exactly
when ``k`` and every ``c_p * s_p`` of an axis with more than one step are multiples of
its size, and its block index is linear in ``t``: along the grid in Pallas's order it
changes each time an axis advances whose step (its own coefficient, minus the inner
axes' coefficients times their extents, which wrap) is not zero. The nodes of one value
are one tiled instruction at a candidate where their sizes, strides and offsets agree
(:func:`_present`): a parameter read through two different tiles there has no BlockSpec,
and an instruction's work counts once. A parameter or output read through one tile may
also have pairs of results ``d_p floordiv c, d_p mod c`` (a reshape splitting the
dimension of parameter ``p``, :data:`Split`): its offsets there are ``(s_p * t_p
floordiv c, s_p * t_p mod c)``, multiples of the block where :func:`_split_blocks` says,
and its block index is one-to-one in ``t_p``, so it moves at every step along ``p``.
Other fusions, and candidates with a negative stride, a split whose parameter's tile size
neither divides ``c`` nor is a multiple of it, or more grid steps than the map
enumerations of :func:`.tpu.assess_tpu` take
(:data:`~hlo_indexing.limits.MAX_PALLAS_GRID_POINTS`,
:data:`~hlo_indexing.limits.MAX_ENUMERATION_POINTS`), are judged one by one
(:func:`.per_tiling.per_tiling` of :func:`.tpu.assess_tpu`). The message of a rejected
kernel is :func:`.tpu.assess_tpu`'s, asked when it is read. What the closed form finds
of a tile, an operand or a type is kept in the :class:`~.tile_arrays.TileArrays` (its
memo and facts) and shared by the fusions ranked with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from hlo_indexing.cost_model import mosaic
from hlo_indexing.cost_model.element_types import byte_size, xla_name
from hlo_indexing.cost_model.estimate import BreakdownItem, CandidateEstimates, ConstraintCheck
from hlo_indexing.cost_model.per_tiling import asked_candidates, grid_programs, not_evaluated_check, per_tiling
from hlo_indexing.cost_model.tile_arrays import TileArrays
from hlo_indexing.cost_model.tpu import NO_VECTOR_WORK, RULE_NOT_A_BLOCK, assess_tpu
from hlo_indexing.cost_model.tpu_figures import (
    DotWork,
    OperandTraffic,
    TpuFigures,
    dot_operations,
    mxu_rate,
    tpu_figures,
    vector_registers,
)
from hlo_indexing.devices.types import TpuDevice
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.layout.types import Layout
from hlo_indexing.limits import MAX_ENUMERATION_POINTS, MAX_PALLAS_GRID_POINTS
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.linear_form import linearize
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion, TiledNode


def shape_checks(fusion: TiledFusion, tiles: TileArrays, device: TpuDevice) -> list[ConstraintCheck]:
    """Mosaic's shape rules on every fusion parameter tile and output tile, over all the
    candidates (:func:`.mosaic.shape_ok`)."""
    checks = []
    outputs = {id(node): k for k, candidates in enumerate(fusion.root_candidates) for node in candidates}
    types: TypeFacts = tiles.fact("tpu types", dict)
    for node in fusion.nodes:
        number = node.parameter_number
        if number is None and id(node) not in outputs:
            continue
        subject = f"parameter {number}" if number is not None else f"output {outputs[id(node)]}"
        array, element_type = type_facts(node.value, types)
        if not array:
            continue  # a scalar is read from SMEM, whole: no shape rule
        sizes = tiles.columns(node.tile.sizes)
        ok = tiles.memo(("mosaic shape", node.tile.sizes, array, element_type, device.lanes, device.sublanes),
                        lambda: mosaic.shape_ok(sizes, array, element_type, device))

        def describe(index: int, sizes: np.ndarray = sizes, array: tuple[int, ...] = array, element_type: str = element_type, subject: str = subject) -> str:
            block = mosaic.TpuBlock(subject, tuple(int(s) for s in sizes[index]), array, element_type)
            found = mosaic.block_rejections(block, device)
            return found[0].message if found else f"{subject}: block {tuple(sizes[index])} rejected"

        rule = mosaic.RULE_SHAPE if len(array) >= 2 else mosaic.RULE_SHAPE_1D
        checks.append(ConstraintCheck(rule, subject, ok, describe))
    return checks


#: The backend judging each kernel alone (fusions and candidates the closed form does not cover).
one_by_one = per_tiling(assess_tpu, shape_checks)  # type: ignore[arg-type]  # takes a TpuDevice
#: Grid steps above which a candidate is judged alone: the map enumerations of
#: :func:`.tpu.assess_tpu` stop there (it then reports a limit or an upper bound).
_MAX_CLOSED_FORM_STEPS = min(MAX_PALLAS_GRID_POINTS, MAX_ENUMERATION_POINTS)


#: Two dimensions of a tile whose offsets are ``origin_p floordiv c`` and ``origin_p mod
#: c`` (a reshape splitting the dimension of parameter ``p``): (the floordiv's dimension,
#: the mod's, ``p``, ``c``).
Split = tuple[int, int, int, int]


@dataclass(frozen=True)
class _Tile:
    """A node's tile in the closed form: offsets ``constants[r] + sum(coefficients[r, p]
    * origin_p)`` along each dimension ``r``, over the origins of the parameters its
    programs iterate over (``active``; the other columns are 0); its strides when they
    are constants (``constant_strides``); the pairs of dimensions a reshape splits one
    parameter's origin into (``splits``: :data:`Split`, their rows 0 in ``constants``
    and ``coefficients``). Only ``node`` is set for a tile whose offsets are not needed
    (the one tile of a value doing vector work)."""

    node: TiledNode
    constants: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    coefficients: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int64))
    active: tuple[int, ...] = ()
    constant_strides: tuple[int, ...] | None = None
    splits: tuple[Split, ...] = ()


@dataclass(frozen=True)
class _Value:
    """A value whose nodes matter (a parameter, the output, a dot, vector work): its
    nodes with distinct tiles and maps, in node order (at a candidate, a node is its own
    tiled instruction unless an earlier one has the same tile there)."""

    tiles: tuple[_Tile, ...]
    element_type: str


@dataclass(frozen=True)
class _Operand:
    """A kernel operand: its value, ``subject``, array ``shape`` and whether it is written."""

    value: _Value
    subject: str
    written: bool
    shape: tuple[int, ...]


@dataclass(frozen=True)
class _KernelPlan:
    """What the closed form needs of a fusion (module docstring): the operands, the
    dots (each tile of a dot's value, its contracting parameters) in the tiled
    computation's order (their times are summed in it), the vector work
    of values with one tile (tile sizes, element type, how many values) and of values
    with several (:func:`_present` decides which are instructions)."""

    operands: tuple[_Operand, ...]
    dots: tuple[tuple[_Value, int, tuple[int, ...]], ...]
    vector_work: tuple[tuple[tuple[ir.AffineExpr, ...], str, int], ...]
    shared_vector_work: tuple[_Value, ...]
    axes: tuple[int, ...]
    num_parallel: int
    contracting: bool
    #: The nodes whose strides are not constants >= 0 (the tiled computation refuses a
    #: negative stride: such candidates are judged one by one).
    variable_strides: tuple[TiledNode, ...]
    #: The splits of the operands' tiles (candidates they leave undecided,
    #: :func:`_split_covered`, are judged one by one).
    splits: tuple[Split, ...]


#: Closed-form offsets of a tile (constants, coefficients, active parameters), its
#: constant strides and splits: :class:`_Tile`'s fields after its node.
OffsetFact = tuple[np.ndarray, np.ndarray, tuple[int, ...], tuple[int, ...] | None, tuple[Split, ...]]
#: :data:`OffsetFact` of each tile, by its map, hidden parameters, strides and the
#: fusion's parameters (None: not in closed form).
OffsetFacts = dict[tuple[object, ...], OffsetFact | None]


def _linear_tile(node: TiledNode, fusion: TiledFusion, known: OffsetFacts,
                 parameters: tuple[tuple[int, bool], ...]) -> _Tile | None:
    """``node``'s tile with its offsets in closed form: its map's results with every
    range variable at its lower bound; None when a result is neither affine-linear nor
    one of a pair ``d_p floordiv c, d_p mod c`` (:data:`Split`), or the map has
    constraints or runtime variables, or a dimension's range is not the whole parameter.
    ``known``: the facts of tiles met before (shared by a module's fusions);
    ``parameters``: the fusion's tiling parameters, (size, contracting) each."""
    key = (node.indexing_map, node.hidden, node.tile.strides, parameters)
    if key not in known:
        known[key] = _offset_facts(node, fusion)
    found = known[key]
    return None if found is None else _Tile(node, *found)


def _offset_facts(node: TiledNode, fusion: TiledFusion) -> OffsetFact | None:
    """What :func:`_linear_tile` finds of ``node``'s tile."""
    m = node.indexing_map
    if m.constraints or m.runtime_vars or m.num_dims != len(fusion.parameters):
        return None
    if any(v.bounds.lower != 0 or v.bounds.upper != p.size - 1 for v, p in zip(m.dim_vars, fusion.parameters)):
        return None
    active = tuple(p for p, param in enumerate(fusion.parameters) if not param.contracting or p in node.hidden)
    lower = [v.bounds.lower for v in m.range_vars]
    constants = np.zeros(m.num_results, np.int64)
    coefficients = np.zeros((m.num_results, m.num_dims), np.int64)
    results = m.results
    splits = _splits(results)
    split_rows = {row for split in splits for row in split[:2]}
    for r, expr in enumerate(results):
        if r in split_rows:
            continue
        form = linearize(expr)
        constants[r] = form.constant
        for atom, coefficient in form.terms.items():
            typed = ax.typed(atom)
            if isinstance(typed, ax.Dim):
                if typed.position in active:
                    coefficients[r, typed.position] += coefficient
            elif isinstance(typed, ax.Sym) and typed.position < len(lower):
                constants[r] += coefficient * lower[typed.position]
            else:
                return None
    strides = [ax.constant_value(e) for e in node.tile.strides]
    constant_strides = None if any(s is None for s in strides) else tuple(int(s) for s in strides if s is not None)
    return constants, coefficients, active, constant_strides, tuple(split for split in splits if split[2] in active)


def _splits(results: Sequence[ir.AffineExpr]) -> list[Split]:
    """The pairs of consecutive results ``d_p floordiv c, d_p mod c`` (``c`` > 0)."""
    found: list[Split] = []
    for r in range(len(results) - 1):
        div, mod = ax.typed(results[r]), ax.typed(results[r + 1])
        if (type(div) is ax.FloorDiv and type(mod) is ax.Mod and div.lhs == mod.lhs and div.rhs == mod.rhs
                and type(div.lhs) is ax.Dim and type(div.rhs) is ax.Const and div.rhs.value > 0):
            found.append((r, r + 1, div.lhs.position, div.rhs.value))
    return found


def _tile_facts(node: TiledNode) -> tuple[object, ...]:
    return (node.tile.sizes, node.tile.strides, node.indexing_map, node.hidden)


#: Shape and XLA element type of each tensor type met (shared by a module's fusions).
TypeFacts = dict[ir.Type, tuple[tuple[int, ...], str]]


def type_facts(value: ir.Value, types: TypeFacts) -> tuple[tuple[int, ...], str]:
    """The shape and XLA element type of ``value``'s tensor type, read once per type."""
    found = types.get(value.type)
    if found is None:
        tensor = ir.RankedTensorType(value.type)
        found = types[value.type] = (tuple(tensor.shape), xla_name(tensor.element_type))
    return found


def _distinct(nodes: list[TiledNode]) -> list[TiledNode]:
    """The first of ``nodes`` (one value's, in order) with each distinct tile and map."""
    if len(nodes) == 1:
        return nodes
    first_of: dict[tuple[object, ...], TiledNode] = {}
    for node in nodes:
        first_of.setdefault(_tile_facts(node), node)
    return list(first_of.values())


def _linear_value(distinct: list[TiledNode], fusion: TiledFusion, element_type: str, known: OffsetFacts,
                  parameters: tuple[tuple[int, bool], ...]) -> _Value | None:
    """The value of ``distinct`` nodes (:func:`_distinct`), each tile in closed form
    (None when one is not, or when one of several has splits: :func:`_present` compares
    linear offsets; ``parameters`` as :func:`_linear_tile`'s)."""
    tiles = []
    for node in distinct:
        tile = _linear_tile(node, fusion, known, parameters)
        if tile is None or (tile.splits and len(distinct) > 1):
            return None
        tiles.append(tile)
    return _Value(tuple(tiles), element_type)


def kernel_plan(fusion: TiledFusion, facts: dict[object, object] | None = None) -> _KernelPlan | None:
    """The closed form's description of ``fusion``'s kernels, or None when it does not
    apply (module docstring). ``facts``: what the fusions ranked before found (their
    :func:`type_facts` and tiles' offsets; a :class:`~.tile_arrays.TileArrays`' facts)."""
    facts = facts if facts is not None else {}
    types = cast(TypeFacts, facts.setdefault("tpu types", {}))
    known = cast(OffsetFacts, facts.setdefault("tpu offsets", {}))
    if len(fusion.root_candidates) != 1:
        return None
    root = fusion.root_candidates[0][0]
    by_value: dict[object, list[TiledNode]] = {}
    for node in fusion.nodes:
        if node.opcode == "concatenate" or node.indexing_map.runtime_vars:
            return None
        by_value.setdefault(node.value, []).append(node)
    dots, shared_vector_work = [], []
    parameters_key = tuple((p.size, p.contracting) for p in fusion.parameters)
    vector_work: dict[tuple[tuple[ir.AffineExpr, ...], str], int] = {}
    parameters: dict[int, _Value] = {}
    for nodes in by_value.values():
        first = nodes[0]
        number = first.parameter_number
        is_dot = first.opcode == "dot"
        if number is None and not is_dot and first.opcode in NO_VECTOR_WORK:
            continue
        if is_dot:
            element_type = type_facts(first.operands[0].value, types)[1] if first.operands else "bf16"
        else:
            element_type = type_facts(first.value, types)[1]
        distinct = _distinct(nodes)
        if number is None and len(distinct) == 1 and not is_dot:  # vector work of one tile: its offsets not needed
            key = (first.tile.sizes, element_type)
            vector_work[key] = vector_work.get(key, 0) + 1
            continue
        value = (_linear_value(distinct, fusion, element_type, known, parameters_key) if number is not None
                 or len(distinct) > 1 else _Value((_Tile(first),), element_type))
        if value is None:
            return None
        if number is not None:
            parameters[number] = value
        elif is_dot:
            contracting = tuple(p for p, param in enumerate(fusion.parameters) if param.contracting and param.owner == first.name)
            dots += [(value, k, contracting) for k in range(len(value.tiles))]
        else:
            shared_vector_work.append(value)
    output = _linear_tile(root, fusion, known, parameters_key)
    if output is None:
        return None
    operands = [_Operand(value, f"parameter {number}", False, type_facts(value.tiles[0].node.value, types)[0])
                for number, value in sorted(parameters.items())]
    shape, element_type = type_facts(root.value, types)
    operands.append(_Operand(_Value((output,), element_type), "output 0", True, shape))
    parallel = [p for p, (_, contracting) in enumerate(parameters_key) if not contracting]
    axes = tuple(parallel + [p for p, (_, contracting) in enumerate(parameters_key) if contracting])
    num_parallel = len(parallel)
    constant = cast(dict[tuple[ir.AffineExpr, ...], bool], facts.setdefault("tpu constant strides", {}))
    variable_strides = tuple(node for node in fusion.nodes if not _constant_nonnegative(node.tile.strides, constant))
    if len(dots) > 1:
        position = {id(node): k for k, node in enumerate(fusion.nodes)}
        dots.sort(key=lambda dot: position[id(dot[0].tiles[dot[1]].node)])  # the instructions' order
    splits = tuple(dict.fromkeys(split for operand in operands for split in operand.value.tiles[0].splits))
    return _KernelPlan(tuple(operands), tuple(dots), tuple((sizes, element_type, n) for (sizes, element_type), n in vector_work.items()),
                       tuple(shared_vector_work), axes, num_parallel, num_parallel < len(fusion.parameters), variable_strides,
                       splits)


def _constant_nonnegative(strides: tuple[ir.AffineExpr, ...], known: dict[tuple[ir.AffineExpr, ...], bool]) -> bool:
    """Whether every stride is a constant >= 0 (``known``: the strides met before)."""
    found = known.get(strides)
    if found is None:
        found = known[strides] = all((stride := ax.constant_value(e)) is not None and stride >= 0 for e in strides)
    return found


def _strides(node: TiledNode, sizes: Sequence[np.ndarray]) -> np.ndarray:
    """``[candidates, rank]``: the node's tile strides at ``sizes``, clamped to the
    tile's bounds as :meth:`~hlo_indexing.symbolic_tiling.symbolic_tile.SymbolicTile.evaluate` does."""
    count = len(sizes[0]) if sizes else 1
    columns = []
    clamped: list[np.ndarray] | None = None
    for expr in node.tile.strides:
        value = ax.constant_value(expr)
        if value is None:
            if clamped is None:
                clamped = [np.minimum(s, b.upper) for s, b in zip(sizes, node.tile.tile_size_bounds)]
            defined = np.ones(count, bool)
            columns.append(np.broadcast_to(ax.evaluate_array(expr, clamped, [], defined), (count,)).astype(np.int64))
        else:
            columns.append(np.full(count, value, np.int64))
    return np.stack(columns, axis=1) if columns else np.ones((count, 0), np.int64)


def evaluate_candidates(fusion: TiledFusion, tiles: TileArrays, device: TpuDevice,
                        layouts: Mapping[int, Layout] | None = None) -> CandidateEstimates:
    """Mosaic's rules and the TPU model for every candidate of ``tiles`` (module
    docstring; ``layouts`` are not used: the model reads operands in their logical
    layout)."""
    early = shape_checks(fusion, tiles, device)
    passing = np.ones(tiles.count, bool)
    for check in early:
        passing &= check.ok
    asked = asked_candidates(fusion, tiles, passing)
    if not len(asked):
        return _estimates(fusion, tiles, device, early, passing, asked, np.zeros(0, bool), np.zeros(0, bool), None)
    plan = kernel_plan(fusion, tiles.facts)
    if plan is None:
        return one_by_one(fusion, tiles, device, layouts)
    sizes = [column[asked] for column in tiles.flat]
    tile_counts = [column[asked] for column in _tile_counts(fusion, tiles)]
    steps = grid_programs(fusion, tiles)[asked]
    if steps.max() > _MAX_CLOSED_FORM_STEPS or any(_negative_strides(node, tiles)[asked].any()
                                                    for node in plan.variable_strides) or \
            not all(_split_covered(split, tiles)[asked].all() for split in plan.splits):
        return one_by_one(fusion, tiles, device, layouts)
    return _closed_form(fusion, tiles, device, plan, early, passing, asked, sizes, tile_counts, steps)


def _split_covered(split: Split, tiles: TileArrays) -> np.ndarray:
    """Per candidate, whether the closed form decides if a split's offsets are multiples
    of its block (:func:`_split_blocks`): the tile size of its parameter divides ``c``
    or ``c`` divides it (the constraint a reshape's tile puts on it)."""
    _, _, p, c = split
    return tiles.memo(("split covered", p, c), lambda: (tiles.flat[p] % c == 0) | (c % tiles.flat[p] == 0))


def _split_blocks(split: Split, block: np.ndarray, grid: _AskedGrids) -> np.ndarray:
    """Per asked candidate (each covered, :func:`_split_covered`), whether the offsets
    ``(s * t floordiv c, s * t mod c)`` of a split at every grid index ``t`` (``s`` the
    tile size of its parameter) are multiples of the block's sizes ``(b0, b1)``: with
    ``c | s``, ``b0 | s / c``; with ``s | c``, ``b1 | s`` and, when ``t * s`` reaches
    ``c``, ``b0`` is 1. One tile is always a block."""
    div_row, mod_row, p, c = split
    s, count, b0, b1 = grid.sizes[:, p], grid.tiles[:, p], block[:, div_row], block[:, mod_row]
    return ((count == 1) | ((s % c == 0) & ((s // c) % b0 == 0))
            | ((c % s == 0) & (s % b1 == 0) & ((b0 == 1) | (count * s <= c))))


def _tile_counts(fusion: TiledFusion, tiles: TileArrays) -> list[np.ndarray]:
    """Per tiling parameter, its number of tiles at every candidate (once per grid)."""
    parameter_sizes = tuple(param.size for param in fusion.parameters)
    return tiles.memo(("tile counts", parameter_sizes),
                      lambda: [-(-size // column) for size, column in zip(parameter_sizes, tiles.flat)])


def _negative_strides(node: TiledNode, tiles: TileArrays) -> np.ndarray:
    """Per candidate, whether a stride of ``node``'s tile is negative (once per strides)."""
    return tiles.memo(("negative strides", node.tile.strides, tuple(node.tile.tile_size_bounds)),
                      lambda: np.logical_or.reduce(_strides(node, tiles.flat) < 0, axis=1))


def _closed_form(fusion: TiledFusion, tiles: TileArrays, device: TpuDevice, plan: _KernelPlan,
                 early: list[ConstraintCheck], passing: np.ndarray, asked: np.ndarray, sizes: list[np.ndarray],
                 tile_counts: list[np.ndarray], steps: np.ndarray) -> CandidateEstimates:
    """The kernels of the ``asked`` candidates judged together (module docstring)."""
    count = len(asked)
    # one grid step at every asked candidate (the small fusions of a model): no axis
    # advances, every operand moves once and the offsets' steps do not matter
    grid = None if steps.max() == 1 else _asked_grids(fusion, tiles, asked, plan)
    blocks = np.ones(count, bool)
    traffic, vmem = [], np.zeros(count, np.int64)
    judged: dict[tuple[object, ...], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    asked_key = asked.tobytes()
    for operand in plan.operands:
        if len(operand.value.tiles) > 1:  # a parameter read through two different tiles has no BlockSpec
            blocks &= sum(_present(operand.value, tiles, asked, sizes, tile_counts)) == 1
        spec = operand.value.tiles[0]
        # operands alike (many parameters of an optimizer's update, fusions of the same
        # shapes) are judged once
        key = (spec.node.tile.sizes, spec.constants.tobytes(), spec.coefficients.tobytes(), spec.splits,
               spec.constant_strides if spec.constant_strides is not None else
               (spec.node.tile.strides, tuple(spec.node.tile.tile_size_bounds)), operand.shape,
               operand.value.element_type, operand.written)
        if key not in judged:
            judged[key] = tiles.memo(("tpu operand", key, asked_key, plan.axes, plan.contracting, device),
                                     lambda: _operand_figures(operand, tiles, asked, sizes, grid, plan, device))
        ok, block_bytes, transfers, operand_vmem = judged[key]
        blocks &= ok
        traffic.append(OperandTraffic(operand.subject, operand.written, block_bytes, transfers))
        vmem = vmem + operand_vmem
    dots = []
    present: dict[int, list[np.ndarray]] = {}
    for value, k, contracting in plan.dots:
        if id(value) not in present:
            present[id(value)] = _present(value, tiles, asked, sizes, tile_counts)
        tile = np.maximum(tiles.columns(value.tiles[k].node.tile.sizes)[asked], 1)
        k_step = np.ones(count, np.int64)
        for p in contracting:
            k_step = k_step * sizes[p]
        operations = dot_operations(tile, k_step, device) * present[id(value)][k]
        dots.append(DotWork(operations, mxu_rate(value.element_type, device)))
    vregs = np.zeros(count, np.int64)
    for tile_sizes, element_type, values in plan.vector_work:
        vregs = vregs + values * _vregs(tiles, tile_sizes, element_type, device)[asked]
    for value in plan.shared_vector_work:
        for tile_of, here in zip(value.tiles, _present(value, tiles, asked, sizes, tile_counts)):
            vregs = vregs + _vregs(tiles, tile_of.node.tile.sizes, value.element_type, device)[asked] * here
    if grid is None:
        cores = np.ones(count, np.int64)
    else:
        cores = np.where((grid.along_axes[:, : plan.num_parallel] >= 2).any(axis=1), device.tensor_cores_per_chip, 1)
    figures = tpu_figures(traffic, dots, vregs, steps, cores, device)
    return _estimates(fusion, tiles, device, early, passing, asked, blocks, vmem > device.vmem_bytes, figures)


@dataclass(frozen=True)
class _AskedGrids:
    """The grids of the asked candidates: per candidate, the size (``sizes``) and the
    number of tiles (``tiles``) of every tiling parameter, and the tiles along each grid
    axis in Pallas's order (``along_axes``); ``[candidates, parameters]`` each."""

    sizes: np.ndarray
    tiles: np.ndarray
    along_axes: np.ndarray


def _asked_grids(fusion: TiledFusion, tiles: TileArrays, asked: np.ndarray, plan: _KernelPlan) -> _AskedGrids:
    """:class:`_AskedGrids` of the ``asked`` candidates (the arrays over every candidate
    once per grid)."""
    by_parameter = tiles.memo("sizes by parameter", lambda: np.stack(tiles.flat, axis=1) if tiles.flat else
                              np.ones((tiles.count, 0), np.int64))[asked]
    counts = tiles.memo(("tile counts by parameter", tuple(param.size for param in fusion.parameters)), lambda: np.stack(
        _tile_counts(fusion, tiles), axis=1) if tiles.flat else np.ones((tiles.count, 0), np.int64))[asked]
    return _AskedGrids(by_parameter, counts, counts[:, list(plan.axes)])


def _operand_figures(operand: _Operand, tiles: TileArrays, asked: np.ndarray, sizes: list[np.ndarray],
                     grid: _AskedGrids | None, plan: _KernelPlan,
                     device: TpuDevice) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per asked candidate: whether the operand's tile is a block (strides 1, offsets
    multiples of its sizes), the bytes of its block inside the array, its transfers and
    the VMEM its buffers take. ``grid`` None: every asked candidate has one grid step."""
    spec = operand.value.tiles[0]
    tile = tiles.columns(spec.node.tile.sizes)[asked]
    ok = np.ones(len(asked), bool)
    if spec.constant_strides is None:
        ok &= ~((_strides(spec.node, sizes) != 1) & (tile > 1)).any(axis=1)
    elif any(stride != 1 for stride in spec.constant_strides):
        ok &= ~(tile[:, [r for r, stride in enumerate(spec.constant_strides) if stride != 1]] > 1).any(axis=1)
    block = np.maximum(tile, 1)
    ok &= (spec.constants % block == 0).all(axis=1)
    if grid is None:
        transfers = np.ones(len(asked), np.int64)
    else:
        # offsets along dimension r advance by offset_step[:, r, p] per tile of parameter p
        offset_step = spec.coefficients[None, :, :] * grid.sizes[:, None, :]
        ok &= ((offset_step % block[:, :, None] == 0) | (grid.tiles[:, None, :] == 1)).all(axis=(1, 2))
        block_steps = offset_step // block[:, :, None]
        for split in spec.splits:
            ok &= _split_blocks(split, block, grid)
            # the split's block index is one-to-one in the grid index along its
            # parameter: it moves at every step there, as a block index stepping by 1
            block_steps[:, split[0], split[2]] = 1
        transfers = _transfers(block_steps[:, :, list(plan.axes)], grid.along_axes)
    element_type = operand.value.element_type
    block_bytes = np.minimum(tile, operand.shape).prod(axis=1, dtype=np.int64) * byte_size(element_type)
    vmem = np.zeros(len(asked), np.int64)
    if operand.shape:
        vmem = vmem + 2 * _buffer_bytes(tiles, spec.node.tile.sizes, element_type, device)[asked]
    if operand.written and plan.contracting:
        vmem = vmem + _buffer_bytes(tiles, spec.node.tile.sizes, "f32", device)[asked]
    return ok, block_bytes, transfers, vmem


def _vregs(tiles: TileArrays, sizes: tuple[ir.AffineExpr, ...], element_type: str, device: TpuDevice) -> np.ndarray:
    """:func:`.tpu_figures.vector_registers` of the tile of ``sizes`` (each at least 1) at
    every candidate, once per tile sizes and element type (fusions with the same tiles
    share them)."""
    return tiles.memo(("tpu vregs", sizes, element_type, device),
                      lambda: vector_registers(np.maximum(tiles.columns(sizes), 1), element_type, device))


def _buffer_bytes(tiles: TileArrays, sizes: tuple[ir.AffineExpr, ...], element_type: str, device: TpuDevice) -> np.ndarray:
    """:func:`.mosaic.buffer_bytes_of` the tile of ``sizes`` at every candidate, once per
    tile sizes and element type."""
    return tiles.memo(("tpu buffer bytes", sizes, element_type, device),
                      lambda: mosaic.buffer_bytes_of(tiles.columns(sizes), element_type, device))


def _present(value: _Value, tiles: TileArrays, asked: np.ndarray, sizes: list[np.ndarray],
             tile_counts: list[np.ndarray]) -> list[np.ndarray]:
    """Per tile of ``value``, per candidate: whether it is its own tiled instruction (no
    earlier tile has the same sizes, strides and offsets there; offsets agree when their
    constants do and, along every parameter of more than one tile, both follow it with
    the same coefficients or neither follows it)."""
    count = len(asked)
    if len(value.tiles) == 1:
        return [np.ones(count, bool)]
    facts = [(tiles.columns(t.node.tile.sizes)[asked], _strides(t.node, sizes)) for t in value.tiles]
    present = []
    for j, later in enumerate(value.tiles):
        alone = np.ones(count, bool)
        for i, earlier in enumerate(value.tiles[:j]):
            if not np.array_equal(earlier.constants, later.constants):
                continue
            same = (facts[i][0] == facts[j][0]).all(axis=1) & (facts[i][1] == facts[j][1]).all(axis=1)
            for p in range(len(sizes)):
                follows = (p in earlier.active, p in later.active)
                if follows == (False, False):
                    continue
                if follows != (True, True) or (earlier.coefficients[:, p] != later.coefficients[:, p]).any():
                    same &= tile_counts[p] == 1
            alone &= ~same
        present.append(alone)
    return present


def _transfers(block_steps: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Per candidate, the grid steps (Pallas's order, the last axis fastest) whose block
    index differs from the previous step's, the first included. ``block_steps``
    (``[candidates, rank, axes]``): the block index's step along each grid axis;
    ``grid``: ``[candidates, axes]``. Axis ``a`` advances ``prod(grid[:a]) * (grid[a] -
    1)`` times, each time the inner axes wrap to 0: the block index then moves by its
    step along ``a`` minus the inner axes' steps times their extents less one."""
    wrapped = block_steps * (grid - 1)[:, None, :]
    inner = wrapped[:, :, ::-1].cumsum(axis=2)[:, :, ::-1] - wrapped
    moves = (block_steps - inner != 0).any(axis=1)
    outer = grid.cumprod(axis=1) // grid
    return 1 + np.where(moves, outer * (grid - 1), 0).sum(axis=1)


def _estimates(fusion: TiledFusion, tiles: TileArrays, device: TpuDevice, early: list[ConstraintCheck],
               passing: np.ndarray, asked: np.ndarray, blocks: np.ndarray, over_vmem: np.ndarray,
               figures: TpuFigures | None) -> CandidateEstimates:
    """The candidates' arrays and checks: the ``asked`` ones whose tiles are ``blocks``
    are kernels with ``figures``; the kernel rules are ordered as the one-by-one backend
    meets them (the fewest grid steps first). ``figures``: over the asked candidates
    (None when none is asked)."""
    total = tiles.count
    kernels = asked[blocks]
    times = np.full((4, total), np.inf)  # exec, read, write, compute
    counts = np.zeros((4, total), np.int64)  # bytes read, bytes written, flops, grid steps
    if figures is not None:
        times[:, kernels] = np.array([figures.exec_ns, figures.read_ns, figures.write_ns, figures.compute_ns])[:, blocks]
        counts[:, kernels] = np.array([figures.bytes_read, figures.bytes_written, figures.flops, figures.steps])[:, blocks]
    broken = []
    for rule, mask in ((RULE_NOT_A_BLOCK, ~blocks), (mosaic.RULE_VMEM, blocks & over_vmem)):
        if mask.any():
            ok = np.ones(total, bool)
            ok[asked[mask]] = False
            broken.append((int(mask.argmax()), rule, ok))
    checks = list(early)
    for _, rule, ok in sorted(broken):
        checks.append(ConstraintCheck(rule, "", ok, _ExactMessage(fusion, tiles, device, rule)))
    checks.append(not_evaluated_check(passing, asked))

    def breakdown(i: int) -> tuple[BreakdownItem, ...]:
        position = (asked == i).nonzero()[0]  # asked once at most
        return figures.estimate(int(position[0])).breakdown if figures is not None and len(position) and \
            blocks[position[0]] else ()

    return CandidateEstimates(
        checks=checks, exec_time_ns=times[0], read_time_ns=times[1], write_time_ns=times[2], compute_time_ns=times[3],
        bytes_read=counts[0], bytes_written=counts[1], flops=counts[2], num_blocks=counts[3], num_warps=None,
        breakdown=breakdown)


@dataclass(frozen=True)
class _ExactMessage:
    """The message :func:`.tpu.assess_tpu` gives candidate ``i`` for ``rule`` (were it
    not to find the rule, which the tests compare on every candidate, the message says so
    rather than inventing one)."""

    fusion: TiledFusion
    tiles: TileArrays
    device: TpuDevice
    rule: str

    def __call__(self, index: int) -> str:
        sizes = [int(column[index]) for column in self.tiles.flat]
        found = [r.message for r in assess_tpu(self.fusion, sizes, self.device).rejections if r.rule == self.rule]
        return found[0] if found else f"tile sizes {sizes}: {self.rule} (not confirmed by assess_tpu)"
