"""The symbolic tiling of a fused computation (XLA's ``SymbolicTileAnalysis``).

:func:`analyze_fusion` walks a computation from its root down to its parameters. Every
value reached gets the indexing map from the *tiling parameters* to its elements and the
:class:`~.symbolic_tile.SymbolicTile` of that map; a value read through two different
maps gets two tiled nodes, one read twice through the same map one node (XLA's
deduplication). The tiling parameters are the root's output dimensions, plus, for each
dot (``stablehlo.dot_general``), its contracting dimensions (hidden parameters: they are
tiled but not iterated over by program ids; a dot root lists them first,
``{K, M, N}``, as XLA's ``TilingSpecification``).

The fusion's constraints are the conjunction of every tile's; :meth:`TiledFusion.valid_tilings`
enumerates the power-of-two tilings (plus each full dimension) that satisfy them, and
:meth:`TiledFusion.tiled_computation` instantiates the tiles at concrete sizes: each
node's tile sizes, strides and the map from the program id ``pid_0`` to its tile's offsets
(tiles of the root iterated major to minor).

An analysis that cannot tile returns :class:`AnalysisFailure` with the reason (an op
without indexing, a map whose image is not a tile, a pad outside a gemm fusion, a nested
fusion, roots not reachable from one root); tiling at concrete sizes raises
:class:`TilingError` with XLA's status code name.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hlo_indexing.analysis.per_op import output_to_input_indexing
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import default_context
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.symbolic_tiling.constraints import ConstraintExpression
from hlo_indexing.symbolic_tiling.hlo_source import instruction_name
from hlo_indexing.symbolic_tiling.symbolic_tile import NotATile, SymbolicTile, simplify_preserving_points, symbolic_tile

# An SSA value of any type (generic in the bindings' stubs, not at run time).
if TYPE_CHECKING:
    SsaValue = ir.Value[Any]
else:
    SsaValue = ir.Value

#: Dot ops (their contracting dimensions become tiling parameters).
DOT_OPS = frozenset({"stablehlo.dot_general", "stablehlo.dot", "mhlo.dot_general", "mhlo.dot"})
#: Ops that read nothing: leaves of the tiled computation besides parameters.
LEAF_OPS = frozenset({"constant", "iota"})


class TilingError(HloIndexingError):
    """Tiling at concrete sizes failed; ``status`` is XLA's status code name
    (``INVALID_ARGUMENT``, ``UNIMPLEMENTED``, ``FAILED_PRECONDITION``)."""

    def __init__(self, status: str, message: str):
        super().__init__(f"{status}: {message}")
        self.status = status


@dataclass(frozen=True)
class AnalysisFailure:
    """The fusion cannot be tiled: ``reason`` (XLA's ``FusionDecision`` explanation)."""

    reason: str

    def __str__(self) -> str:
        return f"cannot tile: {self.reason}"


@dataclass(frozen=True)
class TilingParameter:
    """One tiling parameter: dimension ``dim`` (of size ``size``) of the output of
    ``owner`` (an HLO name) or, when ``contracting``, of its contraction."""

    owner: str
    dim: int
    size: int
    contracting: bool = False


@dataclass(eq=False)
class TiledNode:
    """One symbolic tiled instruction: a value, the map from the tiling parameters to
    its elements, the tile of that map, and the tiled nodes of its operands."""

    value: SsaValue
    name: str
    opcode: str
    indexing_map: IndexingMap
    tile: SymbolicTile
    #: Parameter positions of the contracting dimensions of the dots this node feeds
    #: (it lies in their operand regions): its programs iterate over those too.
    hidden: tuple[int, ...] = ()
    #: The nested region the node lies in, as XLA nests the operands of a dot (one
    #: region) and of a concatenate (one region per operand): ``((owner serial, region
    #: index), ...)`` from the top level. Nodes of different regions are never shared.
    region: tuple[tuple[int, int], ...] = ()
    #: Creation number of the node in its analysis.
    serial: int = 0
    operands: list["TiledNode"] = field(default_factory=list)

    @property
    def parameter_number(self) -> int | None:
        """The fusion parameter number of a parameter node, else None."""
        if defining_op(self.value) is None:
            return int(ir.BlockArgument(self.value).arg_number)
        return None


@dataclass(eq=False)
class TiledInstruction:
    """A node at concrete tile sizes: its ``tile_sizes``, ``tile_strides`` and
    ``tile_offsets_indexing`` (program id ``pid_0`` -> the tile's offsets)."""

    node: TiledNode
    tile_sizes: tuple[int, ...]
    tile_strides: tuple[int, ...]
    tile_offsets_indexing: IndexingMap
    operands: list["TiledInstruction"] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The HLO instruction name."""
        return self.node.name


@dataclass
class TiledComputation:
    """The tiled computation: ``roots`` (one per fusion output) and every instruction
    (operands before users), each node instantiated once."""

    roots: list[TiledInstruction]
    instructions: list[TiledInstruction]
    num_programs: int


def defining_op(value: SsaValue) -> ir.Operation | None:
    """The op whose result ``value`` is; None for a block argument (a parameter)."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def opcode_of(value: SsaValue) -> str:
    """XLA's opcode for the op defining ``value`` (``parameter`` for a block argument)."""
    owner = defining_op(value)
    if owner is None:
        return "parameter"
    kind = owner.name.split(".", 1)[-1]
    return {"dot_general": "dot", "broadcast_in_dim": "broadcast", "dynamic_update_slice": "dynamic-update-slice"}.get(kind, kind.replace("_", "-"))


def _name_of(value: SsaValue) -> str:
    owner = defining_op(value)
    if owner is None:
        argument: "ir.BlockArgument[Any]" = ir.BlockArgument(value)
        return instruction_name(argument) or f"parameter({argument.arg_number})"
    return instruction_name(owner) or owner.name


@dataclass
class TiledFusion:
    """The symbolic tiling of one fusion (see the module docstring)."""

    parameters: list[TilingParameter]
    #: Per output, its tiled nodes: the root's own, or every node of an extra output
    #: (the tiled computation takes the first whose tiles partition the output).
    root_candidates: list[list[TiledNode]]
    nodes: list[TiledNode]
    constraints: ConstraintExpression
    root_rank: int

    def flat_tile_sizes(self, tiling: Mapping[str, Sequence[int]]) -> list[int]:
        """Tile sizes per parameter from sizes per instruction (``{name: sizes}``: a
        root's output dims, a dot's contracting dims, a dot root contracting first).
        ``TilingError(FAILED_PRECONDITION)`` when an owner's sizes are missing or of the
        wrong count."""
        wanted: dict[str, int] = {}
        for parameter in self.parameters:
            wanted[parameter.owner] = wanted.get(parameter.owner, 0) + 1
        out: list[int] = []
        offsets: dict[str, int] = {}
        for parameter in self.parameters:
            sizes = tiling.get(parameter.owner)
            if sizes is None or len(sizes) != wanted[parameter.owner]:
                raise TilingError(
                    "FAILED_PRECONDITION",
                    f"{parameter.owner} needs {wanted[parameter.owner]} tile sizes, got {None if sizes is None else list(sizes)}",
                )
            index = offsets.get(parameter.owner, 0)
            out.append(int(sizes[index]))
            offsets[parameter.owner] = index + 1
        return out

    def top_level(self) -> list[TiledNode]:
        """The nodes outside every region (operands before users)."""
        return [node for node in self.nodes if not node.region]

    def regions(self, node: TiledNode) -> list[list[TiledNode]]:
        """The regions a dot (one) or concatenate (one per operand) node owns, each its
        nodes in order (operands before users); ``[]`` for other nodes."""
        found: dict[int, list[TiledNode]] = {}
        for other in self.nodes:
            if len(other.region) == len(node.region) + 1 and other.region[:-1] == node.region:
                owner, index = other.region[-1]
                if owner == node.serial:
                    found.setdefault(index, []).append(other)
        return [found[k] for k in sorted(found)]

    def satisfies_constraints(self, tile_sizes: Sequence[int]) -> bool:
        """Whether flat tile sizes (one per parameter) satisfy the fusion's constraints."""
        if len(tile_sizes) != len(self.parameters):
            raise TilingError("FAILED_PRECONDITION", f"expected {len(self.parameters)} tile sizes, got {len(tile_sizes)}")
        return self.constraints.is_satisfied_by(list(tile_sizes))

    def valid_tilings(self) -> list[tuple[int, ...]]:
        """Every tiling from :func:`flat_tilings_for_input_space` over the parameters'
        sizes that satisfies the constraints, in lexicographic order."""
        space = [p.size for p in self.parameters]
        return [t for t in flat_tilings_for_input_space(space) if self.constraints.is_satisfied_by(list(t))]

    def tiled_computation(
        self,
        tile_sizes: Sequence[int],
        *,
        schedule: str = "major_to_minor",
        constraints_are_known_satisfied: bool = False,
    ) -> TiledComputation:
        """Every node at these flat tile sizes (see :class:`TiledInstruction`).

        ``schedule`` orders the root's tiles by program id: ``major_to_minor``, or
        ``transposed_dot`` (the two minor-most output dimensions swapped). Raises
        :class:`TilingError`: ``INVALID_ARGUMENT`` when the sizes violate the
        constraints (unless known satisfied), ``UNIMPLEMENTED`` for a negative stride,
        a concatenate operand whose size is not a multiple of the tile, or an extra
        output whose tiles do not partition it."""
        sizes = list(tile_sizes)
        if not constraints_are_known_satisfied and not self.satisfies_constraints(sizes):
            raise TilingError("INVALID_ARGUMENT", f"tile sizes {sizes} do not satisfy the constraints {self.constraints}")
        pid_maps: dict[tuple[int, ...], tuple[IndexingMap, int]] = {}
        made: dict[int, TiledInstruction] = {}
        # Tiled instructions are deduplicated again at concrete sizes (two symbolic
        # nodes of one value may give the same tiles).
        unique: dict[tuple[SsaValue, tuple[int, ...], tuple[int, ...], IndexingMap], TiledInstruction] = {}
        ordered: list[TiledInstruction] = []
        for node in self.nodes:
            _, node_sizes, strides = node.tile.evaluate(sizes)
            if any(s < 0 for s in strides):
                raise TilingError("UNIMPLEMENTED", f"{node.name}: tiles with a negative stride {strides} are not supported")
            if node.hidden not in pid_maps:
                pid_maps[node.hidden] = _program_id_map(self.parameters, sizes, schedule, node.hidden)
            offsets = _offsets_map(pid_maps[node.hidden][0], node.indexing_map)
            key = (node.value, node_sizes, strides, offsets)
            inst = unique.get(key)
            if inst is None:
                inst = TiledInstruction(node, node_sizes, strides, offsets, [made[id(o)] for o in node.operands])
                unique[key] = inst
                ordered.append(inst)
            made[id(node)] = inst
        for inst in ordered:
            _check_concatenate(inst)
        count = _program_id_map(self.parameters, sizes, schedule, ())[1]
        roots = [made[id(candidates[0])] if len(candidates) == 1 and k == 0 else _partitioning(candidates, made, count)
                 for k, candidates in enumerate(self.root_candidates)]
        return TiledComputation(roots, ordered, count)


def flat_tilings_for_input_space(sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """Per dimension of size ``n``: the powers of two below ``n``, then ``n``; all
    combinations in lexicographic order (XLA's ``GetFlatTilingsForInputSpace``)."""
    choices = []
    for n in sizes:
        values = [1 << k for k in range(max(n, 1).bit_length()) if (1 << k) < n]
        choices.append(values + [n])
    return list(itertools.product(*choices))


def analyze_fusion(computation: ir.Operation | ir.Region, *, allow_pad: bool = False) -> TiledFusion | AnalysisFailure:
    """The symbolic tiling of a computation (a ``func.func``, an ``mhlo.fusion`` or its
    region). ``allow_pad``: pads may be tiled (XLA allows them in gemm fusions only)."""
    region = computation if isinstance(computation, ir.Region) else computation.regions[0]
    if not region.blocks:
        return AnalysisFailure("the computation has no body")
    block = region.blocks[0]
    outputs = _outputs(block)
    if not outputs:
        return AnalysisFailure("the computation has no output")
    return _Builder(allow_pad, {}).build(block, outputs)


def analyze_producer_consumer(
    producer: ir.Operation, consumer: ir.Operation, *, with_extra_outputs: bool = False, allow_pad: bool = False
) -> TiledFusion | AnalysisFailure:
    """The symbolic tiling of two ``mhlo.fusion`` ops fused into one: the consumer's
    body, where each parameter fed by the producer continues into the producer's body
    (the parameter itself is not a node). With ``with_extra_outputs`` the producer's
    outputs are outputs too, after the consumer's."""
    consumer_block = _block_of(consumer)
    producer_block = _block_of(producer)
    produced = _outputs(producer_block)
    substitutions: dict[SsaValue, SsaValue] = {}
    for k, operand in enumerate(consumer.operands):
        owner = defining_op(operand)
        if owner is not None and owner == producer:
            substitutions[consumer_block.arguments[k]] = produced[ir.OpResult(operand).result_number]
    if not substitutions:
        return AnalysisFailure("the producer does not feed the consumer")
    # A producer parameter fed by a value that also feeds the consumer is that same
    # consumer parameter (one fusion parameter outside).
    consumer_parameters = {operand: consumer_block.arguments[k] for k, operand in enumerate(consumer.operands)}
    for k, operand in enumerate(producer.operands):
        if operand in consumer_parameters:
            substitutions[producer_block.arguments[k]] = consumer_parameters[operand]
    outputs = _outputs(consumer_block) + (produced if with_extra_outputs else [])
    return _Builder(allow_pad, substitutions).build(consumer_block, outputs, extra_blocks=(producer_block,))


def _block_of(computation: ir.Operation | ir.Region) -> ir.Block:
    region = computation if isinstance(computation, ir.Region) else computation.regions[0]
    return region.blocks[0]


def _outputs(block: ir.Block) -> list[SsaValue]:
    terminator = list(block.operations)[-1]
    return list(terminator.operands)


class _Failure(Exception):
    pass


class _Builder:
    def __init__(self, allow_pad: bool, substitutions: dict[SsaValue, SsaValue]):
        self.allow_pad = allow_pad
        self.substitutions = substitutions
        self.parameters: list[TilingParameter] = []
        self.nodes: dict[tuple[SsaValue, IndexingMap, tuple[int, ...], tuple[tuple[int, int], ...]], TiledNode] = {}
        self.order: list[TiledNode] = []
        self.hidden: dict[ir.Operation, list[int]] = {}

    def build(
        self, block: ir.Block, outputs: list[SsaValue], extra_blocks: Sequence[ir.Block] = ()
    ) -> TiledFusion | AnalysisFailure:
        try:
            root = self._real_root(outputs)
            root_shape = ir.RankedTensorType(root.type).shape
            self._declare_parameters(root, root_shape)
            for op in itertools.chain(block.operations, *(b.operations for b in extra_blocks)):
                if op.name in DOT_OPS and op.operation != defining_op(root):
                    self._hidden_dims(op.operation)
            dims = [Interval.of_size(p.size) for p in self.parameters]
            output_dims = [i for i, p in enumerate(self.parameters) if not p.contracting]
            ctx = root.context
            start = IndexingMap.from_exprs(dims, [ax.dim(i, ctx) for i in output_dims], context=ctx)
            root_node = self._visit(root, start, ())
            roots = [[root_node] if value == root else self._candidates(value) for value in outputs]
        except _Failure as failure:
            return AnalysisFailure(str(failure))
        constraints = ConstraintExpression.always()
        for node in self.order:
            constraints = constraints & node.tile.constraints
        return TiledFusion(self.parameters, roots, self.order, constraints.simplify(), len(root_shape))

    def _real_root(self, outputs: list[SsaValue]) -> SsaValue:
        """The output from which every other output is reachable."""
        if len(outputs) == 1:
            return outputs[0]
        for candidate in outputs:
            reachable = _reachable(candidate, self.substitutions)
            if all(o == candidate or o in reachable for o in outputs):
                return candidate
        raise _Failure("multi-output fusion whose outputs are not all reachable from one of them is not supported")

    def _candidates(self, value: SsaValue) -> list[TiledNode]:
        found = [node for (v, _, _, _), node in self.nodes.items() if v == value]
        if not found:
            raise _Failure(f"output {_name_of(value)} is not reached from the root")
        return found

    def _declare_parameters(self, root: SsaValue, shape: Sequence[int]) -> None:
        owner = defining_op(root)
        name = _name_of(root)
        if owner is not None and opcode_of(root) == "dot":
            self.hidden[owner] = list(range(len(_contracting_sizes(owner))))
            for k, size in enumerate(_contracting_sizes(owner)):
                self.parameters.append(TilingParameter(name, k, size, contracting=True))
        for i, size in enumerate(shape):
            self.parameters.append(TilingParameter(name, i, size))

    def _hidden_dims(self, op: ir.Operation) -> list[int]:
        """The parameter positions of a dot's contracting dimensions (declared before
        the walk, in program order, after the root's)."""
        found = self.hidden.get(op)
        if found is None:
            found = []
            for k, size in enumerate(_contracting_sizes(op)):
                found.append(len(self.parameters))
                self.parameters.append(TilingParameter(instruction_name(op) or op.name, k, size, contracting=True))
            self.hidden[op] = found
        return found

    def _visit(
        self, value: SsaValue, indexing: IndexingMap, hidden: tuple[int, ...], region: tuple[tuple[int, int], ...] = ()
    ) -> TiledNode:
        value = self.substitutions.get(value, value)
        key = (value, indexing, hidden, region)
        found = self.nodes.get(key)
        if found is not None:
            return found
        name, opcode = _name_of(value), opcode_of(value)
        if opcode == "fusion":
            raise _Failure(f"{name}: nested fusions are not supported")
        if opcode == "pad" and not self.allow_pad:
            raise _Failure(f"{name}: pad is only supported in gemm fusions")
        tile = symbolic_tile(indexing)
        if isinstance(tile, NotATile):
            if opcode in ("reshape", "bitcast"):
                raise _Failure(f"Bailing out on reshape {name} with indexing map {indexing}: {tile.reason}")
            raise _Failure(f"failed to compute a symbolic tile of {indexing} for {name}: {tile.reason}")
        node = TiledNode(value, name, opcode, indexing, tile, hidden, region, len(self.nodes))
        self.nodes[key] = node
        op = defining_op(value)
        if op is not None and opcode not in LEAF_OPS:
            result_index = ir.OpResult(value).result_number
            maps = output_to_input_indexing(op, result_index, simplify=False)
            operand_hidden = hidden + tuple(self._hidden_dims(op)) if opcode == "dot" else hidden
            for k, operand in enumerate(op.operands):
                operand_maps = list(maps.maps[k])
                if len(operand_maps) != 1 or operand_maps[0].is_undefined:
                    raise _Failure(f"{name}: operand {k} has {len(operand_maps)} indexing maps or an unknown one")
                composed = indexing.compose(operand_maps[0])
                if opcode == "dot":
                    composed = _contract_as_parameters(composed, self._hidden_dims(op))
                if opcode in ("dot", "concatenate"):
                    operand_region = region + ((node.serial, k if opcode == "concatenate" else 0),)
                else:
                    operand_region = region
                node.operands.append(
                    self._visit(operand, simplify_preserving_points(composed), operand_hidden, operand_region)
                )
        self.order.append(node)
        return node


def _reachable(value: SsaValue, substitutions: dict[SsaValue, SsaValue]) -> set[SsaValue]:
    seen: set[SsaValue] = set()
    stack = [value]
    while stack:
        current = stack.pop()
        owner = defining_op(current)
        if owner is None:
            if current in substitutions and substitutions[current] not in seen:
                seen.add(substitutions[current])
                stack.append(substitutions[current])
            continue
        for operand in owner.operands:
            if operand not in seen:
                seen.add(operand)
                stack.append(operand)
    return seen


def _contracting_sizes(op: ir.Operation) -> list[int]:
    """Sizes of a dot's contracting dimensions (``dot``: the lhs's last one)."""
    lhs_shape = ir.RankedTensorType(op.operands[0].type).shape
    if "dot_dimension_numbers" not in op.attributes:
        return [lhs_shape[-1]]
    match = re.search(r"lhs_contracting_dimensions = \[([^\]]*)\]", str(op.attributes["dot_dimension_numbers"]))
    return [lhs_shape[int(d)] for d in match.group(1).split(",")] if match and match.group(1).strip() else []


def _contract_as_parameters(m: IndexingMap, hidden: list[int]) -> IndexingMap:
    """The dot's contracting range variables (the first ones of ``m``) become the
    hidden parameter dimensions ``hidden``."""
    ctx = m.context
    count = len(hidden)
    dims = [ax.dim(i, ctx) for i in range(m.num_dims)]
    symbols = [ax.dim(hidden[j], ctx) for j in range(count)] + [ax.symbol(j, ctx) for j in range(m.num_symbols - count)]
    results = [ax.substitute(e, dims, symbols) for e in m.results]
    constraints = {ax.substitute(e, dims, symbols): i for e, i in m.constraints.items()}
    dim_vars = list(m.dim_vars)
    for j, position in enumerate(hidden):
        dim_vars[position] = Variable(dim_vars[position].bounds.intersect(m.range_vars[j].bounds))
    affine = ir.AffineMap.get(m.num_dims, m.num_symbols - count, results, ctx)
    return IndexingMap._make(affine, dim_vars, m.range_vars[count:], m.runtime_vars, constraints)


def _program_id_map(
    parameters: list[TilingParameter], sizes: list[int], schedule: str, hidden: tuple[int, ...]
) -> tuple[IndexingMap, int]:
    """``(pid_0) -> (offset of each parameter)`` for program ``pid_0``, and the number
    of programs: the root's tiles (major to minor, or the two minor-most output
    dimensions swapped for ``transposed_dot``), then, minor-most, the tiles of the
    ``hidden`` contracting parameters; other contracting parameters stay at 0."""
    ctx = default_context()
    output = [i for i, p in enumerate(parameters) if not p.contracting]
    order = list(output)
    if schedule == "transposed_dot" and len(order) >= 2:
        order[-1], order[-2] = order[-2], order[-1]
    elif schedule != "major_to_minor":
        raise TilingError("INVALID_ARGUMENT", f"unknown schedule '{schedule}'")
    order += list(hidden)
    counts = {i: -(-parameters[i].size // sizes[i]) for i in order}
    total = 1
    for i in order:
        total *= counts[i]
    pid = ax.dim(0, ctx)
    offsets: dict[int, ir.AffineExpr] = {}
    inner = 1
    for position, i in enumerate(reversed(order)):
        index = ax.floordiv(pid, inner) if inner > 1 else pid
        if position < len(order) - 1:
            index = ax.mod(index, counts[i])
        offsets[i] = ax.mul(index, sizes[i])
        inner *= counts[i]
    results = [offsets.get(i, ax.constant(0, ctx)) for i in range(len(parameters))]
    pid_var = Variable(Interval(0, total - 1), "pid_0")
    return IndexingMap.from_exprs([pid_var], results, context=ctx).simplify(), total


def _offsets_map(pid_map: IndexingMap, indexing: IndexingMap) -> IndexingMap:
    """``pid -> offsets`` of a node's tile: the root tile's offsets through the node's
    map, with every range variable at its lower bound (tiles start there)."""
    composed = pid_map.compose(indexing)
    ctx = composed.context
    n_range = len(composed.range_vars)
    symbols = [ax.constant(v.bounds.lower, ctx) for v in composed.range_vars] + [
        ax.symbol(j, ctx) for j in range(len(composed.runtime_vars))
    ]
    dims = [ax.dim(i, ctx) for i in range(composed.num_dims)]
    results = [ax.substitute(e, dims, symbols) for e in composed.results]
    constraints = {}
    for expr, interval in composed.constraints.items():
        used_dims: set[int] = set()
        used_symbols: set[int] = set()
        ax.used_variables(expr, used_dims, used_symbols)
        if not any(s < n_range for s in used_symbols):
            constraints[ax.substitute(expr, dims, symbols)] = interval
    affine = ir.AffineMap.get(composed.num_dims, len(composed.runtime_vars), results, ctx)
    out = IndexingMap._make(affine, composed.dim_vars, (), composed.runtime_vars, constraints)
    return out.simplify().remove_unused_symbols()


def _check_concatenate(inst: TiledInstruction) -> None:
    if inst.node.opcode != "concatenate":
        return
    op = defining_op(inst.node.value)
    assert op is not None, "a concatenate node is an op result"
    axis = ir.IntegerAttr(op.attributes["dimension"]).value
    tile = inst.tile_sizes[axis]
    start = 0
    for operand in op.operands:
        # A tile must not straddle two operands: each operand starts at a multiple of it.
        if start % tile:
            raise TilingError(
                "UNIMPLEMENTED", f"{inst.name}: operand offset {start} along dimension {axis} is not divisible by tile size {tile}"
            )
        start += ir.RankedTensorType(operand.type).shape[axis]


def _partitioning(candidates: list[TiledNode], made: dict[int, TiledInstruction], programs: int) -> TiledInstruction:
    """The first tiled instruction of an extra output whose tiles partition it."""
    error = None
    for node in candidates:
        try:
            _check_partition(made[id(node)], programs)
            return made[id(node)]
        except TilingError as exc:
            error = exc
    assert error is not None
    raise error


def _check_partition(root: TiledInstruction, programs: int) -> None:
    """An extra output must be written exactly once: its tiles, over all programs,
    partition its index space (checked by enumeration)."""
    shape = ir.RankedTensorType(root.node.value.type).shape
    covered: dict[tuple[int, ...], int] = {}
    offsets_map = root.tile_offsets_indexing
    if offsets_map.runtime_vars:
        raise TilingError("UNIMPLEMENTED", "Unsupported case of multi-output fusion: runtime offsets")
    for pid in range(programs):
        if not offsets_map.contains_point([pid]):
            continue
        offsets = offsets_map.evaluate([pid])
        ranges = [range(o, o + s * st if st else o + 1, st or 1) for o, s, st in zip(offsets, root.tile_sizes, root.tile_strides)]
        for index in itertools.product(*ranges):
            if all(0 <= i < n for i, n in zip(index, shape)):
                covered[index] = covered.get(index, 0) + 1
    total = 1
    for n in shape:
        total *= n
    if len(covered) != total or any(c != 1 for c in covered.values()):
        raise TilingError("UNIMPLEMENTED", f"Unsupported case of multi-output fusion: the tiles of {root.name} do not partition it")
