"""The symbolic tiling of a fused computation (XLA's ``SymbolicTileAnalysis``).

:func:`analyze_fusion` walks a computation from its root down to its parameters. Every
value reached gets the indexing map from the *tiling parameters* to its elements and the
:class:`~.symbolic_tile.SymbolicTile` of that map; a value read through two different
maps gets two tiled nodes, one read twice through the same map one node (XLA's
deduplication). The tiling parameters are the root's output dimensions, plus, for each
dot (``stablehlo.dot_general``, or XLA's ``scaled-dot`` as imported), its contracting dimensions (hidden parameters: only the
programs of the dot's operand region iterate over them; a dot root lists them first,
``{K, M, N}``, as XLA's ``TilingSpecification``), and for each convolution its window
positions and input features, as XLA tiles a convolution with regions.

The fusion's constraints are the conjunction of every tile's; :meth:`TiledFusion.valid_tilings`
enumerates the power-of-two tilings (plus each full dimension) that satisfy them, and
:func:`hlo_indexing.symbolic_tiling.tiled_computation.tiled_computation` instantiates
the tiles at concrete sizes.

An analysis that cannot tile returns :class:`AnalysisFailure` with the reason (an op
without indexing, a map whose image is not a tile, a pad outside a gemm fusion, a nested
fusion other than a dot operand, roots not reachable from one root; a nested fusion
feeding a dot is one node, read through its fused maps); tiling at concrete sizes raises
:class:`TilingError` with XLA's status code name.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from hlo_indexing.analysis.fusion import REGIONS, fusion_indexing
from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import SsaArgument, SsaValue, ir
from hlo_indexing.dialect_glue.hlo_text import SCALED_DOT_TARGET
from hlo_indexing.dialect_glue.locations import location_name
from hlo_indexing.errors import HloIndexingError, TilingError
from hlo_indexing.limits import MAX_TILED_NODES
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import compose
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.ops.dispatch import elementwise_shape_of, result_indexing
from hlo_indexing.ops.result import RuntimeSource
from hlo_indexing.ops.rule import is_token
from hlo_indexing.symbolic_tiling.constraints import ConstraintExpression
from hlo_indexing.symbolic_tiling.hlo_source import instruction_name, is_gemm_fusion
from hlo_indexing.symbolic_tiling.symbolic_tile import NotATile, SymbolicTile, simplify_preserving_points, symbolic_tile
from hlo_indexing.symbolic_tiling.time_budget import check_time


#: XLA's opcodes of the dots; a ``scaled-dot`` is imported as a custom call to
#: ``hlo_text.SCALED_DOT_TARGET``.
DOT_OPCODES = frozenset({"dot", "scaled-dot"})
#: The contractions whose contracted dimensions become tiling parameters (hidden: only
#: their operand region iterates over them): the dots, and convolutions (their window
#: positions, then their input features per group), as XLA tiles them with regions.
CONTRACTION_OPCODES = DOT_OPCODES | {"convolution"}
#: Ops that read nothing: leaves of the tiled computation besides parameters.
LEAF_OPS = frozenset({"constant", "iota"})


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


@dataclass(eq=False, slots=True)
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

    def __repr__(self) -> str:
        return f"TiledNode({self.name}: {self.opcode}, {self.indexing_map})"

    @property
    def parameter_number(self) -> int | None:
        """The fusion parameter number of a parameter node, else None (a property read
        from the opcode first: the rankings and cost models ask at every node, and
        caching it per node cost more than reading it)."""
        if self.opcode != "parameter":
            return None
        value = self.value
        return int(value.arg_number) if isinstance(value, ir.BlockArgument) else None


def defining_op(value: SsaValue) -> ir.Operation | None:
    """The op whose result ``value`` is; None for a block argument (a parameter)."""
    if isinstance(value, ir.BlockArgument):  # the bindings hand out values downcast: no owner to read
        return None
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


#: The op kinds (names without their dialect) XLA's opcodes are spelled differently from.
_OPCODE_OF_KIND = {"dot_general": "dot", "broadcast_in_dim": "broadcast"}
#: The op kinds whose opcode may be one of :data:`CONTRACTION_OPCODES` (a custom call
#: only for the scaled-dot target).
_CONTRACTION_KINDS = frozenset({"dot", "dot_general", "convolution", "custom_call"})


def _opcode(owner: ir.Operation | None, operation_name: str | None = None) -> str:
    """XLA's opcode for ``owner`` (``parameter`` for None); ``operation_name``: its
    name, when the caller has read it."""
    if owner is None:
        return "parameter"
    kind = (operation_name or owner.name).split(".", 1)[-1]
    if kind == "custom_call" and _call_target(owner) == SCALED_DOT_TARGET:
        return "scaled-dot"
    return _OPCODE_OF_KIND.get(kind) or kind.replace("_", "-")


def _name_of(value: SsaValue) -> str:
    """The instruction name of ``value``."""
    return _InstructionNames()(value, defining_op(value))


class _InstructionNames:
    """The instruction names of the values of one analysis: an op's result is named
    after the op, a parameter after its own location unless that is its fusion's (each
    fusion's location and name read once), else by its number."""

    def __init__(self) -> None:
        # Per block: the location and name of the mhlo.fusion it is the body of (None
        # and '' for any other block).
        self._fusions: dict[ir.Block, tuple[ir.Location | None, str]] = {}

    def __call__(self, value: SsaValue, owner: ir.Operation | None) -> str:
        """The instruction name of ``value``, whose :func:`defining_op` is ``owner``."""
        if owner is not None:
            return instruction_name(owner) or owner.name
        argument: SsaArgument = ir.BlockArgument(value)
        block = argument.owner
        fusion = self._fusions.get(block)
        if fusion is None:
            op = block.owner
            is_fusion = op is not None and op.name == "mhlo.fusion"
            fusion = self._fusions[block] = (op.location, instruction_name(op)) if is_fusion else (None, "")
        fusion_location, fusion_name = fusion
        location = argument.location
        if fusion_location is None or location != fusion_location:  # a fusion region's arguments carry the fusion's own location
            name = location_name(location)
            if name and name != fusion_name:
                return name
        return f"parameter({argument.arg_number})"


@dataclass
class TiledFusion:
    """The symbolic tiling of one fusion (see the module docstring). Its nodes hold the
    fusion's ``ir.Value``s: it is valid while the module they belong to is alive (keep the
    ``ir.Module`` or ``module.operation``; MLIR frees the ops with it)."""

    parameters: list[TilingParameter]
    #: Per output, its tiled nodes: the root's own, or every node of an extra output
    #: (the tiled computation takes the first whose tiles partition the output).
    root_candidates: list[list[TiledNode]]
    nodes: list[TiledNode]
    constraints: ConstraintExpression
    root_rank: int
    #: Runtime-variable origin (``operand k of node n``) -> the value it reads.
    runtime_sources: dict[str, SsaValue] = field(default_factory=dict)
    #: Runtime-variable origin -> every value it takes (its range in its op's map: a
    #: composed map's may be narrower, where its constraints leave values out).
    runtime_ranges: dict[str, Interval] = field(default_factory=dict)
    #: Per output, the number of the computation's result it is (tokens, which have no
    #: index space, are not outputs: ``(1,)`` for ``@main(token, x) -> (token, y)``).
    result_numbers: tuple[int, ...] = ()

    def result_number(self, output: int) -> int:
        """The computation's result that output ``output`` is."""
        return self.result_numbers[output] if self.result_numbers else output

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

    def __str__(self) -> str:
        """One entry per node (operands before users): ``name = opcode(operands)``, its
        indexing map and symbolic tile; then the constraints."""
        lines = []
        for node in self.nodes:
            operands = ", ".join(o.name for o in node.operands)
            lines.append(f"{node.name} = {node.opcode}({operands})")
            lines.append(f"  indexing map: {node.indexing_map}")
            lines.extend("  " + line.strip() for line in str(node.tile).splitlines())
        lines.append(f"constraints: {self.constraints}")
        return "\n".join(lines)

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

    def value_positions(self, values: Sequence[SsaValue]) -> "ValuePositions":
        """Where each node's value and each runtime source's value is in ``values``
        (every value of this fusion's computation, e.g. in :func:`~.shared_bodies.body_key`'s
        order): what :meth:`rebound` reads another computation's values by."""
        position = {value: k for k, value in enumerate(values)}
        return ValuePositions(
            [position[node.value] for node in self.nodes],
            {origin: position[value] for origin, value in self.runtime_sources.items()},
        )

    def rebound(
        self, values: Sequence[SsaValue], owners: Sequence[ir.Operation | None], positions: "ValuePositions"
    ) -> tuple["TiledFusion", dict[TiledNode, TiledNode]] | None:
        """This analysis for another computation with the same body (see
        :mod:`~.shared_bodies`): ``values`` are the other's values, in the order of
        ``positions`` (this analysis's :meth:`value_positions`), and ``owners`` the op
        defining each (:func:`defining_op`). Returns the other's analysis (maps, tiles
        and constraints shared, values and names its own) and the node correspondence,
        or None when the names cannot be carried over (two values of this body share a
        name that the other's differ in, or a tiling parameter's owner is not a node)."""
        nodes: dict[TiledNode, TiledNode] = {}
        names: dict[str, str] = {}
        name_at: dict[int, str] = {}  # a value read through several maps is several nodes
        name_of = _InstructionNames()
        for node, position in zip(self.nodes, positions.nodes):  # operands before users
            value = values[position]
            name = name_at.get(position)
            if name is None:
                name = name_at[position] = name_of(value, owners[position])
            if names.setdefault(node.name, name) != name:
                return None
            operands = [nodes[operand] for operand in node.operands]
            nodes[node] = TiledNode(
                value, name, node.opcode, node.indexing_map, node.tile, node.hidden, node.region, node.serial, operands
            )
        parameters = []
        for parameter in self.parameters:
            if parameter.owner not in names:
                return None
            parameters.append(TilingParameter(names[parameter.owner], parameter.dim, parameter.size, parameter.contracting))
        fusion = TiledFusion(
            parameters,
            [[nodes[node] for node in candidates] for candidates in self.root_candidates],
            list(nodes.values()),
            self.constraints,
            self.root_rank,
            {origin: values[position] for origin, position in positions.sources.items()},
            self.runtime_ranges,
            self.result_numbers,
        )
        return fusion, nodes

    def valid_tilings(self) -> list[tuple[int, ...]]:
        """Every tiling from :func:`flat_tilings_for_input_space` over the parameters'
        sizes that satisfies the constraints, in lexicographic order."""
        space = [p.size for p in self.parameters]
        return [t for t in flat_tilings_for_input_space(space) if self.constraints.is_satisfied_by(list(t))]


@dataclass(frozen=True)
class ValuePositions:
    """Where the values of a :class:`TiledFusion` are among all the values of its
    computation (:meth:`TiledFusion.value_positions`): per node, in node order, and per
    runtime source."""

    nodes: list[int]
    sources: dict[str, int]


def tile_size_choices(n: int) -> list[int]:
    """The tile sizes tried along a dimension of size ``n``: the powers of two below
    ``n``, then ``n``."""
    return [1 << k for k in range(max(n, 1).bit_length()) if (1 << k) < n] + [n]


def flat_tilings_for_input_space(sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """Per dimension of size ``n``: :func:`tile_size_choices`; all combinations in
    lexicographic order (XLA's ``GetFlatTilingsForInputSpace``)."""
    return list(itertools.product(*(tile_size_choices(n) for n in sizes)))


@dataclass
class MapResults:
    """What an analysis derives from an indexing map alone: its symbolic tile, its
    simplified form. One analysis keeps its own; analyses of one run may share one
    (:class:`~.shared_bodies.TilingMemo`: an elementwise map recurs across fusions)."""

    #: By map, tiling parameter sizes (the tile is that of the map over the whole
    #: parameter ranges) and whether every constraint is accepted (``allow_pad``).
    tiles: dict[tuple[IndexingMap, tuple[int, ...], bool], SymbolicTile | NotATile] = field(default_factory=dict)
    simplified: dict[IndexingMap, IndexingMap] = field(default_factory=dict)
    #: The values of :attr:`simplified`: without a dimension of one point (which
    #: :func:`simplify_preserving_points` widens), each is its own simplification (the
    #: simplifier is idempotent, ``python_tests/maps/test_map_algebra_random.py``).
    fixed: set[IndexingMap] = field(default_factory=set)
    #: By map and shape: what an elementwise op of that shape reads of each operand
    #: through the map (the map composed with the identity over the shape, simplified).
    elementwise: dict[tuple[IndexingMap, tuple[int, ...]], IndexingMap] = field(default_factory=dict)
    #: By composed operand map of a contraction (its :meth:`~IndexingMap.memo_key`: the
    #: names are printed), the contraction's hidden parameter positions and contracted
    #: sizes: the map with the contracted range variables made those parameters.
    contracted: dict[tuple[object, ...], IndexingMap] = field(default_factory=dict)
    #: By tiling parameter sizes, the positions of the root's output dimensions among
    #: them and the context: the root's map.
    starts: dict[tuple[tuple[int, ...], tuple[int, ...], ir.Context], IndexingMap] = field(default_factory=dict)


def analyze_fusion(
    computation: ir.Operation | ir.Region,
    *,
    allow_pad: bool = False,
    map_results: MapResults | None = None,
    max_nodes: int = MAX_TILED_NODES,
) -> TiledFusion | AnalysisFailure:
    """The symbolic tiling of a computation (a ``func.func``, an ``mhlo.fusion`` or its
    region). ``allow_pad``: beyond XLA's Triton tiling, pads are tiled wherever they are
    (else only in a gemm fusion: :func:`pads_allowed`) and every constraint of a map is
    accepted (left padding, a convolution's padded window: :func:`~.symbolic_tile.symbolic_tile`'s
    ``any_constraints``); ``map_results``: shared with other analyses (see
    :class:`MapResults`); ``max_nodes``: more tiled instructions than that is a failure
    (``limits.MAX_TILED_NODES``). Token results (a program's ordered effects) have no
    index space: the outputs are the other results (:attr:`TiledFusion.result_numbers`)."""
    region = computation if isinstance(computation, ir.Region) else computation.regions[0]
    if not region.blocks:
        return AnalysisFailure("the computation has no body")
    block = region.blocks[0]
    results = _outputs(block)
    numbers = tuple(k for k, value in enumerate(results) if not is_token(value.type))
    if not numbers:
        return AnalysisFailure("the computation has only token outputs" if results else "the computation has no output")
    builder = _Builder(pads_allowed(computation, allow_pad), {}, map_results or MapResults(), max_nodes, allow_pad)
    fusion = builder.build(block, [results[k] for k in numbers])
    if isinstance(fusion, TiledFusion) and len(numbers) < len(results):
        fusion.result_numbers = numbers
    return fusion


def pads_allowed(computation: ir.Operation | ir.Region, allow_pad: bool) -> bool:
    """Whether the analysis of ``computation`` tiles its pads: when asked
    (``allow_pad``), else in a Triton gemm fusion only, as XLA's tiling
    (:func:`~.hlo_source.is_gemm_fusion`)."""
    return allow_pad or (isinstance(computation, ir.Operation) and is_gemm_fusion(computation))


def _zero_sized(outputs: list[SsaValue]) -> str:
    """The type of the first zero-sized tensor among ``outputs`` ('' if none)."""
    for value in outputs:
        value_type = value.type
        if isinstance(value_type, ir.RankedTensorType) and value_type.has_static_shape and 0 in value_type.shape:
            return str(value_type)
    return ""


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
    builder = _Builder(allow_pad, substitutions, MapResults(), any_constraints=allow_pad)
    return builder.build(consumer_block, outputs, extra_blocks=(producer_block,))


def _block_of(computation: ir.Operation | ir.Region) -> ir.Block:
    region = computation if isinstance(computation, ir.Region) else computation.regions[0]
    return region.blocks[0]


def _outputs(block: ir.Block) -> list[SsaValue]:
    terminator = block.operations[-1]
    return list(terminator.operands)


class _Failure(Exception):
    pass


class _Builder:
    def __init__(
        self, allow_pad: bool, substitutions: dict[SsaValue, SsaValue], map_results: MapResults,
        max_nodes: int = MAX_TILED_NODES, any_constraints: bool = False,
    ):
        self.allow_pad = allow_pad
        self.any_constraints = any_constraints  # symbolic_tile's: the maps' constraints beyond XLA's
        self.max_nodes = max_nodes
        self.substitutions = substitutions
        self.runtime_sources: dict[str, SsaValue] = {}
        self.runtime_ranges: dict[str, Interval] = {}
        self.parameters: list[TilingParameter] = []
        self.sizes: tuple[int, ...] = ()  # of the parameters, once all are declared
        self.nodes: dict[tuple[SsaValue, IndexingMap, tuple[int, ...], tuple[tuple[int, int], ...]], TiledNode] = {}
        self.order: list[TiledNode] = []
        self.hidden: dict[ir.Operation, list[int]] = {}
        self.names = _InstructionNames()
        self.value_names: dict[SsaValue, str] = {}
        # The symbolic tile of each distinct map (an elementwise chain reads every value
        # through the same map) and each composed map simplified.
        self.tiles = map_results.tiles
        self.simplified = map_results.simplified
        self.fixed = map_results.fixed
        self.elementwise = map_results.elementwise
        self.contracted = map_results.contracted
        self.starts = map_results.starts
        # Per contraction op: its contracted sizes (read from its attributes once).
        self.contracted_sizes: dict[ir.Operation, list[int]] = {}
        # Tiling parameters whose tile size must be 1: a runtime offset is read per element
        # along them (:meth:`_offsets_read_per_element`).
        self.per_element: set[int] = set()

    def build(
        self, block: ir.Block, outputs: list[SsaValue], extra_blocks: Sequence[ir.Block] = ()
    ) -> TiledFusion | AnalysisFailure:
        empty = _zero_sized(outputs)
        if empty:
            return AnalysisFailure(f"output {empty} is zero-sized: there is nothing to tile")
        with REGIONS.session():  # one for every op's maps (the region maps of ops with a body kept meanwhile)
            return self._build(block, outputs, extra_blocks)

    def _build(self, block: ir.Block, outputs: list[SsaValue], extra_blocks: Sequence[ir.Block]) -> TiledFusion | AnalysisFailure:
        try:
            root = self._real_root(outputs)
            root_shape = _static_shape(root)
            self._declare_parameters(root, root_shape)
            root_op = defining_op(root)
            # Every op's view, kept until the walk ends: the bindings then hand out the same
            # Python op for an operand's producer instead of making one at every read.
            views = list(itertools.chain(block.operations, *(b.operations for b in extra_blocks)))
            for view in views:
                # The name first (most ops are not contractions), from the view's class
                # where the dialect has one (no binding call).
                operation_name = getattr(type(view), "OPERATION_NAME", None) or view.operation.name
                if operation_name.split(".", 1)[-1] in _CONTRACTION_KINDS:
                    op = view.operation
                    if _opcode(op) in CONTRACTION_OPCODES and op != root_op:
                        self._hidden_dims(op)
            self.sizes = tuple(p.size for p in self.parameters)
            output_dims = tuple(i for i, p in enumerate(self.parameters) if not p.contracting)
            start = self._start_map(output_dims, root.context)
            root_node = self._visit(root, start, ())
            roots = [[root_node] if value == root else self._candidates(value) for value in outputs]
        except _Failure as failure:
            return AnalysisFailure(str(failure))
        constraints = ConstraintExpression.always()
        for tile_constraints in {id(node.tile.constraints): node.tile.constraints for node in self.order}.values():
            constraints = constraints & tile_constraints  # each distinct tile's once
        for p in sorted(self.per_element):
            constraints = constraints & ConstraintExpression.of(ax.dim(p, root.context), Interval(1, 1))
        return TiledFusion(
            self.parameters, roots, self.order, constraints.simplify(), len(root_shape), self.runtime_sources,
            self.runtime_ranges,
        )

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
        name = self.names(root, owner)
        if owner is not None and _opcode(owner) in CONTRACTION_OPCODES:
            sizes = self._contracting_sizes(owner)
            self.hidden[owner] = list(range(len(sizes)))
            for k, size in enumerate(sizes):
                self.parameters.append(TilingParameter(name, k, size, contracting=True))
        for i, size in enumerate(shape):
            self.parameters.append(TilingParameter(name, i, size))

    def _tag_runtime_sources(self, m: IndexingMap, op: ir.Operation, serial: int) -> IndexingMap:
        """``m`` with each runtime variable's origin (``operand k``, of ``op``) made a key
        of :attr:`runtime_sources`, so the value it reads is known after composition;
        variables that read one operand at different elements (a gather's index vector)
        get one key each (``operand k of node n, element j``)."""
        if not m.runtime_vars:
            return m
        shared = Counter(variable.origin for variable in m.runtime_vars)
        tagged = []
        for j, variable in enumerate(m.runtime_vars):
            match = re.fullmatch(r"operand (\d+)", variable.origin)
            origin = variable.origin
            if match and int(match.group(1)) < len(op.operands):
                origin = f"operand {match.group(1)} of node {serial}"
                if shared[variable.origin] > 1:
                    origin += f", element {j}"
                self.runtime_sources[origin] = op.operands[int(match.group(1))]
                self.runtime_ranges[origin] = variable.bounds
            tagged.append(Variable(variable.bounds, variable.name, origin))
        return m.replace(runtimes=tagged)

    def _offsets_read_per_element(
        self, indexing: IndexingMap, m: IndexingMap, sources: Sequence[RuntimeSource], op: ir.Operation, name: str
    ) -> None:
        """Notes in :attr:`per_element` the tiling parameters along which a runtime
        offset of ``m`` (an operand map of ``op``, whose results ``indexing`` reads) is
        read from a tensor at a different element (a gather's indices row per output row):
        a tile holds the one box per runtime value it is counted with only when its size
        along them is 1. A scalar offset (a dynamic slice's start) is one value per tile."""
        if not sources or len(sources) != len(m.runtime_vars):
            return
        in_results: set[int] = set()
        for expr in m.results:
            ax.used_variables(expr, set(), in_results)
        first = len(m.range_vars)
        for j, source in enumerate(sources):
            if first + j not in in_results or ir.ShapedType(op.operands[source.operand].type).rank == 0:
                continue  # only in constraints (a superset tile), or one scalar
            source_dims: set[int] = set()
            source_symbols: set[int] = set()
            for expr in source.index_map.results:
                ax.used_variables(expr, source_dims, source_symbols)
            for d in source_dims:
                ax.used_variables(indexing.results[d], self.per_element, source_symbols)
            if source_symbols:  # the element read varies with a variable no tile size fixes
                raise _Failure(f"{name}: operand {source.operand} is read at offsets that vary within a tile")

    def _full_dims(self, indexing: IndexingMap) -> IndexingMap:
        """``indexing`` with every dimension over its whole tiling parameter: a tile
        size may exceed a range a pad narrowed, and the tile's formulas must hold there."""
        if len(indexing.dim_vars) != len(self.parameters):
            return indexing
        full = [Interval.of_size(p.size) for p in self.parameters]
        if all(v.bounds == bounds for v, bounds in zip(indexing.dim_vars, full)):
            return indexing  # the common case: only a pad or slice narrows a range (no new map to print and key)
        return indexing.replace(dims=[Variable(bounds, v.name, v.origin) for v, bounds in zip(indexing.dim_vars, full)])

    def _elementwise_operand_map(self, indexing: IndexingMap, shape: tuple[int, ...], context: ir.Context) -> IndexingMap:
        """What an elementwise op of ``shape`` read through ``indexing`` reads of each operand."""
        found = self.elementwise.get((indexing, shape))
        if found is None:
            identity = IndexingMap.identity(shape, context=context)
            found = self.elementwise[(indexing, shape)] = self._simplify(compose(indexing, identity))
        return found

    def _simplify(self, m: IndexingMap, consumer: IndexingMap | None = None) -> IndexingMap:
        """``m`` simplified (as :func:`simplify_preserving_points`), once per map;
        ``consumer``: the map ``m`` was composed after, when it is one."""
        found = self.simplified.get(m)
        if found is None:
            kept = consumer is not None and _selects_results(m, consumer) and (consumer in self.fixed or consumer.simplify() is consumer)
            found = self.simplified[m] = m if kept else simplify_preserving_points(m)
            self.fixed.add(found)
        return found

    def _hidden_dims(self, op: ir.Operation) -> list[int]:
        """The parameter positions of a dot's contracting dimensions (declared before
        the walk, in program order, after the root's)."""
        found = self.hidden.get(op)
        if found is None:
            found = []
            for k, size in enumerate(self._contracting_sizes(op)):
                found.append(len(self.parameters))
                self.parameters.append(TilingParameter(instruction_name(op) or op.name, k, size, contracting=True))
            self.hidden[op] = found
            self.sizes = tuple(p.size for p in self.parameters)
        return found

    def _start_map(self, output_dims: tuple[int, ...], ctx: ir.Context) -> IndexingMap:
        """The root's map: from the tiling parameters to its output dimensions (the
        parameters ``output_dims``), once per parameter sizes."""
        key = (self.sizes, output_dims, ctx)
        found = self.starts.get(key)
        if found is None:
            dims = [Interval.of_size(size) for size in self.sizes]
            found = self.starts[key] = IndexingMap.from_exprs(dims, [ax.dim(i, ctx) for i in output_dims], context=ctx)
        return found

    def _contracting_sizes(self, op: ir.Operation) -> list[int]:
        """:func:`_contracting_sizes` of a contraction op of this computation (read once)."""
        found = self.contracted_sizes.get(op)
        if found is None:
            found = self.contracted_sizes[op] = _contracting_sizes(op)
        return found

    def _contracted(self, composed: IndexingMap, hidden: list[int], sizes: list[int]) -> IndexingMap:
        """:func:`_contract_as_parameters`, once per map, parameters and sizes."""
        key = (composed.memo_key(), tuple(hidden), tuple(sizes))
        found = self.contracted.get(key)
        if found is None:
            found = self.contracted[key] = _contract_as_parameters(composed, hidden, sizes)
        return found

    def _visit(
        self, value: SsaValue, indexing: IndexingMap, hidden: tuple[int, ...], region: tuple[tuple[int, int], ...] = ()
    ) -> TiledNode:
        if self.substitutions:
            value = self.substitutions.get(value, value)
        key = (value, indexing, hidden, region)
        found = self.nodes.get(key)
        if found is not None:
            return found
        op = defining_op(value)
        operation_name = op.name if op is not None else None
        name = self.value_names.get(value)
        if name is None:  # a value read through several maps is several nodes of one name
            name = self.value_names[value] = self.names(value, op)
        opcode = _opcode(op, operation_name)
        if len(self.nodes) >= self.max_nodes:
            raise _Failure(
                f"{name}: more than {self.max_nodes} tiled instructions (values read through distinct maps; "
                "limits.MAX_TILED_NODES, option max-nodes)"
            )
        check_time("the tiling analysis")
        if opcode == "fusion" and not hidden:
            # XLA nests fusions only as the operands of a dot (its gemm fusions).
            raise _Failure(f"{name}: nested fusions are supported only as operands of a dot")
        if opcode == "pad" and not self.allow_pad:
            raise _Failure(f"{name}: pad is only supported in gemm fusions (XLA's rule); allow-pad (allow_pad=True) tiles it without a device")
        value_type = value.type
        if not isinstance(value_type, ir.RankedTensorType):  # a tuple, a token
            raise _Failure(f"{name}: a value of type {value_type} is not a tensor")
        tile = self.tiles.get((indexing, self.sizes, self.any_constraints))
        if tile is None:
            full = self._full_dims(indexing)
            tile = self.tiles[(indexing, self.sizes, self.any_constraints)] = symbolic_tile(
                full, simplified=full in self.fixed, any_constraints=self.any_constraints)
        if isinstance(tile, NotATile):
            if opcode in ("reshape", "bitcast"):
                raise _Failure(f"Bailing out on reshape {name} with indexing map {indexing}: {tile.reason}")
            raise _Failure(f"failed to compute a symbolic tile of {indexing} for {name}: {tile.reason}")
        node = TiledNode(value, name, opcode, indexing, tile, hidden, region, len(self.nodes))
        self.nodes[key] = node
        if op is not None and opcode not in LEAF_OPS:
            operands = list(op.operands)  # each operand read once
            shape = elementwise_shape_of(operation_name or "", value_type, operands) if len(op.results) == 1 else None
            if shape is not None:  # every operand read through the identity: one map for all
                operand_map = self._elementwise_operand_map(indexing, shape, op.context)
                for operand in operands:
                    node.operands.append(self._visit(operand, operand_map, hidden, region))
                self.order.append(node)
                return node
            result_index = ir.OpResult(value).result_number
            runtime: Sequence[Sequence[RuntimeSource]] = ()
            try:
                operand_map_sets: list[Collection[IndexingMap]]
                if opcode == "fusion":
                    operand_map_sets = list(fusion_indexing(op.regions[0], result_index).maps)
                else:
                    # In build's session (the public per-op API opens one per call).
                    op_indexing = result_indexing(op, result_index, simplify=False, regions=REGIONS)
                    operand_map_sets, runtime = list(op_indexing.maps), op_indexing.runtime
            except HloIndexingError as exc:
                raise _Failure(f"{name}: no indexing ({exc})") from None
            operand_hidden = hidden + tuple(self._hidden_dims(op)) if opcode in CONTRACTION_OPCODES else hidden
            for k, operand in enumerate(operands):
                operand_maps = list(operand_map_sets[k])
                if len(operand_maps) != 1:
                    scalar = _scalar_read(operand_maps) if operand_maps else None
                    if scalar is None:
                        raise _Failure(f"{name}: operand {k} is read through {len(operand_maps)} indexing maps, not one")
                    operand_maps = [scalar]
                if operand_maps[0].is_undefined:
                    raise _Failure(f"{name}: operand {k} has unknown indexing ({operand_maps[0].reason})")
                if runtime:
                    self._offsets_read_per_element(indexing, operand_maps[0], runtime[k], op, name)
                composed = compose(indexing, self._tag_runtime_sources(operand_maps[0], op, node.serial))
                if opcode in CONTRACTION_OPCODES:
                    composed = self._contracted(composed, self._hidden_dims(op), self._contracting_sizes(op))
                if opcode in CONTRACTION_OPCODES or opcode == "concatenate":
                    operand_region = region + ((node.serial, k if opcode == "concatenate" else 0),)
                else:
                    operand_region = region
                node.operands.append(
                    self._visit(operand, self._simplify(composed, indexing), operand_hidden, operand_region)
                )
        self.order.append(node)
        return node


def _scalar_read(maps: Sequence[IndexingMap]) -> IndexingMap | None:
    """One map for a scalar operand an op reads through several (a pad's padding value,
    one map per padded side): the scalar read at every point of the hull of their
    dimension ranges, as XLA's pad indexing reads it (a superset: one element, read by
    the programs that need it and by the others). None when ``maps`` are not all defined
    maps to a scalar, with no runtime variable."""
    if any(m.is_undefined or m.num_results or m.runtime_vars or m.num_dims != maps[0].num_dims for m in maps):
        return None
    dims = [first.bounds for first in maps[0].dim_vars]
    for m in maps[1:]:
        dims = [bounds.hull(v.bounds) for bounds, v in zip(dims, m.dim_vars)]
    return IndexingMap.from_exprs(dims, [], context=maps[0].context)


def _static_shape(value: SsaValue) -> list[int]:
    """The shape of a statically shaped tensor value; a failure for anything else."""
    try:
        tensor = ir.RankedTensorType(value.type)
    except ValueError:
        raise _Failure(f"{_name_of(value)}: the output {value.type} is not a ranked tensor") from None
    if not tensor.has_static_shape:
        raise _Failure(f"{_name_of(value)}: the output {value.type} has a dynamic shape")
    return list(tensor.shape)


def _selects_results(m: IndexingMap, consumer: IndexingMap) -> bool:
    """Whether ``m`` (a composition after ``consumer``) only selects results of
    ``consumer``: neither has constraints, both have the same variables and no dimension
    of one point, each result of ``m`` is a result of ``consumer`` or a constant. When
    ``consumer`` is its own simplification, so is ``m``: without constraints the
    simplifier rewrites each result alone over the variables' ranges, and
    ``consumer``'s came back unchanged over these very ranges (a projection after a
    bitcast: ``(d0 floordiv 16, d0 mod 16, d1)`` then ``(d0, d1, d2) -> (d0, d1)``)."""
    if m.constraints or consumer.constraints or m.dim_vars != consumer.dim_vars or m.symbol_vars != consumer.symbol_vars:
        return False
    if any(v.bounds.is_point for v in m.dim_vars):
        return False
    own = set(consumer.results)
    return all(r in own or isinstance(ax.typed(r), ax.Const) for r in m.results)


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


def _call_target(op: ir.Operation) -> str:
    """A custom call's target name ('' when absent)."""
    attributes = op.attributes
    return ir.StringAttr(attributes["call_target_name"]).value if "call_target_name" in attributes else ""


def _contracting_sizes(op: ir.Operation) -> list[int]:
    """Sizes of a contraction's contracted dimensions: a dot's contracting dimensions
    (``dot``: the lhs's last one); a convolution's kernel spatial sizes, then its input
    features per group (the kernel's input feature dimension)."""
    lhs_shape = ir.RankedTensorType(op.operands[0].type).shape
    if _opcode(op) == "convolution":
        kernel = tuple(ir.RankedTensorType(op.operands[1].type).shape)
        dn = op_attrs.conv_dimensions(op, tuple(lhs_shape), kernel, tuple(ir.RankedTensorType(op.results[0].type).shape))
        return [kernel[k] for k in dn.kernel_spatial] + [kernel[dn.kernel_input_feature]]
    if _opcode(op) == "scaled-dot":
        rhs_shape = ir.RankedTensorType(op.operands[1].type).shape
        return [lhs_shape[d] for d in op_attrs.scaled_dot_dimensions(op, tuple(lhs_shape), tuple(rhs_shape)).lhs_contracting]
    if "dot_dimension_numbers" not in op.attributes:
        return [lhs_shape[-1]]
    match = re.search(r"lhs_contracting_dimensions = \[([^\]]*)\]", str(op.attributes["dot_dimension_numbers"]))
    return [lhs_shape[int(d)] for d in match.group(1).split(",")] if match and match.group(1).strip() else []


def _contract_as_parameters(m: IndexingMap, hidden: list[int], sizes: Sequence[int]) -> IndexingMap:
    """The contraction's range variables (the first ones of ``m``) become the hidden
    parameter dimensions ``hidden`` (of ``sizes``). A dot has one range variable per
    contracting dimension; a convolution's rule has none for a dimension of size 1
    (its parameter is then unused), so the range variables pair with the parameters of
    size above 1 when there are fewer of them."""
    ctx = m.context
    paired = list(zip(hidden, sizes))
    if len(m.range_vars) < len(paired):
        paired = [(h, size) for h, size in paired if size > 1]
    if [v.bounds for v in m.range_vars[: len(paired)]] != [Interval.of_size(size) for _, size in paired]:
        raise _Failure(f"the contraction's range variables {m.range_vars} do not match its contracted sizes {list(sizes)}")
    hidden = [h for h, _ in paired]
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
