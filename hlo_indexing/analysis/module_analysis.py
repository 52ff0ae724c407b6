"""The indexing maps of a whole module: :func:`module_indexing` computes the
:class:`~hlo_indexing.analysis.results.ModuleIndexing` that :func:`hlo_indexing.analyze`
returns (see :mod:`hlo_indexing.frontend` for what it accepts) and that the print passes
render (``hlo-print-fused-indexing-maps``, ``hlo-print-indexing-maps``; the result
types and their text and JSON renderings are in :mod:`hlo_indexing.analysis.results`).
A part that fails (an op's maps, a computation's, its physical maps or analyses) is
recorded as a :class:`~hlo_indexing.analysis.results.Failure` where its result would be;
the rest is computed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from hlo_indexing.analysis.coalescing import Coalescing
from hlo_indexing.analysis.coalescing import coalescing as argument_coalescing
from hlo_indexing.analysis.fusion import (
    DEFAULT_MAX_MAPS,
    REGIONS,
    FusionIndexing,
    computation_indexing,
    fusion_indexing,
    fusion_input_to_output_indexing,
    tensor_elements,
)
from hlo_indexing.analysis.jax_names import argument_names, result_names
from hlo_indexing.analysis.per_op import hlo_ops
from hlo_indexing.analysis.physical import FORMS, per_op_maps, physical_fusion_indexing
from hlo_indexing.analysis.results import ComputationMaps, Failure, ModuleIndexing, OpMaps, ValueMaps
from hlo_indexing.analysis.utilization import DEFAULT_MAX_POINTS, Utilization, operand_utilization
from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.call_like import block_of, computations
from hlo_indexing.dialect_glue.locations import ANONYMOUS_BUFFER, enclosing_function, location_name, location_of
from hlo_indexing.direction import Direction
from hlo_indexing.errors import HloIndexingError, InvalidArgumentError, SourceLocation
from hlo_indexing.ops.result import InstructionIndexing
from hlo_indexing.ops.rule import is_token

#: What the analysis was doing when a computation's part failed (the note of its error).
FUSED_CONTEXT = "while computing the fused indexing maps of this computation"
PHYSICAL_CONTEXT = "while composing the fused maps with the layouts"
ANALYSES_CONTEXT = "while computing operand utilization / coalescing of this computation"
#: The exceptions a computation's analysis may raise on input it cannot handle.
_COMPUTATION_ERRORS = (HloIndexingError, ValueError, NotImplementedError)


def _short_location(op: OpLike, buffer: str | None) -> str:
    where = location_of(op.location, buffer)
    return str(where) if where is not None else str(op.location)


def module_indexing(
    module: ir.Operation,
    direction: str,
    *,
    fused: bool = True,
    per_op: bool = True,
    max_maps: int = DEFAULT_MAX_MAPS,
    buffer: str | None = None,
    function: str | None = None,
    simplify: bool = True,
    within: Callable[[ir.Operation], bool] | None = None,
    physical: str = "none",
    analyses: bool = False,
    max_points: int = DEFAULT_MAX_POINTS,
    on_result: Callable[[ComputationMaps | OpMaps], None] | None = None,
) -> ModuleIndexing:
    """The fused maps of every computation (``fused``) and the per-op maps of every HLO op
    (``per_op``, simplified unless ``simplify=False``) of ``module``, in source order;
    with ``function``, only those of (or in) the ``func.func`` of that name; with
    ``within``, only the computations and ops it accepts (e.g. those nested in one
    fusion); ``buffer`` names the text it was parsed from (for locations).

    ``physical`` (``coordinates`` or ``offset``; ``none``: logical indices) maps physical
    indices (:mod:`~hlo_indexing.analysis.physical`): the per-op maps, and the fused maps
    printed (``ComputationMaps.values``; ``maps`` stay logical). ``analyses`` adds each
    computation's per-argument utilisation and coalescing, enumerating at most
    ``max_points`` points. Fused maps have both in ``direction="output-to-input"`` only
    (:class:`~hlo_indexing.errors.InvalidArgumentError` otherwise). ``on_result`` gets
    each op's result, then each computation's, as soon as it is computed (a pass prints
    it then)."""
    if physical != "none" and physical not in FORMS:
        raise InvalidArgumentError(f"physical must be none or one of {', '.join(FORMS)}, got {physical!r}")
    if fused and (physical != "none" or analyses) and direction != Direction.OUTPUT_TO_INPUT:
        raise InvalidArgumentError("physical fused maps and the analyses are output-to-input only")
    selected = _selected_ops(module, function) if per_op else []
    if within is not None:
        selected = [item for item in selected if within(item[0])]
    # The fused walks reuse the (simplified, logical) per-op maps instead of deriving them again.
    known: dict[ir.Operation, tuple[InstructionIndexing, ...]] = {}
    ops = []
    with REGIONS.session():  # the regions' maps are computed once for the whole module
        for (op, where, loc), owner in zip(selected, _owners(selected), strict=True):
            indexing: tuple[InstructionIndexing, ...] = ()
            failure = None
            try:
                indexing = tuple(per_op_maps(op, direction, simplify, physical))
            except HloIndexingError as exc:
                failure = Failure(exc)
            if failure is None and simplify and physical == "none":
                known[op] = indexing
            located = _located_text(where, loc, buffer)
            found = OpMaps(op.name, located, indexing, direction, location_name(loc), owner, failure, operation=op)
            ops.append(found)
            if on_result is not None:
                on_result(found)
        options = _Options(direction, max_maps, physical, analyses, max_points)
        computations_found = []
        for computation in _computation_maps(module, options, buffer, function, known, within) if fused else ():
            computations_found.append(computation)
            if on_result is not None:
                on_result(computation)
    return ModuleIndexing(tuple(computations_found), tuple(ops), direction, module, physical=physical)


def _selected_ops(module: ir.Operation, function: str | None) -> list[tuple[ir.Operation, SourceLocation | None, ir.Location]]:
    """``(op, file position, location)`` of the HLO ops that get maps, in source order;
    only those in ``function`` when given. Each location is read once."""
    located = [(op, location_of(loc), loc) for op in hlo_ops(module) for loc in (op.location,)]
    located.sort(key=lambda item: _order_key(item[1]))
    if function is None:
        return located
    return [item for item, owner in zip(located, _owners(located), strict=True) if owner == function]


def _order_key(where: SourceLocation | None) -> tuple[int, str, int, int]:
    """:func:`source_order_key` of a file position already found."""
    return (0, where.filename, where.line, where.column) if where is not None else (1, "", 0, 0)


def _located_text(where: SourceLocation | None, loc: ir.Location, buffer: str | None) -> str:
    """:func:`_short_location` of an op whose file position (found without ``buffer``)
    is ``where``."""
    if where is None:
        return str(loc)
    if buffer is not None and where.filename == ANONYMOUS_BUFFER:
        where = SourceLocation(buffer, where.line, where.column)
    return str(where)


def _owners(located: list[tuple[ir.Operation, SourceLocation | None, ir.Location]]) -> list[str | None]:
    """:func:`enclosing_function` of each op, looked up once per parent op."""
    by_parent: dict[ir.Operation, str | None] = {}
    owners = []
    for op, _, _ in located:
        parent = op.parent
        if parent is None or op.name == "func.func":
            owners.append(enclosing_function(op))
        elif parent in by_parent:
            owners.append(by_parent[parent])
        else:
            owners.append(by_parent.setdefault(parent, enclosing_function(op)))
    return owners


@dataclass(frozen=True)
class _Options:
    """What :func:`module_indexing` computes for each computation."""

    direction: str
    max_maps: int
    physical: str
    analyses: bool
    max_points: int


def _computation_maps(
    module: ir.Operation,
    options: _Options,
    buffer: str | None,
    function: str | None,
    known: dict[ir.Operation, tuple[InstructionIndexing, ...]],
    within: Callable[[ir.Operation], bool] | None,
) -> Iterator[ComputationMaps]:
    shared: dict = {}  # the computations share the fused walk's memos
    for name, op in computations(module):
        owner = enclosing_function(op)
        if (function is not None and owner != function) or (within is not None and not within(op)):
            continue
        computation = ComputationMaps(
            name,
            _short_location(op, buffer),
            (),
            options.direction,
            kind=op.name,
            function=owner,
            result_names=result_names(op),
            argument_names=argument_names(op),
            operation=op,
        )
        try:
            direction = Direction.of(options.direction)
            maps = computation_indexing(op, direction, max_maps=options.max_maps, per_op=known, shared=shared)
        except _COMPUTATION_ERRORS as exc:
            yield replace(computation, failure=Failure(exc, FUSED_CONTEXT))
            continue
        utilization, coalesced, analyses_failure = (None, None, None)
        if options.analyses:
            utilization, coalesced, analyses_failure = _analyses(op, maps, options)
        yield replace(
            computation,
            maps=maps,
            values=tuple(_values(op, maps, options)),
            utilization=utilization,
            coalescing=coalesced,
            analyses_failure=analyses_failure,
        )


def _values(op: ir.Operation, maps: tuple[FusionIndexing, ...], options: _Options) -> Iterator[ValueMaps]:
    """What is printed of each result (argument, input-to-output): its maps, between
    physical indices when asked; one entry per tensor element of a tuple (logical)."""
    block = block_of(op)
    output_to_input = options.direction == Direction.OUTPUT_TO_INPUT
    roots = block.operations[-1].operands if output_to_input else block.arguments
    element_indexing = fusion_indexing if output_to_input else fusion_input_to_output_indexing
    for index, (root, fused) in enumerate(zip(roots, maps, strict=True)):
        paths = tensor_elements(root.type)
        if paths != [()]:  # a tuple: one entry per tensor element
            for path in paths:
                try:
                    yield ValueMaps(index, path, element_indexing(op, index, element=path, max_maps=options.max_maps))
                except _COMPUTATION_ERRORS as exc:
                    yield ValueMaps(index, path, Failure(exc, FUSED_CONTEXT))
        elif options.physical != "none" and not is_token(root.type):  # a token has no map, logical or physical
            try:
                yield ValueMaps(index, (), physical_fusion_indexing(op, index, form=options.physical, fused=fused))
            except (HloIndexingError, ValueError) as exc:
                yield ValueMaps(index, (), Failure(exc, PHYSICAL_CONTEXT))
        else:
            yield ValueMaps(index, (), fused)


def _analyses(
    op: ir.Operation, maps: tuple[FusionIndexing, ...], options: _Options
) -> tuple[tuple[Utilization, ...] | None, tuple[Coalescing, ...] | None, Failure | None]:
    """The per-argument utilisation and coalescing of a computation, or why they could
    not be computed."""
    try:
        return (
            operand_utilization(op, fused=maps, max_points=options.max_points),
            argument_coalescing(op, fused=maps, max_points=options.max_points),
            None,
        )
    except (HloIndexingError, ValueError) as exc:
        return None, None, Failure(exc, ANALYSES_CONTEXT)
