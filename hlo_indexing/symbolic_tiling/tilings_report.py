"""The tilings report of a module: for every ``func.func`` and ``mhlo.fusion``, its
tiling parameters and its valid tilings ranked under a per-tile byte budget, each with its
footprint, exactness and Pallas BlockSpecs, as one JSON document (:func:`module_tilings`,
what ``hlo-print-tilings{format=json}`` prints; one entry per computation,
:func:`computation_tilings`, what ``format=jsonl`` prints as each is done; its schema
ships in the package, ``hlo_indexing/schema/tilings.schema.json``, :func:`tilings_schema`).

Compiled HLO gets each fusion once (:func:`selected_computations`: a ``while`` or
``call`` body's fusions, which the importer also inlines where they are used, are
reported in the body's function, with where else they are used, ``used_in``); the
limits of one computation (``max_programs``, ``max_nodes``, ``fusion_seconds``) leave
it untiled with the reason, never the others.

A ``pad`` outside a gemm fusion is refused, as XLA's Triton tiling refuses it, unless
``allow_pad`` (option ``allow-pad``): its tiles are then sound (a tile in the padding
reads no operand element) but no device ranking can use them
(:data:`DEVICE_PAD_REFUSALS`).

Example::

    from hlo_indexing import module_tilings, parse_module
    document = module_tilings(parse_module(text).operation, 48 * 1024, 1)
    document["computations"][0]["tilings"][0]["tile_sizes"]
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Sequence
from typing import NotRequired, TypedDict
from dataclasses import dataclass, replace
from pathlib import Path

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.locations import enclosing_function, location_of
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.errors import HloIndexingError, InvalidArgumentError
from hlo_indexing.limits import FUSION_SECONDS, MAX_PROGRAMS, MAX_TILED_NODES
from hlo_indexing.schema import load_schema
from hlo_indexing.symbolic_tiling.footprint import declared_parameter_layouts
from hlo_indexing.symbolic_tiling.pallas import pallas_blockspecs
from hlo_indexing.symbolic_tiling.printed_tiling import PrintedTiling
from hlo_indexing.symbolic_tiling.shared_bodies import TilingMemo, layouts_key
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, TiledFusion
from hlo_indexing.symbolic_tiling.time_budget import fusion_time_budget


_UNITS = {"": 1, "b": 1, "kib": 1 << 10, "kb": 1000, "mib": 1 << 20, "mb": 1000 * 1000}


def parse_bytes(text: str) -> int:
    """Bytes from ``49152``, ``48KiB``, ``1MiB``, ``64kB`` (case-insensitive units).
    Raises :class:`HloIndexingError` otherwise."""
    found = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", text)
    if found is None or found.group(2).lower() not in _UNITS:
        raise HloIndexingError(f"invalid byte size '{text}': expected a number with an optional unit B, KiB, MiB, kB, MB")
    return int(found.group(1)) * _UNITS[found.group(2).lower()]


def parameters_text(fusion: TiledFusion) -> list[str]:
    """Each tiling parameter in words: ``dot_general.0 contracting dim 0 (size 256)``."""
    return [
        f"{p.owner} {'contracting ' if p.contracting else ''}dim {p.dim} (size {p.size})" for p in fusion.parameters
    ]


class ComputationEntry(TypedDict):
    """One computation of the tilings JSON document (``computations`` of
    ``hlo_indexing/schema/tilings.schema.json``)."""

    name: str
    kind: str
    location: str
    used_in: list[str]
    failure: str | None
    error: str | None
    parameters: list[dict[str, object]]
    valid_tilings: int
    fitting: int
    skipped: int
    unbuildable: int
    capped: int
    #: The ranked tilings (the device report moves them after its ranking's counts).
    tilings: NotRequired[list[dict[str, object]]]
    #: Set by the device-ranked report (:mod:`hlo_indexing.cost_model.device_report`).
    device_ranking: NotRequired[dict[str, object]]


#: The ``schema`` field of the tilings JSON document (``hlo_indexing/schema/tilings.schema.json``).
TILINGS_SCHEMA_ID = "hlo-indexing/tilings/1"
TILINGS_SCHEMA_FILE = "tilings.schema.json"


def tilings_schema() -> dict[str, object]:
    """The JSON Schema of the tilings document (shipped as package data, :mod:`hlo_indexing.schema`)."""
    return load_schema(TILINGS_SCHEMA_FILE)


def tilings_document(
    budget_bytes: int, computations_json: Sequence[ComputationEntry], *, allow_pad: bool = False
) -> dict[str, object]:
    """The JSON document of ``hlo-print-tilings{format=json}``: the schema id, the
    budget, whether pads outside gemm fusions were tiled (``allow_pad``) and one entry
    per computation (:func:`computation_tilings`)."""
    return {"schema": TILINGS_SCHEMA_ID, "budget_bytes": budget_bytes, "allow_pad": allow_pad,
            "computations": computations_json}


def module_tilings(
    module: "ir.Operation | ir.Module | str | os.PathLike[str]",
    budget_bytes: "int | str" = 48 * 1024,
    max_tilings: int = 5,
    *,
    function: str = "",
    max_programs: int = MAX_PROGRAMS,
    max_nodes: int = MAX_TILED_NODES,
    fusion_seconds: float = FUSION_SECONDS,
    prove: bool = False,
    allow_pad: bool = False,
) -> dict[str, object]:
    """The tilings JSON document of every computation of ``module`` (a ``builtin.module``
    operation or ``ir.Module``, or what :func:`~hlo_indexing.dialect_glue.parsing.parse_module`
    reads: MLIR or HLO text, a path), as ``hlo-print-tilings{format=json}`` prints it; valid
    against :func:`tilings_schema`. ``budget_bytes``: bytes, or text with a unit
    (``'48KiB'``); ``function``: only that function (and the fusions in it) or that HLO
    instruction (``ynn_fusion.6``); the limits, ``prove`` (isl proves each
    exactness) and ``allow_pad`` (pads outside gemm fusions are tiled too), as the pass
    options of the same names.
    Raises :class:`~hlo_indexing.errors.InvalidArgumentError` for an argument of the
    wrong type or value."""
    request = tilings_request(module, budget_bytes, max_tilings, function, max_programs, max_nodes, fusion_seconds,
                              allow_pad)
    memo = TilingMemo()
    entries = [
        computation_tilings(label, op, request.budget_bytes, max_tilings, memo=memo, max_programs=max_programs,
                            max_nodes=max_nodes, seconds=request.seconds, used_in=request.used_in(op), prove=prove,
                            allow_pad=request.allow_pad)[0]
        for label, op in request.selected
    ]
    return tilings_document(request.budget_bytes, entries, allow_pad=request.allow_pad)


@dataclass(frozen=True)
class TilingsRequest:
    """What :func:`module_tilings` was asked, checked: the module, the budget in bytes,
    the computations selected, the CPU seconds per computation, where else each
    ``while``/``call`` body's fusion is used and whether pads are tiled outside gemm
    fusions."""

    module: "ir.Operation"
    budget_bytes: int
    selected: list[tuple[str, "ir.Operation"]]
    seconds: float
    uses: dict[str, list[str]]
    allow_pad: bool

    def used_in(self, op: "ir.Operation") -> list[str]:
        """Where else ``op`` is used (:func:`body_uses`)."""
        return self.uses.get(str(op.location), [])


def tilings_request(
    module: object, budget_bytes: object, max_tilings: object, function: object, max_programs: object,
    max_nodes: object, fusion_seconds: object, allow_pad: object = False,
) -> TilingsRequest:
    """The arguments of :func:`module_tilings` (also the device-ranked one's) checked and
    read. Raises :class:`~hlo_indexing.errors.InvalidArgumentError` naming the wrong one."""
    operation = _module_operation(module)
    budget = _argument_bytes(budget_bytes)
    for name, value in (("max_tilings", max_tilings), ("max_programs", max_programs), ("max_nodes", max_nodes)):
        if not isinstance(value, int) or isinstance(value, bool) or value < (0 if name == "max_tilings" else 1):
            raise InvalidArgumentError(f"module_tilings: {name} must be a positive integer, got {value!r}")
    if not isinstance(function, str):
        raise InvalidArgumentError(f"module_tilings: function must be a name (str), got {type(function).__name__}")
    if isinstance(fusion_seconds, bool) or not isinstance(fusion_seconds, (int, float)) or not fusion_seconds >= 0:
        raise InvalidArgumentError(f"module_tilings: fusion_seconds must be a number >= 0, got {fusion_seconds!r}")
    if not isinstance(allow_pad, bool):
        raise InvalidArgumentError(f"module_tilings: allow_pad must be True or False, got {allow_pad!r}")
    try:
        selected = selected_computations(operation, function)
    except InvalidArgumentError as exc:
        raise InvalidArgumentError(f"module_tilings: {exc.message}") from None
    return TilingsRequest(operation, budget, selected, float(fusion_seconds), body_uses(operation), allow_pad)


#: Why a tiling ranked for a device never has a pad outside a gemm fusion, per device
#: kind: the device's own tiler refuses it (GPU), or the kernel we describe cannot
#: express it (TPU: the kernel is a grid and BlockSpecs, its body is not generated; a
#: tile in a pad's padding has no block of the padded operand, and Pallas refuses a
#: block index past the array's (:func:`~hlo_indexing.symbolic_tiling.pallas.block_index_maps`
#: refuses such specs), or, not checking, clamps it silently).
DEVICE_PAD_REFUSALS = {
    "gpu": "XLA's Triton tiling refuses a pad outside a gemm fusion",
    "tpu": "a Pallas kernel's tile in a pad's padding has no block of the padded operand, and the kernel body "
           "that would write the padding value is not generated",
}


def check_allow_pad_on(allow_pad: bool, device_kind: str, device_name: str, *, option: str = "allow-pad") -> None:
    """Raise :class:`~hlo_indexing.errors.InvalidArgumentError` when ``allow_pad`` is
    asked of a ranking for a device (:data:`DEVICE_PAD_REFUSALS` says why); ``option``:
    how the message names it (``allow_pad`` in Python)."""
    if allow_pad:
        reason = DEVICE_PAD_REFUSALS.get(device_kind, "its cost model has no rule for pads outside gemm fusions")
        raise InvalidArgumentError(
            f"{option} cannot be used with a device ('{device_name}'): {reason}; rank without a device to tile pads"
        )


def _module_operation(module: object) -> "ir.Operation":
    """The ``builtin.module`` operation of what :func:`module_tilings` accepts."""
    if isinstance(module, ir.Module):
        return module.operation
    if isinstance(module, ir.Operation) or (hasattr(module, "operation") and isinstance(getattr(module, "operation"), ir.Operation)):
        operation = module if isinstance(module, ir.Operation) else module.operation
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


def selected_computations(module: "ir.Operation", function: str) -> list[tuple[str, "ir.Operation"]]:
    """The computations of ``module`` that ``function`` selects: when empty, every
    computation, or only the ``mhlo.fusion`` ops when there are some (compiled HLO: each
    fusion once, not also its computation imported beside it as a private function, nor
    the ENTRY, which is not a fusion); the computation labelled ``function`` (an HLO
    instruction name as the remarks print it, ``ynn_fusion.6``); else the function
    ``function`` (``@`` optional) and the computations nested in it.
    :class:`~hlo_indexing.errors.InvalidArgumentError` naming the closest names when
    nothing is selected."""
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
    raise InvalidArgumentError(f"option func: no function or fusion '{function}' in the module{hint}")


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
    seconds: float = FUSION_SECONDS, used_in: Sequence[str] = (), prove: bool = False, allow_pad: bool = False,
) -> tuple[ComputationEntry, list[PrintedTiling], str]:
    """One computation's entry of the tilings document, its best ``max_tilings``
    tilings as printed (footprints with their exactness, built once per body and renamed
    for this computation: :mod:`~.printed_tiling`) and what the ranking left out, in words
    (:attr:`~hlo_indexing.symbolic_tiling.ranking.Ranking.note`): ``failure`` when it
    cannot be tiled, ``error`` when a footprint cannot be computed, else its tiling
    parameters, counts and ranked tilings (each with its Pallas BlockSpecs, or the
    reason there are none, when ``blockspecs``). ``memo``: the run's
    :class:`~hlo_indexing.symbolic_tiling.shared_bodies.TilingMemo` (computations with
    the same body are analysed and ranked once); ``max_programs``, ``max_nodes``,
    ``seconds``: the pass options of the same names (a computation past ``seconds`` gets
    an ``error`` naming the budget); ``used_in``: where else the computation is used
    (:func:`body_uses`); ``prove``: isl proves each exactness too; ``allow_pad``: a pad
    outside a gemm fusion is tiled too (module docstring)."""
    with fusion_time_budget(seconds):
        return _computation_tilings(label, op, budget_bytes, max_tilings, blockspecs, memo or TilingMemo(), max_programs,
                                    max_nodes, used_in, prove, allow_pad)


def computation_entry(
    label: str, op: "ir.Operation", memo: TilingMemo, *, max_nodes: int = MAX_TILED_NODES, used_in: Sequence[str] = (),
    allow_pad: bool = False,
) -> tuple[ComputationEntry, TiledFusion | None]:
    """A computation's entry of the tilings document without its tilings, and its
    analysis (None, with ``failure`` or ``error`` set, when it cannot be tiled);
    ``max_nodes``, ``used_in`` and ``allow_pad`` as :func:`computation_tilings`. The device-ranked
    report (:mod:`hlo_indexing.cost_model.device_report`) starts from it too."""
    where = location_of(op.location)
    entry: ComputationEntry = {
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
        "unbuildable": 0,
        "capped": 0,
        "tilings": [],
    }
    try:
        fusion = memo.analyze(op, allow_pad=allow_pad, max_nodes=max_nodes)
    except HloIndexingError as exc:  # e.g. a zero-sized output: reported at the computation
        entry["error"] = f"cannot tile: {exc.message}"
        return entry, None
    if isinstance(fusion, AnalysisFailure):
        entry["failure"] = fusion.reason
        return entry, None
    entry["parameters"] = [
        {"owner": p.owner, "dim": p.dim, "size": p.size, "contracting": p.contracting, "text": text}
        for p, text in zip(fusion.parameters, parameters_text(fusion))
    ]
    return entry, fusion


def _computation_tilings(
    label: str, op: "ir.Operation", budget_bytes: int, max_tilings: int, blockspecs: bool, memo: TilingMemo,
    max_programs: int, max_nodes: int, used_in: Sequence[str], prove: bool, allow_pad: bool,
) -> tuple[ComputationEntry, list[PrintedTiling], str]:
    entry, fusion = computation_entry(label, op, memo, max_nodes=max_nodes, used_in=used_in, allow_pad=allow_pad)
    if fusion is None:
        return entry, [], ""
    layouts, output_layouts = declared_parameter_layouts(op)

    def printed_tilings(first: TiledFusion) -> list[PrintedTiling]:
        first_ranking = memo.rank(first, budget_bytes, layouts=layouts, output_layouts=output_layouts,
                                  max_programs=max_programs)
        return [PrintedTiling.of(replace(f, exactness=memo.exactness(first, f.tile_sizes, prove=prove)))
                for f in first_ranking.tilings[:max_tilings]]

    key = ("tilings", budget_bytes, layouts_key(layouts), layouts_key(output_layouts), max_programs, max_tilings, prove)
    try:
        ranking = memo.rank(fusion, budget_bytes, layouts=layouts, output_layouts=output_layouts, max_programs=max_programs)
        printed, names = memo.per_body(fusion, key, printed_tilings)
    except HloIndexingError as exc:
        entry["error"] = exc.message
        return entry, [], ""
    entry["valid_tilings"] = ranking.valid
    entry["fitting"] = len(ranking.tilings)
    entry["skipped"] = ranking.skipped
    entry["unbuildable"] = ranking.unbuildable
    entry["capped"] = ranking.capped
    ranked = [p.renamed(names or {}) for p in printed]
    for rank, tiling in enumerate(ranked, 1):
        fields: dict[str, object] = {"rank": rank, **tiling.fields}
        if blockspecs:
            fields["pallas"] = pallas_json(fusion, tiling.tile_sizes, memo)
        entry["tilings"].append(fields)
    return entry, ranked, ranking.note


def pallas_json(fusion: TiledFusion, sizes: Sequence[int], memo: TilingMemo | None = None) -> dict[str, str | None]:
    """A tiling's ``pallas`` field: its BlockSpecs, or why its tiles are not blocks
    (``memo``: the one that analysed ``fusion``, which computes them once per body)."""
    try:
        specs = memo.blockspecs(fusion, sizes) if memo is not None else pallas_blockspecs(fusion, list(sizes))
        return {"blockspecs": specs.text, "reason": None}
    except HloIndexingError as exc:
        return {"blockspecs": None, "reason": exc.message}
