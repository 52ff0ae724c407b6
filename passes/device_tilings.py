"""``hlo-print-tilings{device=NAME top=N}``: the tilings of each computation legal on a
device, fastest first (:func:`hlo_indexing.cost_model.ranking.rank_for_device`), as text
remarks or entries of the tilings JSON document.

Per ranked tiling, text::

    @softmax tiling #1 on h100-sxm: tile sizes [4, 911]: 1.18 us (read 0.621 us, write 0.557 us,
    compute 0.0615 us; 128 blocks x 4 warps), 9 B per output element, 36448 B per tile

the runners-up followed by why they lose to the first (``loses to #1 by +0.000225 us:
reads ...``), then one remark with the rules the other candidates broke, counted per
rule, with one example each. JSON: each tiling entry gets ``estimate`` (every figure of
:class:`~hlo_indexing.cost_model.estimate.Estimate`, its breakdown included), ``legal``
(always true: only legal tilings are ranked) and ``loses`` (null for the first); the
computation gets ``device_ranking`` (candidates considered, legal, rejected per rule,
examples). The Pallas BlockSpecs of a ranked tiling are legal on the device by
construction.
"""

from __future__ import annotations

from typing import Any

from hlo_indexing.cost_model.estimate import Estimate
from hlo_indexing.cost_model.ranking import DeviceRanking, RankedTiling
from hlo_indexing.devices.types import Device
from hlo_indexing.symbolic_tiling.footprint import Footprint, with_exactness
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion


def _time(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:.3g} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.3g} us"
    return f"{ns:.3g} ns"


def _per_element(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def estimate_text(estimate: Estimate) -> str:
    """``1.18 us (read ..., write ..., compute ...; 128 blocks x 4 warps)``."""
    warps = estimate.num_warps
    launch = f"{estimate.num_blocks} blocks" + (f" x {warps} warp{'s' if warps != 1 else ''}" if warps else "")
    return (f"{_time(estimate.exec_time_ns)} (read {_time(estimate.read_time_ns)}, write {_time(estimate.write_time_ns)}, "
            f"compute {_time(estimate.compute_time_ns)}; {launch})")


def estimate_json(estimate: Estimate) -> dict[str, Any]:
    """Every figure of an estimate (:meth:`~hlo_indexing.cost_model.estimate.Estimate.to_json`)."""
    return estimate.to_json()


def device_json(device: Device) -> dict[str, Any]:
    """The device a document was ranked for."""
    return {"name": device.name, "kind": device.kind, "description": device.description}


def ranked(ranking: DeviceRanking, fusion: TiledFusion, top: int) -> list[tuple[RankedTiling, Footprint]]:
    """The best ``top`` tilings with their footprints (and exactness)."""
    return [(tiling, with_exactness(fusion, tiling.footprint)) for tiling in ranking.tilings[:top]]


def tiling_text(label: str, ranking: DeviceRanking, index: int, tiling: RankedTiling, footprint: Footprint) -> str:
    """One text remark (module docstring)."""
    text = (f"{label} tiling #{tiling.rank} on {ranking.device.name}: tile sizes {list(tiling.tile_sizes)}: "
            f"{estimate_text(tiling.estimate)}, {_per_element(footprint.bytes_per_output_element)} B per output element, "
            f"{footprint.bytes_per_tile} B per tile")
    loses = ranking.loses(index)
    return f"{text}; against #1: {loses}" if loses else text


def rejections_text(label: str, ranking: DeviceRanking) -> str:
    """The rules the other candidates broke, in words ('' when none)."""
    if not ranking.note:
        return ""
    examples = "; ".join(f"e.g. {list(sizes)}: [{rule}] {rejection.message}"
                         for rule, (sizes, rejection) in ranking.examples.items())
    return f"{label}: {ranking.note}" + (f"; {examples}" if examples else "")


def ranking_json(ranking: DeviceRanking) -> dict[str, Any]:
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


def tiling_json(ranking: DeviceRanking, index: int, tiling: RankedTiling) -> dict[str, Any]:
    """The device fields of one tiling entry."""
    return {"estimate": estimate_json(tiling.estimate), "legal": True, "loses": ranking.loses(index) or None}

