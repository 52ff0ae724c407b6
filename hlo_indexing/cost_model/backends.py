"""Which cost model judges a device: the one place a backend is chosen, by the device's
kind (:attr:`~hlo_indexing.devices.types.GpuDevice.kind`).

A backend is a function ``evaluate(fusion, tiles, device, layouts)`` that judges many
candidate tilings of a :class:`~hlo_indexing.symbolic_tiling.tiled_fusion.TiledFusion`
at once (``tiles``: a :class:`~hlo_indexing.cost_model.tile_arrays.TileArrays` whose
``flat`` holds, per tiling parameter, an int64 array with its size at each candidate,
and which evaluates the analysis's tile expressions, shared between fusions of the same
parameter sizes; ``layouts``: per fusion parameter number, its layout when not the
default) and returns :class:`~hlo_indexing.cost_model.estimate.CandidateEstimates`, one
entry per candidate. To add one, add its kind and function to :data:`EVALUATORS`; a
backend that judges one tiling at a time (``assess(fusion, tile_sizes, device) ->
Assessment``) plugs in through :func:`.per_tiling.per_tiling`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from hlo_indexing.cost_model import gpu_ranking, tpu_ranking
from hlo_indexing.cost_model.estimate import Assessment, CandidateEstimates, Rejection
from hlo_indexing.cost_model.tile_arrays import TileArrays
from hlo_indexing.devices.types import Device
from hlo_indexing.errors import InvalidArgumentError, UnsupportedError
from hlo_indexing.layout.types import Layout
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion

#: A backend (module docstring).
Evaluate = Callable[[TiledFusion, TileArrays, Device, Mapping[int, Layout] | None], CandidateEstimates]

#: Device kind -> its backend.
EVALUATORS: dict[str, Evaluate] = {
    "gpu": gpu_ranking.evaluate_candidates,  # type: ignore[dict-item]  # takes a GpuDevice
    "tpu": tpu_ranking.evaluate_candidates,  # type: ignore[dict-item]  # takes a TpuDevice
}


def evaluator(device: Device) -> Evaluate:
    """The backend of ``device``'s kind; :class:`~hlo_indexing.errors.UnsupportedError`
    when there is none."""
    found = EVALUATORS.get(device.kind)
    if found is None:
        raise UnsupportedError(f"no cost model for {device.kind} devices yet (device '{device.name}')")
    return found


def assess_tiling(fusion: TiledFusion, tile_sizes: Sequence[int], device: Device,
           layouts: Mapping[int, Layout] | None = None) -> Assessment:
    """One tiling judged on ``device``: the rules it breaks (the fusion's own tiling
    constraints, ``tiling.constraints``, included) and its estimate."""
    sizes = tuple(int(s) for s in tile_sizes)
    if len(sizes) != len(fusion.parameters) or any(s < 1 for s in sizes):
        raise InvalidArgumentError(f"tile sizes {list(sizes)}: expected {len(fusion.parameters)} positive sizes, one per "
                                   "tiling parameter")
    judged = evaluator(device)(fusion, TileArrays([np.asarray([s], np.int64) for s in sizes]), device, layouts)
    rejections = judged.rejections(0)
    if not fusion.satisfies_constraints(list(sizes)):
        broken = Rejection("tiling.constraints", f"tile sizes {list(sizes)} break the fusion's tiling constraints "
                           f"{fusion.constraints}")
        rejections = (broken, *rejections)
    return Assessment(sizes, rejections, judged.estimate(0))
