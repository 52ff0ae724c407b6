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
Assessment``) plugs in through :func:`per_tiling`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from hlo_indexing.cost_model import gpu_ranking, tpu_ranking
from hlo_indexing.cost_model.tpu import assess_tpu
from hlo_indexing.cost_model.estimate import Assessment, CandidateEstimates, ConstraintCheck, Estimate, Rejection
from hlo_indexing.cost_model.tile_arrays import TileArrays
from hlo_indexing.devices.types import Device
from hlo_indexing.errors import InvalidArgumentError, UnsupportedError
from hlo_indexing.layout.types import Layout
from hlo_indexing.limits import MAX_FOOTPRINTS_PER_FUSION
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion

#: A backend (module docstring).
Evaluate = Callable[[TiledFusion, TileArrays, Device, Mapping[int, Layout] | None], CandidateEstimates]

#: Rule id of the candidates a per-tiling backend was not asked about (past the limit).
NOT_EVALUATED = "ranking.not-evaluated"


def _message(found: Mapping[int, Rejection], index: int) -> str:
    return found[index].message


#: Rules a backend checks over all candidates at once (:func:`per_tiling`'s ``vectorized``).
VectorizedChecks = Callable[[TiledFusion, TileArrays, Device], Sequence[ConstraintCheck]]


def per_tiling(assess: Callable[[TiledFusion, Sequence[int], Device], Assessment],
               vectorized: VectorizedChecks | None = None) -> Evaluate:
    """A backend from a function judging one tiling: it is asked about the candidates
    that satisfy the fusion's own constraints (and pass the ``vectorized`` checks, rules
    the backend evaluates over all candidates at once, when given), the fewest programs
    first, at most ``limits.MAX_FOOTPRINTS_PER_FUSION`` (the others break
    :data:`NOT_EVALUATED`); each rule it reports becomes one check, with the message it
    gave."""

    def evaluate(fusion: TiledFusion, tiles: TileArrays, device: Device,
                 layouts: Mapping[int, Layout] | None = None) -> CandidateEstimates:
        count = tiles.count
        early = list(vectorized(fusion, tiles, device)) if vectorized is not None else []
        passing = np.ones(count, bool)
        for check in early:
            passing &= check.ok
        sizes = [tuple(int(column[i]) for column in tiles.flat) for i in range(count)]
        programs = np.ones(count, np.int64)
        for column, parameter in zip(tiles.flat, fusion.parameters):
            programs = programs * -(-parameter.size // column)
        asked = [i for i in np.argsort(programs, kind="stable").tolist()
                 if passing[i] and fusion.satisfies_constraints(list(sizes[i]))]
        asked = asked[:MAX_FOOTPRINTS_PER_FUSION]
        fields = {name: np.full(count, np.inf) for name in ("exec", "read", "write", "compute")}
        counts = {name: np.zeros(count, np.int64) for name in ("bytes_read", "bytes_written", "flops", "num_blocks")}
        warps = np.zeros(count, np.int64)
        messages: dict[str, dict[int, Rejection]] = {}
        estimates: dict[int, Estimate] = {}
        for i in asked:
            judged = assess(fusion, sizes[i], device)
            for rejection in judged.rejections:
                messages.setdefault(rejection.rule, {})[i] = rejection
            if judged.estimate is not None:
                found = estimates[i] = judged.estimate
                for name, value in (("exec", found.exec_time_ns), ("read", found.read_time_ns),
                                    ("write", found.write_time_ns), ("compute", found.compute_time_ns)):
                    fields[name][i] = value
                for name in counts:
                    counts[name][i] = getattr(found, name)
                warps[i] = found.num_warps or 0
        checks = early + [ConstraintCheck(rule, "", np.asarray([i not in found for i in range(count)], bool),
                                          functools.partial(_message, found)) for rule, found in messages.items()]
        evaluated = ~passing
        evaluated[asked] = True
        checks.append(ConstraintCheck(NOT_EVALUATED, "", evaluated, lambda i: (
            f"not judged: only the {MAX_FOOTPRINTS_PER_FUSION} valid tilings with the fewest programs are "
            "(limits.MAX_FOOTPRINTS_PER_FUSION)")))
        return CandidateEstimates(
            checks=checks, exec_time_ns=fields["exec"], read_time_ns=fields["read"], write_time_ns=fields["write"],
            compute_time_ns=fields["compute"], bytes_read=counts["bytes_read"], bytes_written=counts["bytes_written"],
            flops=counts["flops"], num_blocks=counts["num_blocks"],
            num_warps=warps if any(e.num_warps is not None for e in estimates.values()) else None,
            breakdown=lambda i: estimates[i].breakdown if i in estimates else (),
        )

    return evaluate


#: Device kind -> its backend.
EVALUATORS: dict[str, Evaluate] = {
    "gpu": gpu_ranking.evaluate_candidates,  # type: ignore[dict-item]  # takes a GpuDevice
    "tpu": per_tiling(assess_tpu, tpu_ranking.shape_checks),  # type: ignore[arg-type]  # takes a TpuDevice
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
