"""A backend from a function judging one tiling at a time (``assess(fusion, tile_sizes,
device) -> Assessment``): :func:`per_tiling`. It asks about the candidates that satisfy
the fusion's own constraints and pass the rules the backend checks over all candidates
at once, the fewest programs first, at most ``limits.MAX_FOOTPRINTS_PER_FUSION``
(:func:`asked_candidates`); the others break :data:`NOT_EVALUATED`
(:func:`not_evaluated_check`). A vectorized backend that keeps the same candidates
(:mod:`.tpu_ranking`) uses the same two functions.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from hlo_indexing.cost_model.estimate import Assessment, CandidateEstimates, ConstraintCheck, Estimate, Rejection
from hlo_indexing.cost_model.tile_arrays import TileArrays
from hlo_indexing.devices.types import Device
from hlo_indexing.layout.types import Layout
from hlo_indexing.limits import MAX_FOOTPRINTS_PER_FUSION
from hlo_indexing.symbolic_tiling.ranking import constraint_mask
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion

#: Rule id of the candidates a per-tiling backend was not asked about (past the limit).
NOT_EVALUATED = "ranking.not-evaluated"

#: Rules a backend checks over all candidates at once (:func:`per_tiling`'s ``vectorized``).
VectorizedChecks = Callable[[TiledFusion, TileArrays, Device], Sequence[ConstraintCheck]]


def _message(found: Mapping[int, Rejection], index: int) -> str:
    return found[index].message


def grid_programs(fusion: TiledFusion, tiles: TileArrays) -> np.ndarray:
    """Per candidate, the programs of its grid (the tiles of every parameter, the
    contracting ones included); kept in ``tiles``' memo (read-only)."""
    sizes = tuple(parameter.size for parameter in fusion.parameters)

    def compute() -> np.ndarray:
        programs = np.ones(tiles.count, np.int64)
        for column, size in zip(tiles.flat, sizes):
            programs = programs * -(-size // column)
        return programs

    return tiles.memo(("grid programs", sizes), compute)


def valid_candidates(fusion: TiledFusion, tiles: TileArrays) -> np.ndarray:
    """Per candidate, whether it satisfies the fusion's own tiling constraints
    (:func:`~hlo_indexing.symbolic_tiling.ranking.constraint_mask`); kept in ``tiles``'
    memo for every fusion with the same constraints (read-only)."""
    return tiles.memo(("constraints", fusion.constraints),
                      lambda: constraint_mask(fusion.constraints, tiles.flat, tiles.count))


def asked_candidates(fusion: TiledFusion, tiles: TileArrays, passing: np.ndarray) -> np.ndarray:
    """The candidates a per-tiling backend judges (int64 indices): those ``passing`` the
    vectorized checks and satisfying the fusion's constraints, the fewest programs first
    (ties in candidate order), at most ``limits.MAX_FOOTPRINTS_PER_FUSION``."""
    order = tiles.memo(("program order", tuple(parameter.size for parameter in fusion.parameters)),
                       lambda: np.argsort(grid_programs(fusion, tiles), kind="stable"))
    eligible = passing & valid_candidates(fusion, tiles)
    return order[eligible[order]][:MAX_FOOTPRINTS_PER_FUSION]


def not_evaluated_check(passing: np.ndarray, asked: np.ndarray) -> ConstraintCheck:
    """:data:`NOT_EVALUATED`: broken by the candidates ``passing`` the vectorized checks
    that were not ``asked`` about (int64 indices)."""
    evaluated = ~passing
    evaluated[asked] = True
    return ConstraintCheck(NOT_EVALUATED, "", evaluated, lambda i: (
        f"not judged: only the {MAX_FOOTPRINTS_PER_FUSION} valid tilings with the fewest programs are "
        "(limits.MAX_FOOTPRINTS_PER_FUSION)"))


def per_tiling(assess: Callable[[TiledFusion, Sequence[int], Device], Assessment],
               vectorized: VectorizedChecks | None = None) -> Callable[..., CandidateEstimates]:
    """A backend (``evaluate(fusion, tiles, device, layouts)``, see :mod:`.backends`)
    from a function judging one tiling: it is asked about :func:`asked_candidates` (the
    ``vectorized`` checks, when given, decide which pass); each rule it reports becomes
    one check, with the message it gave."""

    def evaluate(fusion: TiledFusion, tiles: TileArrays, device: Device,
                 layouts: Mapping[int, Layout] | None = None) -> CandidateEstimates:
        count = tiles.count
        early = list(vectorized(fusion, tiles, device)) if vectorized is not None else []
        passing = np.ones(count, bool)
        for check in early:
            passing &= check.ok
        asked = asked_candidates(fusion, tiles, passing)
        fields = {name: np.full(count, np.inf) for name in ("exec", "read", "write", "compute")}
        counts = {name: np.zeros(count, np.int64) for name in ("bytes_read", "bytes_written", "flops", "num_blocks")}
        warps = np.zeros(count, np.int64)
        messages: dict[str, dict[int, Rejection]] = {}
        estimates: dict[int, Estimate] = {}
        for i in asked.tolist():
            judged = assess(fusion, [int(column[i]) for column in tiles.flat], device)
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
        checks.append(not_evaluated_check(passing, asked))
        return CandidateEstimates(
            checks=checks, exec_time_ns=fields["exec"], read_time_ns=fields["read"], write_time_ns=fields["write"],
            compute_time_ns=fields["compute"], bytes_read=counts["bytes_read"], bytes_written=counts["bytes_written"],
            flops=counts["flops"], num_blocks=counts["num_blocks"],
            num_warps=warps if any(e.num_warps is not None for e in estimates.values()) else None,
            breakdown=lambda i: estimates[i].breakdown if i in estimates else (),
        )

    return evaluate
