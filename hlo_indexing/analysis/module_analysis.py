"""The indexing maps of a whole module: :class:`ModuleIndexing`, the result of
:func:`hlo_indexing.analyze` (see :mod:`hlo_indexing.frontend` for what it accepts).

It holds the fused maps of every ``func.func`` with a body and every ``mhlo.fusion``
(:class:`ComputationMaps`, one :class:`~hlo_indexing.analysis.fusion.FusionIndexing` per
result, or per argument for ``direction="input-to-output"``), and the per-op maps of every
HLO op (:class:`OpMaps`), with a readable ``str()``; :func:`module_indexing` computes it.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hlo_indexing.analysis.fusion import (
    DEFAULT_MAX_MAPS,
    FusionIndexing,
    computation_indexing,
)
from hlo_indexing.analysis.per_op import hlo_ops, indexings
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.parsing import ANONYMOUS_BUFFER, enclosing_function, location_name, location_of
from hlo_indexing.errors import HloIndexingError, SourceLocation
from hlo_indexing.maps.text import display_text
from hlo_indexing.ops.result import InstructionIndexing


@dataclass(frozen=True)
class ComputationMaps:
    """Fused maps of one computation: ``name`` is ``@name`` for a ``func.func``, the HLO
    instruction's name (``fusion.3``) for an ``mhlo.fusion`` imported from HLO, else
    ``mhlo.fusion``; ``kind`` is the op's name (``func.func`` or ``mhlo.fusion``) and
    ``function`` the name of the function it is (or is in).

    ``maps[i]`` is the :class:`FusionIndexing` of result ``i`` (output-to-input: one map
    set per argument) or of argument ``i`` (input-to-output: one map set per result).
    ``error`` says why the maps could not be computed (``maps`` is then empty)."""

    name: str
    location: str
    maps: tuple[FusionIndexing, ...]
    direction: str
    error: str | None = None
    kind: str = "func.func"
    function: str | None = None

    def lines(self) -> list[str]:
        """The printed form: one line per map (``name result i -> arg k: map``), a line
        per over-approximated result, or one error line."""
        if self.error is not None:
            return [f"{self.name}: error: {self.error}"]
        source, target = ("result", "arg") if self.direction == "output-to-input" else ("arg", "result")
        lines = []
        for i, fused in enumerate(self.maps):
            for k, maps in enumerate(fused.maps):
                texts = sorted(display_text(m) for m in maps) or ["no dependence"]
                lines += [f"{self.name} {source} {i} -> {target} {k}: {text}" for text in texts]
            if fused.over_approximated:
                lines.append(f"{self.name} {source} {i}: over-approximated ({', '.join(fused.over_approximated)})")
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class OpMaps:
    """Per-op maps of one HLO op: ``indexing[i]`` for its result ``i`` (output-to-input)
    or operand ``i`` (input-to-output). ``name`` is the HLO instruction's name
    (``add.3``) when the op was imported from HLO, else None; ``function`` the
    ``func.func`` the op is in."""

    op: str
    location: str
    indexing: tuple[InstructionIndexing, ...]
    direction: str
    name: str | None = None
    function: str | None = None

    def lines(self) -> list[str]:
        """The printed form: a header line per result (operand) then its maps, indented."""
        what = "result" if self.direction == "output-to-input" else "operand"
        lines = []
        label = f"{self.op} {self.name!r}" if self.name else self.op
        for i, indexing in enumerate(self.indexing):
            lines.append(f"{label} at {self.location}, {what} {i}:")
            lines += [f"  {line}" for line in str(indexing).splitlines()] or ["  (no operands)"]
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class ModuleIndexing:
    """The result of :func:`analyze`; ``module`` is the ``builtin.module`` analysed (kept
    alive with the result)."""

    computations: tuple[ComputationMaps, ...]
    ops: tuple[OpMaps, ...]
    direction: str
    module: Any

    def computation(self, name: str) -> ComputationMaps:
        """The computation called ``name``: a function (``"@main"`` or ``"main"``) or a
        fusion by its HLO instruction name (``"fusion.3"``). ``KeyError`` names the
        computations there are, the closest first."""
        for wanted in (name, f"@{name.removeprefix('@')}"):
            for computation in self.computations:
                if computation.name == wanted:
                    return computation
        raise KeyError(_missing(name, [c.name for c in self.computations], "computation"))

    def op(self, name: str) -> OpMaps:
        """The per-op maps of the op imported from the HLO instruction ``name``
        (``"add.3"``); ``KeyError`` when there is none."""
        for op in self.ops:
            if op.name == name:
                return op
        raise KeyError(_missing(name, [op.name for op in self.ops if op.name], "op"))

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of :mod:`hlo_indexing.analysis.serialize` (its schema:
        ``hlo_indexing/schema/indexing.schema.json``)."""
        from hlo_indexing.analysis import serialize  # only for JSON output

        return serialize.module_to_dict(self)

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        from hlo_indexing.analysis import serialize  # only for JSON output

        return serialize.module_to_json(self, indent)

    def __repr__(self) -> str:
        return (
            f"<ModuleIndexing {self.direction}: {len(self.computations)} computations, {len(self.ops)} ops;"
            " str() prints the maps, to_dict() gives them>"
        )

    def __str__(self) -> str:
        lines = [line for computation in self.computations for line in computation.lines()]
        if self.ops:
            lines.append(f"per-op maps ({self.direction}):")
            lines += [f"  {line}" for op in self.ops for line in op.lines()]
        return "\n".join(lines)


def _missing(name: str, have: list[str], what: str) -> str:
    close = difflib.get_close_matches(name, have, n=3)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return f"no {what} {name!r}{hint} (there are {len(have)}: {', '.join(have[:20])}{', ...' if len(have) > 20 else ''})"


def _short_location(op: Any, buffer: str | None) -> str:
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
    found = [(op, tuple(indexings(op, direction, simplify=simplify))) for op, _, _ in selected]
    # The fused walks reuse the (simplified) per-op maps instead of deriving them again.
    known = dict(found) if simplify else {}
    computations_found = tuple(_computation_maps(module, direction, max_maps, buffer, function, known, within)) if fused else ()
    ops = tuple(
        OpMaps(op.name, _located_text(where, loc, buffer), maps, direction, location_name(loc), owner)
        for (op, maps), (_, where, loc), owner in zip(found, selected, _owners(selected), strict=True)
    )
    return ModuleIndexing(computations_found, ops, direction, module)


def _selected_ops(module: ir.Operation, function: str | None) -> list[tuple[ir.Operation, SourceLocation | None, Any]]:
    """``(op, file position, location)`` of the HLO ops that get maps, in source order;
    only those in ``function`` when given. Each location is read once."""
    located = [(op, location_of(loc), loc) for op in hlo_ops(module) for loc in (op.location,)]
    located.sort(key=lambda item: _order_key(item[1]))
    if function is None:
        return located
    return [item for item, owner in zip(located, _owners(located), strict=True) if owner == function]


def _order_key(where: Any) -> tuple[int, str, int, int]:
    """:func:`source_order_key` of a file position already found."""
    return (0, where.filename, where.line, where.column) if where is not None else (1, "", 0, 0)


def _located_text(where: SourceLocation | None, loc: Any, buffer: str | None) -> str:
    """:func:`_short_location` of an op whose file position (found without ``buffer``)
    is ``where``."""
    if where is None:
        return str(loc)
    if buffer is not None and where.filename == ANONYMOUS_BUFFER:
        where = SourceLocation(buffer, where.line, where.column)
    return str(where)


def _owners(located: list[tuple[ir.Operation, Any, Any]]) -> list[str | None]:
    """:func:`enclosing_function` of each op, looked up once per parent op."""
    by_parent: dict[Any, str | None] = {}
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
    module: Any,
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
        try:
            maps = computation_indexing(op, direction.replace("-", "_"), max_maps=max_maps, per_op=known, shared=shared)
        except (HloIndexingError, ValueError, NotImplementedError) as exc:
            yield ComputationMaps(name, _short_location(op, buffer), (), direction, str(exc), op.name, owner)
            continue
        yield ComputationMaps(name, _short_location(op, buffer), maps, direction, kind=op.name, function=owner)
