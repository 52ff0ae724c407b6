"""The passes ``hlo-print-tilings`` and ``hlo-attach-tiles``: the symbolic tiling of every
``func.func`` and ``mhlo.fusion`` (:mod:`hlo_indexing.symbolic_tiling`), as remarks or
attributes.

``hlo-print-tilings{budget=48KiB max=5 format=text func=}`` ranks the valid tilings whose
per-tile footprint fits the budget (:func:`~hlo_indexing.symbolic_tiling.ranking.rank_tilings`,
argument layouts from ``hlo_indexing.layout`` attributes) and emits one remark per
tiling, best first (``func=NAME``: only that function and the fusions in it; without it,
every computation, or only the ``mhlo.fusion`` ops of a module that has some, as compiled
HLO does)::

    @softmax tiling #1: tile sizes [1, 6]: 4 tiles, 48 B per tile (read 24, write 24), ..., exactness parameter(0) 1

each with the exactness of its operand tiles (:mod:`~hlo_indexing.symbolic_tiling.exactness`:
per parameter, the fraction of the tile elements the fused maps read over the whole
output, with the worst tile's when lower, or ``not computed (reason)``).

``format=json`` prints instead one JSON document per module, verbatim (no remark
wrapper) on stderr as the other print passes do (:mod:`hlo_indexing.passes.report`):
``{"schema": "hlo-indexing/tilings/1", "budget_bytes": ..., "computations": [{"name":
"@softmax", "parameters": [...], "tilings": [...]}]}``, each tiling with its rank, its
footprint, its ``exactness`` (one entry per parameter, ``{index, name, method, exactness,
worst_tile, read_elements, tile_elements}``, or ``reason`` with nulls when not computed)
and its Pallas BlockSpecs (or why its tiles are not blocks); ``skipped``
counts the tilings with more than 65536 programs, not evaluated, ``capped`` the
candidate tilings not considered, past ``limits.MAX_TILING_CANDIDATES`` or
``limits.MAX_FOOTPRINTS_PER_FUSION`` (both also said in a remark in text), ``failure``
says why a computation cannot be tiled. The schema ships in the package
(``hlo_indexing/schema/tilings.schema.json``, :func:`tilings_schema`);
:func:`module_tilings` gives the same document in Python. The budget is bytes
(``49152``) or with a unit ``B``, ``KiB``, ``MiB``.

``hlo-attach-tiles{tile-sizes=8,128}`` tiles every computation at these flat sizes (one
per tiling parameter, as ``valid_tilings`` lists them) and attaches to each op of the
tiled computation ``hlo_indexing.tile``: an array with one dictionary per tiled
instruction of its result, ``{offsets = {map from pid_0 ...}, sizes = array<i64: ...>,
strides = array<i64: ...>}``; the computation gets ``hlo_indexing.tiling = {num_tiles,
tile_sizes}`` and, for each argument read, ``hlo_indexing.argument_tiles`` (on a
function's argument attributes; an ``mhlo.fusion`` lists them per operand). A
computation that cannot be tiled, or sizes that are not a valid tiling, give an error
naming the reason.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.parsing import enclosing_function, location_of, parse_module
from hlo_indexing.errors import HloIndexingError, InvalidArgumentError
from hlo_indexing.limits import FUSION_SECONDS, MAX_PROGRAMS, MAX_TILED_NODES
from hlo_indexing.maps.attributes import indexing_map_to_attribute
from hlo_indexing.passes.base import Diagnostics, ModulePass
from hlo_indexing.passes.fusion_maps import set_argument_attributes
from hlo_indexing.passes.selection import func_field
from hlo_indexing.symbolic_tiling.footprint import Footprint, declared_parameter_layouts
from hlo_indexing.symbolic_tiling.shared_bodies import TilingMemo
from hlo_indexing.symbolic_tiling.tiled_computation import TiledInstruction, tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, TiledFusion, defining_op
from hlo_indexing.symbolic_tiling.time_budget import fusion_time_budget

TILE_ATTRIBUTE = "hlo_indexing.tile"
TILING_ATTRIBUTE = "hlo_indexing.tiling"
ARGUMENT_TILES_ATTRIBUTE = "hlo_indexing.argument_tiles"

_UNITS = {"": 1, "b": 1, "kib": 1 << 10, "kb": 1000, "mib": 1 << 20, "mb": 1000 * 1000}


def parse_bytes(text: str) -> int:
    """Bytes from ``49152``, ``48KiB``, ``1MiB``, ``64kB`` (case-insensitive units).
    Raises :class:`HloIndexingError` otherwise."""
    found = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", text)
    if found is None or found.group(2).lower() not in _UNITS:
        raise HloIndexingError(f"invalid byte size '{text}': expected a number with an optional unit B, KiB, MiB, kB, MB")
    return int(found.group(1)) * _UNITS[found.group(2).lower()]


def _parameters_text(fusion: TiledFusion) -> list[str]:
    return [
        f"{p.owner} {'contracting ' if p.contracting else ''}dim {p.dim} (size {p.size})" for p in fusion.parameters
    ]


#: ``format`` values of ``hlo-print-tilings``.
TILINGS_FORMATS = ("text", "json", "jsonl")


@dataclass(frozen=True)
class PrintTilings(ModulePass):
    """See the module docstring."""

    name: ClassVar[str] = "hlo-print-tilings"
    description: ClassVar[str] = "Print the valid tilings of each function and mhlo.fusion, ranked under a byte budget"

    budget: str = field(default="48KiB", metadata={"help": "per-tile footprint budget (bytes, KiB, MiB)"})
    max: int = field(default=5, metadata={"help": "tilings printed per computation"})
    format: str = field(
        default="text",
        metadata={
            "help": "text (remarks), json (one JSON document per module) or jsonl (one JSON line per computation, as each is done)",
            "choices": TILINGS_FORMATS,
        },
    )
    func: str = func_field()
    max_programs: int = field(
        default=MAX_PROGRAMS, metadata={"help": "tilings with more programs are not evaluated", "min": 1}
    )
    max_nodes: int = field(
        default=MAX_TILED_NODES, metadata={"help": "a fusion with more tiled instructions is not tiled", "min": 1}
    )
    fusion_seconds: str = field(
        default=f"{FUSION_SECONDS:g}", metadata={"help": "CPU seconds spent tiling one computation at most (0: no limit)"}
    )

    def run(self, module: "ir.Operation", diagnostics: Diagnostics) -> None:
        """Emit the ranked tilings of every computation as each is done (see the module
        docstring); an invalid option is an error, a computation that cannot be tiled a
        warning (text) or a ``failure``/``error`` entry (json, jsonl)."""
        try:
            budget = parse_bytes(self.budget)
            seconds = parse_seconds(self.fusion_seconds)
        except HloIndexingError as exc:
            diagnostics.error(module.location, exc.message)
            return
        selected = selected_computations(module, self.func, diagnostics)
        if selected is None:
            return
        text = self.format == "text"
        entries = []
        memo = TilingMemo()
        uses = body_uses(module)
        for label, op in selected:
            entry, ranked, note = computation_tilings(
                label, op, budget, self.max, blockspecs=not text, memo=memo, max_programs=self.max_programs,
                max_nodes=self.max_nodes, seconds=seconds, used_in=uses.get(str(op.location), ()),
            )
            entries.append(entry)
            if self.format == "jsonl":
                diagnostics.output(json.dumps(entry))
            if not text:
                continue
            if entry["used_in"]:
                diagnostics.remark(op.location, f"{label}: in @{enclosing_function(op)}, also used by {', '.join(entry['used_in'])}")
            problem = entry["failure"] or entry["error"]
            if problem is not None:
                diagnostics.warning(op.location, f"{label}: cannot tile: {problem.removeprefix('cannot tile: ')}")
                continue
            if not ranked:
                fits = f"no valid tiling fits the budget of {budget} bytes"
                if entry["skipped"]:
                    fits += f" among those with at most {self.max_programs} programs (max-programs)"
                diagnostics.remark(op.location, f"{label}: {fits}")
            for k, footprint in enumerate(ranked):
                diagnostics.remark(op.location, f"{label} tiling #{k + 1}: {footprint}")
            if note:
                diagnostics.remark(op.location, f"{label}: {note}")
        if self.format == "json":
            diagnostics.output(json.dumps(tilings_document(budget, entries), indent=2))


def parse_seconds(text: str) -> float:
    """Seconds from ``30``, ``2.5`` (``0``: no limit). Raises :class:`HloIndexingError`."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise HloIndexingError(f"invalid fusion-seconds '{text}': expected a number of seconds, 0 for no limit")
    return value


#: The ``schema`` field of the tilings JSON document (``hlo_indexing/schema/tilings.schema.json``).
TILINGS_SCHEMA_ID = "hlo-indexing/tilings/1"
TILINGS_SCHEMA_RESOURCE = "schema/tilings.schema.json"


def tilings_schema() -> dict[str, Any]:
    """The JSON Schema of the tilings document (shipped as package data)."""
    text = resources.files("hlo_indexing").joinpath(TILINGS_SCHEMA_RESOURCE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def tilings_document(budget_bytes: int, computations_json: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON document of ``hlo-print-tilings{format=json}``: the schema id, the
    budget and one entry per computation (:func:`computation_tilings`)."""
    return {"schema": TILINGS_SCHEMA_ID, "budget_bytes": budget_bytes, "computations": computations_json}


def module_tilings(
    module: "ir.Operation | ir.Module | str | os.PathLike[str]",
    budget_bytes: "int | str" = 48 * 1024,
    max_tilings: int = 5,
    *,
    function: str = "",
    max_programs: int = MAX_PROGRAMS,
    max_nodes: int = MAX_TILED_NODES,
    fusion_seconds: float = FUSION_SECONDS,
) -> dict[str, Any]:
    """The tilings JSON document of every computation of ``module`` (a ``builtin.module``
    operation or ``ir.Module``, or what :func:`~hlo_indexing.dialect_glue.parsing.parse_module`
    reads: MLIR or HLO text, a path), as ``hlo-print-tilings{format=json}`` prints it; valid
    against :func:`tilings_schema`. ``budget_bytes``: bytes, or text with a unit
    (``'48KiB'``); ``function``: only that function (and the fusions in it) or that HLO
    instruction (``ynn_fusion.6``); the limits as the pass options of the same names.
    Raises :class:`~hlo_indexing.errors.InvalidArgumentError` for an argument of the
    wrong type or value."""
    operation = _module_operation(module)
    budget = _argument_bytes(budget_bytes)
    for name, value in (("max_tilings", max_tilings), ("max_programs", max_programs), ("max_nodes", max_nodes)):
        if not isinstance(value, int) or isinstance(value, bool) or value < (0 if name == "max_tilings" else 1):
            raise InvalidArgumentError(f"module_tilings: {name} must be a positive integer, got {value!r}")
    if not isinstance(function, str):
        raise InvalidArgumentError(f"module_tilings: function must be a name (str), got {type(function).__name__}")
    if isinstance(fusion_seconds, bool) or not isinstance(fusion_seconds, (int, float)) or not fusion_seconds >= 0:
        raise InvalidArgumentError(f"module_tilings: fusion_seconds must be a number >= 0, got {fusion_seconds!r}")
    diagnostics = Diagnostics()
    selected = selected_computations(operation, function, diagnostics)
    if selected is None:
        raise InvalidArgumentError(f"module_tilings: {diagnostics.items[0].message}")
    memo = TilingMemo()
    uses = body_uses(operation)
    entries = [
        computation_tilings(label, op, budget, max_tilings, memo=memo, max_programs=max_programs, max_nodes=max_nodes,
                            seconds=float(fusion_seconds), used_in=uses.get(str(op.location), ()))[0]
        for label, op in selected
    ]
    return tilings_document(budget, entries)


def _module_operation(module: object) -> "ir.Operation":
    """The ``builtin.module`` operation of what :func:`module_tilings` accepts."""
    if isinstance(module, ir.Module):
        return module.operation
    if isinstance(module, ir.Operation) or (hasattr(module, "operation") and isinstance(getattr(module, "operation"), ir.Operation)):
        operation = module if isinstance(module, ir.Operation) else module.operation  # type: ignore[attr-defined]
        if operation.name != "builtin.module":
            raise InvalidArgumentError(f"module_tilings: expected a builtin.module, got the operation {operation.name}")
        return operation
    if isinstance(module, str) and "\n" not in module and os.path.isfile(module):
        return parse_module(Path(module)).operation  # a str naming a file is its path
    if isinstance(module, (str, os.PathLike)):
        return parse_module(module).operation
    raise InvalidArgumentError(
        f"module_tilings: expected a module (ir.Module, its operation), MLIR or HLO text or a path, got {type(module).__name__}"
    )


def _argument_bytes(value: object) -> int:
    """A byte count given as an ``int`` or as text with a unit (``'48KiB'``)."""
    if isinstance(value, str):
        try:
            return parse_bytes(value)
        except HloIndexingError as exc:
            raise InvalidArgumentError(f"module_tilings: {exc.message}") from None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidArgumentError(f"module_tilings: budget_bytes must be a byte count (int >= 0 or text such as '48KiB'), got {value!r}")
    return value


def selected_computations(
    module: "ir.Operation", function: str, diagnostics: Diagnostics
) -> list[tuple[str, "ir.Operation"]] | None:
    """The computations of ``module`` that ``function`` selects: when empty, every
    computation, or only the ``mhlo.fusion`` ops when there are some (compiled HLO: each
    fusion once, not also its computation imported beside it as a private function, nor
    the ENTRY, which is not a fusion); the computation labelled ``function`` (an HLO
    instruction name as the remarks print it, ``ynn_fusion.6``); else the function
    ``function`` (``@`` optional) and the computations nested in it. None, with an error
    at the module naming the closest names, when nothing is selected."""
    name = function.removeprefix("@")
    found = list(computations(module))
    if not name:
        return _once([(label, op) for label, op in found if op.name == "mhlo.fusion"]) or found
    labelled = [(label, op) for label, op in found if label.removeprefix("@") == name and op.name == "mhlo.fusion"]
    selected = labelled or [(label, op) for label, op in found if enclosing_function(op) == name]
    if selected:
        return selected
    names = sorted({label.removeprefix("@") for label, _ in found})
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f"; computations: {', '.join(names) or 'none'}"
    diagnostics.error(module.location, f"option func: no function or fusion '{function}' in the module{hint}")
    return None


def _once(fusions: list[tuple[str, "ir.Operation"]]) -> list[tuple[str, "ir.Operation"]]:
    """``fusions`` with each HLO instruction once: the HLO importer keeps a ``while`` or
    ``call`` body as a private function and also inlines it where it is used, so the
    body's fusions appear twice at one location. The copy in the body's function is
    kept (:func:`body_uses` says where the others lie)."""
    return [copies[0] for copies in _copies(fusions).values()]


def _copies(fusions: list[tuple[str, "ir.Operation"]]) -> dict[str, list[tuple[str, "ir.Operation"]]]:
    """The fusions by location, the copy directly in a function first."""
    by_location: dict[str, list[tuple[str, "ir.Operation"]]] = {}
    for label, op in fusions:
        by_location.setdefault(str(op.location), []).append((label, op))
    for copies in by_location.values():
        copies.sort(key=lambda c: not (c[1].parent is not None and c[1].parent.name == "func.func"))
    return by_location


def body_uses(module: "ir.Operation") -> dict[str, list[str]]:
    """Per location of a fusion kept by :func:`_once`, where its other copies lie
    (``stablehlo.while in @main``); fusions with one copy are not listed."""
    fusions = [(label, op) for label, op in computations(module) if op.name == "mhlo.fusion"]
    out = {}
    for location, copies in _copies(fusions).items():
        if len(copies) > 1:
            out[location] = [
                f"{op.parent.name if op.parent is not None else 'module'} in @{enclosing_function(op) or '?'}"
                for _, op in copies[1:]
            ]
    return out


def computation_tilings(
    label: str, op: "ir.Operation", budget_bytes: int, max_tilings: int, *, blockspecs: bool = True,
    memo: TilingMemo | None = None, max_programs: int = MAX_PROGRAMS, max_nodes: int = MAX_TILED_NODES,
    seconds: float = FUSION_SECONDS, used_in: Sequence[str] = (),
) -> tuple[dict[str, Any], list[Footprint], str]:
    """One computation's entry of the tilings document, its best ``max_tilings``
    footprints (with their exactness) and what the ranking left out, in words
    (:attr:`~hlo_indexing.symbolic_tiling.ranking.Ranking.note`): ``failure`` when it
    cannot be tiled, ``error`` when a footprint cannot be computed, else its tiling
    parameters, counts and ranked tilings (each with its Pallas BlockSpecs, or the
    reason there are none, when ``blockspecs``). ``memo``: the run's
    :class:`~hlo_indexing.symbolic_tiling.shared_bodies.TilingMemo` (computations with
    the same body are analysed and ranked once); ``max_programs``, ``max_nodes``,
    ``seconds``: the pass options of the same names (a computation past ``seconds`` gets
    an ``error`` naming the budget); ``used_in``: where else the computation is used
    (:func:`body_uses`)."""
    with fusion_time_budget(seconds):
        return _computation_tilings(label, op, budget_bytes, max_tilings, blockspecs, memo, max_programs, max_nodes, used_in)


def _computation_tilings(
    label: str, op: "ir.Operation", budget_bytes: int, max_tilings: int, blockspecs: bool, memo: TilingMemo | None,
    max_programs: int, max_nodes: int, used_in: Sequence[str],
) -> tuple[dict[str, Any], list[Footprint], str]:
    where = location_of(op.location)
    entry: dict[str, Any] = {
        "name": label,
        "kind": op.name,
        "location": str(where) if where is not None else str(op.location),
        "used_in": list(used_in),
        "failure": None,
        "error": None,
        "parameters": [],
        "valid_tilings": 0,
        "fitting": 0,
        "skipped": 0,
        "capped": 0,
        "tilings": [],
    }
    memo = memo or TilingMemo()
    try:
        fusion = memo.analyze(op, max_nodes=max_nodes)
    except HloIndexingError as exc:  # e.g. a zero-sized output: reported at the computation
        entry["error"] = f"cannot tile: {exc.message}"
        return entry, [], ""
    if isinstance(fusion, AnalysisFailure):
        entry["failure"] = fusion.reason
        return entry, [], ""
    entry["parameters"] = [
        {"owner": p.owner, "dim": p.dim, "size": p.size, "contracting": p.contracting, "text": text}
        for p, text in zip(fusion.parameters, _parameters_text(fusion))
    ]
    layouts, output_layouts = declared_parameter_layouts(op)
    try:
        ranking = memo.rank(fusion, budget_bytes, layouts=layouts, output_layouts=output_layouts, max_programs=max_programs)
        ranked = [replace(f, exactness=memo.exactness(fusion, f.tile_sizes)) for f in ranking.tilings[:max_tilings]]
    except HloIndexingError as exc:
        entry["error"] = exc.message
        return entry, [], ""
    entry["valid_tilings"] = ranking.valid
    entry["fitting"] = len(ranking.tilings)
    entry["skipped"] = ranking.skipped
    entry["capped"] = ranking.capped
    for rank, footprint in enumerate(ranked, 1):
        tiling: dict[str, Any] = {"rank": rank, **footprint.to_json()}
        if blockspecs:
            tiling["pallas"] = _pallas_json(memo, fusion, footprint.tile_sizes)
        entry["tilings"].append(tiling)
    return entry, ranked, ranking.note


def _pallas_json(memo: TilingMemo, fusion: TiledFusion, sizes: Sequence[int]) -> dict[str, str | None]:
    try:
        return {"blockspecs": memo.blockspecs(fusion, sizes), "reason": None}
    except HloIndexingError as exc:
        return {"blockspecs": None, "reason": exc.message}


def parse_tile_sizes(text: str) -> list[int]:
    """Sizes from ``8,128`` (positive integers). Raises :class:`HloIndexingError`."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise HloIndexingError(f"invalid tile sizes '{text}': expected positive integers separated by commas")
    return [int(p) for p in parts]


def parse_tile_sizes_per_computation(text: str) -> dict[str, list[int]]:
    """``{computation: sizes}`` from ``ynn_fusion.6:16,32,128;fusion.2:8`` (a
    computation is an HLO instruction name or a function, ``@`` optional), or ``{"": sizes}``
    from plain ``8,128`` (every computation). Raises :class:`HloIndexingError`."""
    if ":" not in text:
        return {"": parse_tile_sizes(text)}
    out: dict[str, list[int]] = {}
    for entry in (e.strip() for e in text.split(";") if e.strip()):
        name, colon, sizes = entry.rpartition(":")
        if not colon or not name.strip():
            raise HloIndexingError(f"invalid tile sizes '{entry}': expected NAME:SIZES (e.g. ynn_fusion.6:16,32,128)")
        out[name.strip().removeprefix("@")] = parse_tile_sizes(sizes)
    return out


def tile_attribute(inst: TiledInstruction, context: "ir.Context") -> "ir.Attribute":
    """``{offsets = <pid_0 -> offsets map>, sizes = array<i64>, strides = array<i64>}``."""
    return ir.DictAttr.get(
        {
            "offsets": indexing_map_to_attribute(inst.tile_offsets_indexing, context),
            "sizes": ir.DenseI64ArrayAttr.get(list(inst.tile_sizes), context=context),
            "strides": ir.DenseI64ArrayAttr.get(list(inst.tile_strides), context=context),
        },
        context=context,
    )


@dataclass(frozen=True)
class AttachTiles(ModulePass):
    """See the module docstring."""

    name: ClassVar[str] = "hlo-attach-tiles"
    description: ClassVar[str] = "Attach each op's tile (pid->offsets map, sizes, strides) for the given tile sizes"

    tile_sizes: str = field(
        default="",
        metadata={
            "help": "flat tile sizes, one per tiling parameter (e.g. 8,128), or per fusion (ynn_fusion.6:16,32,128;fusion.2:8)"
        },
    )
    func: str = func_field()

    def run(self, module: "ir.Operation", diagnostics: Diagnostics) -> None:
        """Attach the tiles of every computation selected (``func``, and the names of
        per-computation sizes) at its sizes (see the module docstring); an error names
        the computation and the reason when it cannot."""
        try:
            per_computation = parse_tile_sizes_per_computation(self.tile_sizes)
        except HloIndexingError as exc:
            diagnostics.error(module.location, exc.message)
            return
        selected = selected_computations(module, self.func, diagnostics)
        if selected is None:
            return
        if "" not in per_computation:
            named = {}
            for name in per_computation:
                found = selected_computations(module, name, diagnostics)
                if found is None:
                    return
                named.update({op: (label, per_computation[name]) for label, op in found})
            targets = [(label, op, named[op][1]) for label, op in selected if op in named]
        else:
            targets = [(label, op, per_computation[""]) for label, op in selected]
        memo = TilingMemo()
        for label, op, sizes in targets:
            fusion = memo.analyze(op)
            if isinstance(fusion, AnalysisFailure):
                diagnostics.error(op.location, f"{label}: {fusion}")
                continue
            if len(sizes) != len(fusion.parameters):
                diagnostics.error(
                    op.location,
                    f"{label}: {len(sizes)} tile sizes given, the tiling has {len(fusion.parameters)} parameters: "
                    + ", ".join(_parameters_text(fusion)),
                )
                continue
            try:
                computation = tiled_computation(fusion, sizes)
            except HloIndexingError as exc:
                diagnostics.error(op.location, f"{label}: tile sizes {sizes} are not a valid tiling: {exc.message}")
                continue
            self._attach(op, computation.instructions, sizes, computation.num_programs)

    def _attach(self, op: "ir.Operation", instructions: list[TiledInstruction], sizes: list[int], num_tiles: int) -> None:
        context = op.context
        on_ops: dict[Any, list[ir.Attribute]] = {}
        on_arguments: dict[int, list[ir.Attribute]] = {}
        owners: dict[Any, ir.Operation] = {}
        for inst in instructions:
            owner = defining_op(inst.node.value)
            if owner is None:
                number = inst.node.parameter_number
                assert number is not None
                on_arguments.setdefault(number, []).append(tile_attribute(inst, context))
            else:
                key = owner.operation
                owners[key] = owner.operation
                on_ops.setdefault(key, []).append(tile_attribute(inst, context))
        for key, tiles in on_ops.items():
            owners[key].attributes[TILE_ATTRIBUTE] = ir.ArrayAttr.get(tiles, context=context)
        op.attributes[TILING_ATTRIBUTE] = ir.DictAttr.get(
            {
                "num_tiles": ir.IntegerAttr.get(ir.IntegerType.get_signless(64, context), num_tiles),
                "tile_sizes": ir.DenseI64ArrayAttr.get(sizes, context=context),
            },
            context=context,
        )
        n_args = len(op.regions[0].blocks[0].arguments)
        per_argument: list[ir.Attribute] = [ir.ArrayAttr.get(on_arguments.get(a, []), context=context) for a in range(n_args)]
        if op.name == "func.func":
            set_argument_attributes(op, {ARGUMENT_TILES_ATTRIBUTE: per_argument})
        else:
            op.attributes[ARGUMENT_TILES_ATTRIBUTE] = ir.ArrayAttr.get(per_argument, context=context)

