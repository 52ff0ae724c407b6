"""Computations with the same body share one tiling analysis and one ranking.

XLA's compiled HLO repeats fusion bodies: every layer of a model has the same
elementwise, reduction and dot fusions, differing only in instruction names (an 8-layer
training step has 668 fusions and 73 distinct bodies). :class:`TilingMemo` analyses
(:func:`~.tiled_fusion.analyze_fusion`) and ranks (:func:`~.ranking.rank_tilings`) each
distinct body once and gives every other computation with that body the same maps,
tiles, constraints and figures, rebound to its own values and names
(:meth:`~.tiled_fusion.TiledFusion.rebound`, :meth:`~.ranking.Ranking.rebound`): the
result equals what the direct calls give for that computation. What is printed of a
ranked tiling is shared the same way: its exactness (:meth:`TilingMemo.exactness`) and
its Pallas BlockSpecs (:meth:`TilingMemo.blockspecs`) are computed once per body and
tile sizes, from one tiled computation (an 8-layer step prints 5 tilings of each of its
668 fusions: 3340 exactness and BlockSpecs computations without the memo, 365 with),
and so is anything else a report builds of a body (:meth:`TilingMemo.per_body`: the
printed tilings, :mod:`~.printed_tiling`), renamed for each computation.

Two bodies are the same when :func:`body_key` is: the same ops in the same order, with
the same attributes (``hlo_indexing.*`` results of the analysis aside), result and
argument types and operand wiring (each operand named by the position of its value in
the walk; a value from outside the body by its type). Instruction names (locations) are
not part of it: the rebinding reads them from the other computation. A computation
that cannot be tiled is analysed by itself (its reason names its own instructions).
Keys are compared only between computations with the same argument and output types
and op count (their :func:`outline`, cheap to read): a computation alone with its
outline is never walked for its key.

A memo holds the values and operations of the module it was used on: make one per run
over a module and drop it with that run. Example::

    memo = TilingMemo()
    for label, op in computations(module.operation):
        fusion = memo.analyze(op)
        if not isinstance(fusion, AnalysisFailure):
            ranking = memo.rank(fusion, 48 * 1024)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

from hlo_indexing.layout.attributes import LayoutLike
from hlo_indexing.dialect_glue.bindings import SsaValue, ir
from hlo_indexing.dialect_glue.op_attrs import attribute_key
from hlo_indexing.errors import HloIndexingError, InvalidArgumentError
from hlo_indexing.limits import MAX_PROGRAMS, MAX_TILED_NODES
from hlo_indexing.symbolic_tiling.exactness import OperandExactness, OperandKey, TilingExactness, computation_exactness
from hlo_indexing.symbolic_tiling.pallas import NotABlockError, PallasBlockSpecs, pallas_blockspecs
from hlo_indexing.symbolic_tiling.ranking import Ranking, rank_tilings
from hlo_indexing.symbolic_tiling.tile_counts import CountsCache
from hlo_indexing.symbolic_tiling.tiled_computation import TiledComputation, tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import (
    AnalysisFailure,
    MapResults,
    TiledFusion,
    TiledNode,
    ValuePositions,
    analyze_fusion,
    defining_op,
    pads_allowed,
)


_T = TypeVar("_T")

#: The structure of a computation's body (see :func:`body_key`).
BodyKey = tuple[object, ...]


def body_key(computation: ir.Operation | ir.Region) -> tuple[BodyKey, list[SsaValue]]:
    """The structure of a computation's body (its first region, nested regions
    included), and every value of it in walk order (block arguments and op results,
    values from outside at their first use): two computations with equal keys have
    values that correspond position by position. Iterative, so any nesting depth."""
    body = _walk_body(computation)
    return body.key, body.values


@dataclass
class _Body:
    """A computation's :func:`body_key` and values, and the op defining each value (None
    for a block argument), read in the same walk."""

    key: BodyKey
    values: list[SsaValue]
    owners: list[ir.Operation | None]


def _walk_body(computation: ir.Operation | ir.Region) -> _Body:
    """:func:`body_key`'s walk, which also keeps each value's defining op."""
    region = computation if isinstance(computation, ir.Region) else computation.regions[0]
    values: list[SsaValue] = []
    owners: list[ir.Operation | None] = []
    positions: dict[SsaValue, int] = {}
    parts: list[object] = []
    # Pending: a region to enter, the end of one ("}"), or a block's ops from where the
    # walk left them to enter an op's regions.
    work: list[object] = [region]
    while work:
        item = work.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        if isinstance(item, ir.Region):
            parts.append("{")
            work.append("}")
            work.extend(reversed(list(item.blocks)))
            continue
        if isinstance(item, ir.Block):
            arguments = item.arguments
            parts.append(("^", tuple(arguments.types)))
            for argument in arguments:
                positions[argument] = len(values)
                values.append(argument)
                owners.append(None)
            item = iter(list(item.operations))  # resumable (a for loop over the bindings' iterator walks a copy)
        for view in item:  # type: ignore[attr-defined]
            op = view.operation
            operands: list[object] = []
            for operand in op.operands:
                position = positions.get(operand)
                if position is None:  # defined outside the body
                    position = positions[operand] = len(values)
                    values.append(operand)
                    owners.append(defining_op(operand))
                    operands.append(operand.type)
                operands.append(position)
            results = op.results
            parts.append((op.name, tuple(operands), attribute_key(op), tuple(results.types)))
            for result in results:
                positions[result] = len(values)
                values.append(result)
                owners.append(op)
            regions = op.regions
            if len(regions):
                work.append(item)  # the rest of the block, after the op's regions
                work.extend(reversed(list(regions)))
                break
    return _Body(tuple(parts), values, owners)


def outline(computation: ir.Operation | ir.Region) -> tuple[object, ...]:
    """The types of a computation's arguments and outputs (its entry block's arguments
    and its terminator's operands) and the number of ops of its entry block: equal for
    computations with equal :func:`body_key`. Tells apart most computations of different
    bodies without walking them (the fusions of a training step's residual gradient
    differ in their op counts)."""
    region = computation if isinstance(computation, ir.Region) else computation.regions[0]
    if not region.blocks:
        return ()
    block = region.blocks[0]
    operations = block.operations
    count = len(operations)
    outputs = operations[count - 1].operands if count else ()
    return tuple(block.arguments.types), tuple(value.type for value in outputs), count


@dataclass
class _Shared:
    """A computation analysed by itself: its analysis and, once another computation with
    its outline is met, its body and where the analysis's values are in it."""

    computation: ir.Operation | ir.Region
    fusion: TiledFusion
    walked: _Body | None = None
    bound: ValuePositions | None = None

    def body(self) -> _Body:
        """Its body (walked once)."""
        if self.walked is None:
            self.walked = _walk_body(self.computation)
        return self.walked

    def positions(self) -> ValuePositions:
        """The position in :meth:`body`'s values of each node's value and each runtime
        source (computed once)."""
        if self.bound is None:
            self.bound = self.fusion.value_positions(self.body().values)
        return self.bound


class TilingMemo:
    """The analyses and rankings of one module's computations, one per distinct body
    (see the module docstring)."""

    def __init__(self) -> None:
        # The computations analysed by themselves, by outline.
        self._analysed: dict[tuple[object, bool], list[_Shared]] = {}
        # Per analysis handed out: its body's entry and its nodes by the first one's.
        self._origins: dict[int, tuple[TiledFusion, _Shared, dict[TiledNode, TiledNode]]] = {}
        self._rankings: dict[tuple[object, ...], Ranking] = {}
        # What the analyses and rankings of different bodies share: results per map.
        self._map_results = MapResults()
        self._counts = CountsCache()
        # Per body and tile sizes: its tiled computation, exactness, BlockSpecs (or why not).
        self._tiled: dict[tuple[int, tuple[int, ...]], TiledComputation] = {}
        self._exactness: dict[tuple[int, tuple[int, ...], bool], TilingExactness] = {}
        self._blockspecs: dict[tuple[int, tuple[int, ...]], PallasBlockSpecs | NotABlockError] = {}
        # The counts of one operand, shared by every operand read through the same maps and tiles.
        self._operand_counts: dict[OperandKey, OperandExactness] = {}
        # Per body and key: what per_body computed.
        self._per_body: dict[tuple[int, Hashable], object] = {}

    def analyze(
        self, computation: ir.Operation | ir.Region, *, allow_pad: bool = False, max_nodes: int = MAX_TILED_NODES
    ) -> TiledFusion | AnalysisFailure:
        """:func:`~.tiled_fusion.analyze_fusion` of ``computation``, shared with the
        computations analysed before with the same body (``allow_pad`` and ``max_nodes``
        as :func:`~.tiled_fusion.analyze_fusion`'s)."""
        allow_pad = pads_allowed(computation, allow_pad)  # a gemm fusion's pads: part of the key
        analysed = self._analysed.setdefault((outline(computation), allow_pad), [])
        body: _Body | None = None
        if analysed:
            body = _walk_body(computation)
            for shared in analysed:
                if shared.body().key != body.key:
                    continue
                rebound = shared.fusion.rebound(body.values, body.owners, shared.positions())
                if rebound is not None:
                    fusion, nodes = rebound
                    self._origins[id(fusion)] = (fusion, shared, nodes)
                    return fusion
        fusion_or_failure = analyze_fusion(computation, allow_pad=allow_pad, map_results=self._map_results, max_nodes=max_nodes)
        if isinstance(fusion_or_failure, TiledFusion):
            entry = _Shared(computation, fusion_or_failure, body)
            analysed.append(entry)
            self._origins[id(fusion_or_failure)] = (fusion_or_failure, entry, {node: node for node in fusion_or_failure.nodes})
        return fusion_or_failure

    def origin(self, fusion: TiledFusion) -> tuple[TiledFusion, dict[TiledNode, TiledNode]] | None:
        """For an analysis from :meth:`analyze`: the first analysis of its body and each
        of that analysis's nodes mapped to ``fusion``'s (identity for the first itself);
        None for any other analysis. Lets other per-body results be shared the way
        :meth:`rank` shares rankings."""
        origin = self._origins.get(id(fusion))
        if origin is None or origin[0] is not fusion:
            return None
        return origin[1].fusion, origin[2]

    def rank(
        self,
        fusion: TiledFusion,
        budget_bytes: int,
        *,
        layouts: Mapping[int, LayoutLike] | None = None,
        output_layouts: Mapping[int, LayoutLike] | None = None,
        max_programs: int = MAX_PROGRAMS,
    ) -> Ranking:
        """:func:`~.ranking.rank_tilings` of ``fusion`` (an analysis from
        :meth:`analyze`; any other is ranked by itself), shared with the fusions of the
        same body ranked before with the same budget, layouts and program limit.
        Raises as :func:`~.ranking.rank_tilings` does, naming ``fusion``'s instructions."""
        origin = self._origins.get(id(fusion))
        if origin is None or origin[0] is not fusion:
            return rank_tilings(fusion, budget_bytes, layouts=layouts, output_layouts=output_layouts, max_programs=max_programs)
        _, shared, nodes = origin
        key = (id(shared), budget_bytes, layouts_key(layouts), layouts_key(output_layouts), max_programs)
        ranking = self._rankings.get(key)
        if ranking is None:
            try:
                ranking = rank_tilings(
                    shared.fusion, budget_bytes, layouts=layouts, output_layouts=output_layouts, max_programs=max_programs,
                    counts_cache=self._counts,
                )
            except HloIndexingError:  # raised again below, naming this fusion's instructions
                return rank_tilings(fusion, budget_bytes, layouts=layouts, output_layouts=output_layouts, max_programs=max_programs)
            self._rankings[key] = ranking
        return ranking if fusion is shared.fusion else ranking.rebound(nodes)

    def exactness(self, fusion: TiledFusion, tile_sizes: Sequence[int], *, prove: bool = False) -> TilingExactness:
        """:func:`~.exactness.tiling_exactness` of ``fusion`` (an analysis from
        :meth:`analyze`; any other is computed by itself), computed once per body and
        tile sizes and named after ``fusion``'s parameters; ``prove``: proven by isl too.
        Raises as it does."""
        shared, names = self._shared(fusion)
        key = (id(shared), tuple(tile_sizes))
        found = self._exactness.get((*key, prove))
        if found is None:
            found = self._exactness[(*key, prove)] = computation_exactness(
                shared, self._tiled_computation(shared, key), counts=self._operand_counts, prove=prove
            )
        return found if names is None else found.renamed(names)

    def blockspecs(self, fusion: TiledFusion, tile_sizes: Sequence[int]) -> PallasBlockSpecs:
        """:func:`~.pallas.pallas_blockspecs` of ``fusion`` (as :meth:`exactness`:
        once per body and tile sizes; its text and errors name no instruction). Raises
        :class:`~.pallas.NotABlockError` as it does."""
        shared, _ = self._shared(fusion)
        key = (id(shared), tuple(tile_sizes))
        found = self._blockspecs.get(key)
        if found is None:
            try:
                found = pallas_blockspecs(shared, list(tile_sizes), self._tiled_computation(shared, key))
            except NotABlockError as exc:
                found = exc
            self._blockspecs[key] = found
        if isinstance(found, NotABlockError):
            raise NotABlockError(found.message)
        return found

    def per_body(self, fusion: TiledFusion, key: Hashable, compute: Callable[[TiledFusion], _T]) -> tuple[_T, dict[str, str] | None]:
        """``compute`` of the analysis ``fusion`` shares its body with (``fusion`` an
        analysis from :meth:`analyze`), called once per body and ``key`` (what else the
        result depends on: options, layouts) and kept, and the names of that analysis's
        nodes mapped to ``fusion``'s (None when ``fusion`` is that analysis) to rename
        the result with. What ``compute`` raises is raised, and nothing kept. Lets a
        report build what it prints of a body once (as :meth:`exactness` shares
        exactness). Raises :class:`~hlo_indexing.errors.InvalidArgumentError` for a
        fusion not from :meth:`analyze`."""
        shared, names = self._shared(fusion)
        memo_key = (id(shared), key)
        if memo_key not in self._per_body:
            self._per_body[memo_key] = compute(shared)
        return cast(_T, self._per_body[memo_key]), names  # what compute returned for this key

    def _shared(self, fusion: TiledFusion) -> tuple[TiledFusion, dict[str, str] | None]:
        """The analysis ``fusion`` shares its body with (kept by this memo, so its id
        stays its own), and the names of ``fusion``'s nodes by the shared analysis'
        (None when it is that analysis). A fusion not from :meth:`analyze` is an error:
        nothing keeps it alive for its id to be a key."""
        origin = self._origins.get(id(fusion))
        if origin is None or origin[0] is not fusion:
            raise InvalidArgumentError("TilingMemo: the fusion was not analysed by this memo (use TilingMemo.analyze)")
        _, shared, nodes = origin
        if shared.fusion is fusion:
            return fusion, None
        return shared.fusion, {node.name: other.name for node, other in nodes.items()}

    def _tiled_computation(self, fusion: TiledFusion, key: tuple[int, tuple[int, ...]]) -> TiledComputation:
        found = self._tiled.get(key)
        if found is None:
            found = self._tiled[key] = tiled_computation(fusion, list(key[1]))
        return found


def layouts_key(layouts: Mapping[int, LayoutLike] | None) -> tuple[tuple[int, str], ...]:
    """``layouts`` (by parameter or output number) as part of a memo key: equal for
    layouts that read alike."""
    return tuple(sorted((k, str(layout)) for k, layout in (layouts or {}).items()))
