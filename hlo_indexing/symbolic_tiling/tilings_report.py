"""The tilings report of a module: for every ``func.func`` and ``mhlo.fusion``, its
tiling parameters and its valid tilings ranked under a per-tile byte budget, each with its
footprint, exactness and Pallas BlockSpecs, as one JSON document (:func:`module_tilings`,
what ``hlo-print-tilings{format=json}`` prints; its schema ships in the package,
``hlo_indexing/schema/tilings.schema.json``, :func:`tilings_schema`).

Example::

    from hlo_indexing import module_tilings, parse_module
    document = module_tilings(parse_module(text).operation, 48 * 1024, 1)
    document["computations"][0]["tilings"][0]["tile_sizes"]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.locations import enclosing_function, location_of
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.schema import load_schema
from hlo_indexing.symbolic_tiling.footprint import Footprint, declared_parameter_layouts, with_exactness
from hlo_indexing.symbolic_tiling.pallas import pallas_blockspecs
from hlo_indexing.symbolic_tiling.shared_bodies import TilingMemo
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, TiledFusion


def parameters_text(fusion: TiledFusion) -> list[str]:
    """Each tiling parameter in words: ``dot_general.0 contracting dim 0 (size 256)``."""
    return [
        f"{p.owner} {'contracting ' if p.contracting else ''}dim {p.dim} (size {p.size})" for p in fusion.parameters
    ]


#: The ``schema`` field of the tilings JSON document (``hlo_indexing/schema/tilings.schema.json``).
TILINGS_SCHEMA_ID = "hlo-indexing/tilings/1"
TILINGS_SCHEMA_FILE = "tilings.schema.json"


def tilings_schema() -> dict[str, Any]:
    """The JSON Schema of the tilings document (shipped as package data, :mod:`hlo_indexing.schema`)."""
    return load_schema(TILINGS_SCHEMA_FILE)


def tilings_document(budget_bytes: int, computations_json: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON document of ``hlo-print-tilings{format=json}``: the schema id, the
    budget and one entry per computation (:func:`computation_tilings`)."""
    return {"schema": TILINGS_SCHEMA_ID, "budget_bytes": budget_bytes, "computations": computations_json}


def module_tilings(
    module: "ir.Operation", budget_bytes: int = 48 * 1024, max_tilings: int = 5, *, function: str = "", prove: bool = False
) -> dict[str, Any]:
    """The tilings JSON document of every computation of ``module`` (a ``builtin.module``
    operation; only function ``function`` and the fusions in it when given), as
    ``hlo-print-tilings{format=json}`` prints it (``prove``: as ``prove=true``); valid
    against :func:`tilings_schema`."""
    memo = TilingMemo()
    entries = [
        computation_tilings(label, op, budget_bytes, max_tilings, memo=memo, prove=prove)[0]
        for label, op in selected_computations(module, function)
    ]
    return tilings_document(budget_bytes, entries)


def selected_computations(module: "ir.Operation", function: str) -> list[tuple[str, "ir.Operation"]]:
    """The computations of ``module`` in function ``function``; when empty, every
    computation, or only the ``mhlo.fusion`` ops when there are some (compiled HLO: each
    fusion once, not also its computation imported beside it as a private function, nor
    the ENTRY, which is not a fusion)."""
    name = function.removeprefix("@")
    found = list(computations(module))
    if name:
        return [(label, op) for label, op in found if enclosing_function(op) == name]
    return [(label, op) for label, op in found if op.name == "mhlo.fusion"] or found


def computation_entry(label: str, op: "ir.Operation", memo: TilingMemo) -> tuple[dict[str, Any], TiledFusion | None]:
    """A computation's entry of the tilings document without its tilings, and its
    analysis (None, with ``failure`` or ``error`` set, when it cannot be tiled). The
    device-ranked report (:mod:`hlo_indexing.cost_model.device_report`) starts from it too."""
    where = location_of(op.location)
    entry: dict[str, Any] = {
        "name": label,
        "kind": op.name,
        "location": str(where) if where is not None else str(op.location),
        "failure": None,
        "error": None,
        "parameters": [],
        "valid_tilings": 0,
        "fitting": 0,
        "skipped": 0,
        "capped": 0,
        "tilings": [],
    }
    try:
        fusion = memo.analyze(op)
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


def computation_tilings(
    label: str, op: "ir.Operation", budget_bytes: int, max_tilings: int, *, blockspecs: bool = True,
    memo: TilingMemo | None = None, prove: bool = False,
) -> tuple[dict[str, Any], list[Footprint], str]:
    """One computation's entry of the tilings document, its best ``max_tilings``
    footprints (with their exactness) and what the ranking left out, in words
    (:attr:`~hlo_indexing.symbolic_tiling.ranking.Ranking.note`): ``failure`` when it
    cannot be tiled, ``error`` when a footprint cannot be computed, else its tiling
    parameters, counts and ranked tilings (each with its Pallas BlockSpecs, or the
    reason there are none, when ``blockspecs``). ``memo``: the run's
    :class:`~hlo_indexing.symbolic_tiling.shared_bodies.TilingMemo` (computations with
    the same body are analysed and ranked once). ``prove``: isl proves each exactness
    too."""
    memo = memo or TilingMemo()
    entry, fusion = computation_entry(label, op, memo)
    if fusion is None:
        return entry, [], ""
    layouts, output_layouts = declared_parameter_layouts(op)
    try:
        ranking = memo.rank(fusion, budget_bytes, layouts=layouts, output_layouts=output_layouts)
        ranked = [with_exactness(fusion, f, prove=prove) for f in ranking.tilings[:max_tilings]]
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
            tiling["pallas"] = pallas_json(fusion, footprint.tile_sizes)
        entry["tilings"].append(tiling)
    return entry, ranked, ranking.note


def pallas_json(fusion: TiledFusion, sizes: Sequence[int]) -> dict[str, str | None]:
    """A tiling's ``pallas`` field: its BlockSpecs, or why its tiles are not blocks."""
    try:
        return {"blockspecs": pallas_blockspecs(fusion, list(sizes)).text, "reason": None}
    except HloIndexingError as exc:
        return {"blockspecs": None, "reason": exc.message}
