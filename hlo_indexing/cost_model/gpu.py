"""The GPU backend: XLA's ``GpuPerformanceModelWithIndexingAnalysis`` on the project's
tilings, one tiling at a time.

* :func:`estimate_symbolic` (``EstimateRunTimeForTiledFusion``, symbolic path): the
  estimate of a :class:`~hlo_indexing.symbolic_tiling.tiled_fusion.TiledFusion` at flat
  tile sizes with block-level parameters (warps, stages);
* :func:`assess_symbolic`: the same with legality: Triton's emitter constraints
  (:mod:`.triton_constraints`), the fusion's own tiling constraints and the tiled
  computation's (``tiling.constraints``, ``tiling.unimplemented``), and XLA's register
  rule (``gpu.register-spill``: XLA's search drops such tilings);
* :func:`best_symbolic` (``TryFindBestTilingForFusion``, symbolic path): every valid
  tiling that satisfies the emitter constraints, estimated with
  :func:`~.gpu_model.num_warps_for` warps, infinite ones dropped, the fastest first
  (stable order);
* :func:`estimate_experimental`, :func:`best_experimental`:
  the same on XLA's experimental ``TilingSpace`` path (:mod:`hlo_indexing.symbolic_tiling.experimental.tiled_hlo`),
  tile sizes padded to powers of two, checked by ``VerifyTritonConstraints``.

Device-wide rankings of many candidates at once are in :mod:`.gpu_ranking`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hlo_indexing.cost_model.block_level import BlockLevelParameters
from hlo_indexing.cost_model.estimate import RULE_UNIMPLEMENTED, Assessment, Estimate, Rejection
from hlo_indexing.cost_model.gpu_model import estimate
from hlo_indexing.cost_model.gpu_programs import experimental_program, symbolic_program
from hlo_indexing.cost_model.tile_arrays import padded
from hlo_indexing.cost_model.triton_constraints import rejections_at, symbolic_checks, verify_experimental
from hlo_indexing.devices.types import GpuDevice
from hlo_indexing.errors import TilingError
from hlo_indexing.layout.types import Layout
from hlo_indexing.symbolic_tiling.experimental.hlo_graph import HloGraph
from hlo_indexing.symbolic_tiling.tiled_computation import TiledComputation, tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion, flat_tilings_for_input_space
from hlo_indexing.symbolic_tiling.experimental.tiled_hlo import TiledComputation as ExperimentalComputation
from hlo_indexing.symbolic_tiling.experimental.tiled_hlo import tile_computation
from hlo_indexing.symbolic_tiling.experimental.tiling_space import TilingSpace, create_tiling_space


@dataclass(frozen=True)
class TiledEstimate:
    """A tiling XLA's search considered: its block-level parameters (the output tile
    sizes of every root, the warps it chose) and its estimate."""

    tile_sizes: tuple[int, ...]
    block_level_parameters: BlockLevelParameters
    estimate: Estimate


def _output_tiles(computation: TiledComputation) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(root.tile_sizes) for root in computation.roots)


def estimate_symbolic(
    fusion: TiledFusion,
    tile_sizes: Sequence[int],
    device: GpuDevice,
    num_warps: int | None = None,
    num_stages: int = 1,
    *,
    tma: bool = False,
    layouts: Mapping[int, Layout] | None = None,
    computation: TiledComputation | None = None,
) -> Estimate:
    """The model's estimate of one tiling (``num_warps`` None: XLA's warp heuristic).
    Raises :class:`~hlo_indexing.symbolic_tiling.tiled_fusion.TilingError` when the
    sizes cannot be tiled (XLA's ``ComputeTiledComputation`` error)."""
    if computation is None:
        computation = tiled_computation(fusion, list(tile_sizes), constraints_are_known_satisfied=True)
    program = symbolic_program(fusion, computation, device, layouts)
    warps = None if num_warps is None else np.asarray([num_warps], np.int64)
    return estimate(program, device, warps, num_stages, tma).at(0)


def assess_symbolic(
    fusion: TiledFusion,
    tile_sizes: Sequence[int],
    device: GpuDevice,
    num_warps: int | None = None,
    num_stages: int = 1,
    *,
    tma: bool = False,
    layouts: Mapping[int, Layout] | None = None,
) -> Assessment:
    """Legality (module docstring) and, when the tiled computation exists, the estimate.
    An infinite estimate adds the ``gpu.register-spill`` rejection."""
    sizes = tuple(int(s) for s in tile_sizes)
    rejections: list[Rejection] = []
    if not fusion.satisfies_constraints(list(sizes)):
        rejections.append(Rejection("tiling.constraints", f"tile sizes {list(sizes)} break the fusion's tiling "
                                    f"constraints {fusion.constraints}"))
    flat = [np.asarray([s], np.int64) for s in sizes]
    rejections += rejections_at(symbolic_checks(fusion, flat, device), 0)
    try:
        computation = tiled_computation(fusion, list(sizes), constraints_are_known_satisfied=True)
    except TilingError as error:
        rejections.append(Rejection(RULE_UNIMPLEMENTED, str(error)))
        return Assessment(sizes, tuple(rejections))
    result = estimate_symbolic(fusion, sizes, device, num_warps, num_stages, tma=tma, layouts=layouts, computation=computation)
    if result.is_infinite:
        rejections.append(_spill_rejection(program_tiles(computation), device))
    return Assessment(sizes, tuple(rejections), result)


def program_tiles(computation: TiledComputation) -> list[tuple[str, tuple[int, ...]]]:
    """(name, tile sizes) of the tiles XLA's register rule looks at: roots, fusion
    parameters and iotas."""
    found = [(root.name, tuple(root.tile_sizes)) for root in computation.roots]
    found += [(i.name, tuple(i.tile_sizes)) for i in computation.instructions
              if i.node.parameter_number is not None or i.node.opcode == "iota"]
    return found


def _spill_rejection(tiles: list[tuple[str, tuple[int, ...]]], device: GpuDevice) -> Rejection:
    limit = 0.4 * (device.registers_per_block_limit or 0)
    for name, sizes in tiles:
        elements = int(np.prod(padded(np.asarray(sizes, np.int64)))) if sizes else 1
        if elements > limit:
            return Rejection(
                "gpu.register-spill",
                f"{name}: padded tile of {elements} elements, more than 40% of the {device.registers_per_block_limit} "
                "registers of a block (XLA estimates such a tiling as infinite)",
                name,
            )
    return Rejection("gpu.register-spill", "a tile does not fit in 40% of the block's registers")


def best_symbolic(fusion: TiledFusion, device: GpuDevice, top: int = 1, *,
                  layouts: Mapping[int, Layout] | None = None) -> list[TiledEstimate]:
    """XLA's search on the symbolic path (module docstring): the ``top`` fastest
    tilings, fastest first; empty when none is valid. Raises ``TilingError`` when a
    tiling fails other than as an unsupported multi-output fusion (as XLA)."""
    candidates = fusion.valid_tilings()
    if not candidates:
        return []
    flat = [np.asarray(column, np.int64) for column in zip(*candidates)]
    from_checks = np.ones(len(candidates), bool)
    for check in symbolic_checks(fusion, flat, device):
        from_checks &= check.ok
    found = []
    for index in np.flatnonzero(from_checks).tolist():
        sizes = candidates[index]
        try:
            computation = tiled_computation(fusion, list(sizes), constraints_are_known_satisfied=True)
        except TilingError as error:
            if error.status == "UNIMPLEMENTED" and "multi-output fusion" in str(error):
                continue
            raise
        result = estimate_symbolic(fusion, sizes, device, layouts=layouts, computation=computation)
        if result.is_infinite:
            continue
        params = BlockLevelParameters(_output_tiles(computation), num_warps=result.num_warps or 1)
        found.append(TiledEstimate(tuple(sizes), params, result))
    found.sort(key=lambda t: t.estimate.exec_time_ns)
    return found[:top]


# ---------------------------------------------------------------- experimental tiling


def experimental_computation(graph: HloGraph, space: TilingSpace, tile_sizes: Sequence[int]) -> ExperimentalComputation:
    """The experimental tiled computation at ``tile_sizes`` (assigned as given)."""
    space.assign_tile_sizes(list(tile_sizes))
    return tile_computation(graph, space)


def estimate_experimental(
    computation: ExperimentalComputation,
    graph: HloGraph,
    device: GpuDevice,
    num_warps: int | None = None,
    num_stages: int = 1,
    *,
    tma: bool = False,
) -> Estimate:
    """The model's estimate of an experimental tiled computation."""
    program = experimental_program(computation, graph, device)
    warps = None if num_warps is None else np.asarray([num_warps], np.int64)
    return estimate(program, device, warps, num_stages, tma).at(0)


def experimental_candidates(space: TilingSpace) -> list[tuple[int, ...]]:
    """``TilingSpace::GetValidTilings``: per dimension the powers of two below its size,
    then the size; sequential (reduction) dimensions take their full size."""
    sizes = [d.size for d in space.dimensions]
    choices = flat_tilings_for_input_space(sizes)
    sequential = [k for k, d in enumerate(space.dimensions) if d.type == "sequential"]
    return [t for t in choices if all(t[k] == sizes[k] for k in sequential)]


def best_experimental(graph: HloGraph, make_space: SpaceFactory, device: GpuDevice, top: int = 1) -> list[TiledEstimate]:
    """XLA's search on the experimental path: every candidate padded to powers of two,
    tiled, kept when ``VerifyTritonConstraints`` allows it and its estimate is finite."""
    found = []
    for candidate in experimental_candidates(make_space()):
        sizes = tuple(int(s) for s in padded(np.asarray(candidate, np.int64)))
        try:
            computation = experimental_computation(graph, make_space(), sizes)
        except TilingError:
            continue
        if verify_experimental(computation, device):
            continue
        result = estimate_experimental(computation, graph, device)
        if result.is_infinite:
            continue
        tiles = tuple(tuple(int(d.size.evaluate({})) for d in root.tile.dims) for root in computation.roots)
        found.append(TiledEstimate(sizes, BlockLevelParameters(tiles, num_warps=result.num_warps or 1), result))
    found.sort(key=lambda t: t.estimate.exec_time_ns)
    return found[:top]


class SpaceFactory:
    """Makes a fresh tiling space of a graph's entry fusion each time it is called
    (assigning tile sizes changes a space); ``options`` are
    :func:`~hlo_indexing.symbolic_tiling.experimental.tiling_space.create_tiling_space`'s flags."""

    def __init__(self, graph: HloGraph, *, triton_multi_output: bool = False,
                 same_shape_multi_output: bool = False) -> None:
        self.graph = graph
        self.triton_multi_output, self.same_shape_multi_output = triton_multi_output, same_shape_multi_output

    def __call__(self) -> TilingSpace:
        return create_tiling_space(self.graph, triton_multi_output=self.triton_multi_output,
                                   same_shape_multi_output=self.same_shape_multi_output)
