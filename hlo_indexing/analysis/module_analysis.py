"""The indexing maps of a whole module: :func:`module_indexing` computes the
:class:`~hlo_indexing.analysis.results.ModuleIndexing` that :func:`hlo_indexing.analyze`
returns (see :mod:`hlo_indexing.frontend` for what it accepts; the result types and
their text and JSON renderings are in :mod:`hlo_indexing.analysis.results`).
"""

from __future__ import annotations

from collections.abc import Callable

from hlo_indexing.analysis.fusion import DEFAULT_MAX_MAPS, REGIONS, computation_indexing
from hlo_indexing.analysis.jax_names import argument_names, result_names
from hlo_indexing.analysis.per_op import hlo_ops, indexings
from hlo_indexing.analysis.results import ComputationMaps, ModuleIndexing, OpMaps
from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.locations import ANONYMOUS_BUFFER, enclosing_function, location_name, location_of
from hlo_indexing.direction import Direction
from hlo_indexing.errors import HloIndexingError, SourceLocation
from hlo_indexing.ops.result import InstructionIndexing


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
) -> ModuleIndexing:
    """The fused maps of every computation (``fused``) and the per-op maps of every HLO op
    (``per_op``, simplified unless ``simplify=False``) of ``module``, in source order;
    with ``function``, only those of (or in) the ``func.func`` of that name; with
    ``within``, only the computations and ops it accepts (e.g. those nested in one
    fusion); ``buffer`` names the text it was parsed from (for locations)."""
    selected = _selected_ops(module, function) if per_op else []
    if within is not None:
        selected = [item for item in selected if within(item[0])]
    with REGIONS.session():  # the regions' maps are computed once for the whole module
        found = [(op, tuple(indexings(op, direction, simplify=simplify))) for op, _, _ in selected]
        # The fused walks reuse the (simplified) per-op maps instead of deriving them again.
        known = dict(found) if simplify else {}
        computations_found = tuple(_computation_maps(module, direction, max_maps, buffer, function, known, within)) if fused else ()
    ops = tuple(
        OpMaps(op.name, _located_text(where, loc, buffer), maps, direction, location_name(loc), owner)
        for (op, maps), (_, where, loc), owner in zip(found, selected, _owners(selected), strict=True)
    )
    return ModuleIndexing(computations_found, ops, direction, module)


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


def _computation_maps(
    module: ir.Operation,
    direction: str,
    max_maps: int,
    buffer: str | None,
    function: str | None,
    known: dict[ir.Operation, tuple[InstructionIndexing, ...]],
    within: Callable[[ir.Operation], bool] | None,
):
    shared: dict = {}  # the computations share the fused walk's memos
    for name, op in computations(module):
        owner = enclosing_function(op)
        if (function is not None and owner != function) or (within is not None and not within(op)):
            continue
        results, arguments = result_names(op), argument_names(op)
        where = _short_location(op, buffer)
        try:
            maps = computation_indexing(op, Direction.of(direction), max_maps=max_maps, per_op=known, shared=shared)
        except (HloIndexingError, ValueError, NotImplementedError) as exc:
            yield ComputationMaps(name, where, (), direction, str(exc), op.name, owner, results, arguments)
            continue
        yield ComputationMaps(name, where, maps, direction, None, op.name, owner, results, arguments)
