"""The tilings report ranked for a device: for every computation, the tilings legal on it,
fastest first (:func:`hlo_indexing.cost_model.ranking.rank_for_device`), as text remarks
(what ``hlo-print-tilings{device=NAME top=N}`` prints) or entries of the tilings JSON
document (:func:`module_tilings` with ``device=``; the device-blind document is
:mod:`hlo_indexing.symbolic_tiling.tilings_report`'s, whose schema holds both).

Per ranked tiling, text::

    @softmax tiling #1 on h100-sxm: tile sizes [4, 911]: 1.18 us (read 0.621 us, write 0.557 us,
    compute 0.0615 us; 128 blocks x 4 warps), 9 B per output element, 36448 B per tile

the runners-up followed by why they lose to the first (``against #1: +0.000225 us:
reads ...``; a tiling whose footprint is too large to count says so instead of its
bytes: ``footprint not counted: param_0: ... too many to count``), then one remark
with the rules the other candidates broke, counted per rule, with one example each. JSON: each tiling entry gets ``estimate`` (every figure of
:class:`~hlo_indexing.cost_model.estimate.Estimate`, its breakdown included), ``legal``
(always true: only legal tilings are ranked) and ``loses`` (null for the first); the
computation gets ``device_ranking`` (candidates considered, legal, rejected per rule,
examples) and the document ``device``. The Pallas BlockSpecs of a ranked tiling are
legal on the device by construction.

Example::

    from hlo_indexing import module_tilings, parse_module
    document = module_tilings(parse_module(text).operation, device="h100")
    document["computations"][0]["tilings"][0]["estimate"]["exec_time_ns"]
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace

from hlo_indexing.cost_model.estimate import Estimate, time_text
from hlo_indexing.cost_model.ranking import DeviceRanking, DeviceRankingMemo, RankedTiling
from hlo_indexing.devices.registry import device as select_device
from hlo_indexing.cost_model.tpu import pallas_tpu_text
from hlo_indexing.devices.types import Device, TpuDevice
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.layout.attributes import LayoutLike
from hlo_indexing.limits import FUSION_SECONDS, MAX_PROGRAMS, MAX_TILED_NODES
from hlo_indexing.symbolic_tiling import tilings_report
from hlo_indexing.symbolic_tiling.tilings_report import ComputationEntry
from hlo_indexing.symbolic_tiling.footprint import FootprintLimitError, declared_parameter_layouts
from hlo_indexing.symbolic_tiling.printed_tiling import PrintedTiling
from hlo_indexing.symbolic_tiling.shared_bodies import TilingMemo, layouts_key
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion
from hlo_indexing.symbolic_tiling.time_budget import fusion_time_budget


def module_tilings(
    module: "ir.Operation | ir.Module | str | os.PathLike[str]",
    budget_bytes: "int | str" = 48 * 1024,
    max_tilings: int = 5,
    *,
    function: str = "",
    device: "str | Device | None" = None,
    max_programs: int = MAX_PROGRAMS,
    max_nodes: int = MAX_TILED_NODES,
    fusion_seconds: float = FUSION_SECONDS,
    allow_pad: bool = False,
) -> dict[str, object]:
    """The tilings JSON document of every computation of ``module`` (a ``builtin.module``
    operation or ``ir.Module``, MLIR or HLO text, a path), as
    ``hlo-print-tilings{format=json}`` prints it; valid against
    :func:`~hlo_indexing.symbolic_tiling.tilings_report.tilings_schema`. Without
    ``device``, the device-blind document
    (:func:`hlo_indexing.symbolic_tiling.tilings_report.module_tilings`, which says what
    the other arguments take); with one (a name, a JSON description file or a device
    object), the best ``max_tilings`` tilings legal on it, fastest first, as
    ``hlo-print-tilings{device=...}``; ``allow_pad`` (tile pads outside gemm fusions)
    only without a device
    (:data:`~hlo_indexing.symbolic_tiling.tilings_report.DEVICE_PAD_REFUSALS`). Raises
    :class:`~hlo_indexing.errors.InvalidArgumentError` for an argument of the wrong type
    or value."""
    if device is None:
        return tilings_report.module_tilings(module, budget_bytes, max_tilings, function=function,
                                             max_programs=max_programs, max_nodes=max_nodes,
                                             fusion_seconds=fusion_seconds, allow_pad=allow_pad)
    request = tilings_report.tilings_request(module, budget_bytes, max_tilings, function, max_programs, max_nodes,
                                             fusion_seconds, allow_pad)
    target = select_device(device)
    tilings_report.check_allow_pad_on(request.allow_pad, target.kind, target.name, option="module_tilings: allow_pad")
    memo = DeviceRankingMemo(TilingMemo())
    entries = [device_computation_tilings(label, op, target, max_tilings, memo=memo, max_nodes=max_nodes,
                                          seconds=request.seconds, used_in=request.used_in(op))[0]
               for label, op in request.selected]
    return device_document(request.budget_bytes, target, entries)


def device_document(budget_bytes: int, target: Device, computations_json: Sequence[ComputationEntry]) -> dict[str, object]:
    """The tilings document of computations ranked for ``target``."""
    document = tilings_report.tilings_document(budget_bytes, computations_json)
    document["device"] = device_json(target)
    return document


def device_computation_tilings(
    label: str, op: "ir.Operation", target: Device, top: int, *, memo: DeviceRankingMemo | None = None,
    blockspecs: bool = True, max_nodes: int = MAX_TILED_NODES, seconds: float = FUSION_SECONDS,
    used_in: Sequence[str] = (),
) -> tuple[ComputationEntry, DeviceRanking | None, list[tuple[RankedTiling, PrintedTiling]]]:
    """One computation's entry of the tilings document ranked for ``target`` (module
    docstring), its ranking and its best ``top`` tilings with their footprints;
    ``failure``/``error``, ``max_nodes``, ``seconds`` and ``used_in`` as
    :func:`~hlo_indexing.symbolic_tiling.tilings_report.computation_tilings`."""
    with fusion_time_budget(seconds):
        return _device_computation_tilings(label, op, target, top, memo or DeviceRankingMemo(TilingMemo()), blockspecs,
                                           max_nodes, used_in)


def _device_computation_tilings(
    label: str, op: "ir.Operation", target: Device, top: int, memo: DeviceRankingMemo, blockspecs: bool,
    max_nodes: int, used_in: Sequence[str],
) -> tuple[ComputationEntry, DeviceRanking | None, list[tuple[RankedTiling, PrintedTiling]]]:
    entry, fusion = tilings_report.computation_entry(label, op, memo.tiling_memo, max_nodes=max_nodes, used_in=used_in)
    if fusion is None:
        return entry, None, []
    layouts, output_layouts = declared_parameter_layouts(op)
    try:
        ranking = memo.rank(fusion, target, layouts=layouts, output_layouts=output_layouts)
        ranked_tilings = ranked(ranking, fusion, top, memo, layouts, output_layouts)
    except HloIndexingError as exc:
        entry["error"] = exc.message
        return entry, None, []
    entry["valid_tilings"] = ranking.considered
    entry["fitting"] = len(ranking.tilings)
    entry["capped"] = ranking.capped
    entry["device_ranking"] = ranking_json(ranking)
    entry["tilings"] = entry.pop("tilings")  # after the ranking's counts
    for index, (tiling, printed) in enumerate(ranked_tilings):
        item: dict[str, object] = {"rank": tiling.rank, **printed.fields, **tiling_json(ranking, index, tiling)}
        if blockspecs:
            item["pallas"] = _pallas_json(fusion, tiling.tile_sizes, target, memo.tiling_memo)
        entry["tilings"].append(item)
    return entry, ranking, ranked_tilings


def _pallas_json(fusion: TiledFusion, sizes: tuple[int, ...], target: Device, memo: TilingMemo) -> dict[str, str | None]:
    """A ranked tiling's ``pallas`` field; on a TPU, the kernel's text as Mosaic takes it
    (scalars in SMEM, the dimension semantics: :func:`~.tpu.pallas_tpu_text`)."""
    if not isinstance(target, TpuDevice):
        return tilings_report.pallas_json(fusion, sizes, memo)
    try:
        return {"blockspecs": pallas_tpu_text(fusion, sizes), "reason": None}
    except HloIndexingError as exc:
        return {"blockspecs": None, "reason": exc.message}


def _per_element(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def estimate_text(estimate: Estimate) -> str:
    """``1.18 us (read ..., write ..., compute ...; 128 blocks x 4 warps)``."""
    warps = estimate.num_warps
    launch = f"{estimate.num_blocks} blocks" + (f" x {warps} warp{'s' if warps != 1 else ''}" if warps else "")
    return (f"{time_text(estimate.exec_time_ns)} (read {time_text(estimate.read_time_ns)}, "
            f"write {time_text(estimate.write_time_ns)}, compute {time_text(estimate.compute_time_ns)}; {launch})")


def device_json(device: Device) -> dict[str, object]:
    """The device a document was made for."""
    return {"name": device.name, "kind": device.kind, "description": device.description}


def ranked(
    ranking: DeviceRanking, fusion: TiledFusion, top: int, memo: DeviceRankingMemo,
    layouts: Mapping[int, LayoutLike], output_layouts: Mapping[int, LayoutLike],
) -> list[tuple[RankedTiling, PrintedTiling]]:
    """The best ``top`` tilings of ``ranking`` (``memo``'s ranking of ``fusion``, an
    analysis of its tiling memo, at these layouts) with their footprints and exactness,
    as printed (a footprint too large to count: :meth:`~.PrintedTiling.uncounted`):
    built once per body (from the first fusion's ranking) and renamed for ``fusion``
    (:mod:`~hlo_indexing.symbolic_tiling.printed_tiling`)."""

    def printed_tiling(first: TiledFusion, tiling: RankedTiling) -> PrintedTiling:
        exactness = memo.tiling_memo.exactness(first, tiling.tile_sizes)
        try:
            return PrintedTiling.of(replace(tiling.footprint, exactness=exactness))
        except FootprintLimitError as exc:  # ranked by time: printed without its footprint
            return PrintedTiling.uncounted(tiling.tile_sizes, exactness, exc)

    def printed_tilings(first: TiledFusion) -> list[PrintedTiling]:
        first_ranking = memo.rank(first, ranking.device, layouts=layouts, output_layouts=output_layouts)
        return [printed_tiling(first, tiling) for tiling in first_ranking.tilings[:top]]

    key = ("device tilings", ranking.device, layouts_key(layouts), layouts_key(output_layouts), top)
    printed, names = memo.tiling_memo.per_body(fusion, key, printed_tilings)
    return [(tiling, found.renamed(names or {})) for tiling, found in zip(ranking.tilings[:top], printed)]


def tiling_text(label: str, ranking: DeviceRanking, index: int, tiling: RankedTiling, printed: PrintedTiling) -> str:
    """One text remark (module docstring)."""
    footprint = printed.footprint
    counted = printed.text if footprint is None else (
        f"{_per_element(footprint.bytes_per_output_element)} B per output element, {footprint.bytes_per_tile} B per tile")
    text = (f"{label} tiling #{tiling.rank} on {ranking.device.name}: tile sizes {list(tiling.tile_sizes)}: "
            f"{estimate_text(tiling.estimate)}, {counted}")
    loses = ranking.loses(index)
    return f"{text}; against #1: {loses}" if loses else text


def rejections_text(label: str, ranking: DeviceRanking) -> str:
    """The rules the other candidates broke, in words ('' when none)."""
    if not ranking.note:
        return ""
    examples = "; ".join(f"e.g. {list(sizes)}: [{rule}] {rejection.message}"
                         for rule, (sizes, rejection) in ranking.examples.items())
    return f"{label}: {ranking.note}" + (f"; {examples}" if examples else "")


def ranking_json(ranking: DeviceRanking) -> dict[str, object]:
    """The computation's ``device_ranking`` entry."""
    return {
        "considered": ranking.considered,
        "legal": len(ranking.tilings),
        "rejected": dict(ranking.rejected),
        "examples": [
            {"rule": rule, "tile_sizes": list(sizes), "subject": rejection.subject, "message": rejection.message}
            for rule, (sizes, rejection) in ranking.examples.items()
        ],
    }


def tiling_json(ranking: DeviceRanking, index: int, tiling: RankedTiling) -> dict[str, object]:
    """The device fields of one tiling entry."""
    return {"estimate": tiling.estimate.to_json(), "legal": True, "loses": ranking.loses(index) or None}
