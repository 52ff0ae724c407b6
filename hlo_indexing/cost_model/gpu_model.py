"""XLA's GPU cost model on a tiled fusion (``GpuPerformanceModelWithIndexingAnalysis``),
for many candidate tilings at once.

The model sees a tiled fusion as :class:`TiledVisit` objects: every tiled instruction
with its tile (sizes and strides per candidate) and the number of *blocks* (programs)
that compute or load it: the output tiles, times the contracting steps inside a dot's
operand region, times an operand's share inside a concatenate's region. Per candidate
(:func:`estimate`):

* **register spill**: a root, fusion-parameter or iota tile with more padded elements
  (each size rounded up to a power of two) than 40% of the block's registers makes
  every time infinite;
* **flops**: per instruction of the fusion, its flops per element x blocks x padded
  tile elements (masked lanes compute too); a dot the dot model describes is timed
  by it (:mod:`.gpu_dot_model`) and its flops kept apart;
* **reads**: per fusion-parameter tile, blocks x the tile's elements clipped to the
  operand's shape (a partial last tile is not clipped), at the tile's coalescing rate;
  per operand, the first pass from DRAM and re-reads from cache
  (:func:`~.gpu_rates.read_time_ns`), the operand's rate the worst of its tiles';
* **writes**: each output once, at its root tile's coalescing rate;
* **compute**: flops at the rate of ``warps x 32`` lanes on ``min(blocks, SMs)`` SMs,
  plus the dots' compute time;
* **exec**: compute and memory overlapped at 95%, at least the longest dot.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from hlo_indexing.cost_model import gpu_constants as constants
from hlo_indexing.cost_model.estimate import BreakdownItem, Estimate
from hlo_indexing.cost_model.gpu_dot_model import DotProblem, dot_times
from hlo_indexing.cost_model.gpu_rates import (
    combine_ns,
    compute_time_ns,
    effective_flops_per_ns,
    read_time_ns,
    tiled_utilization,
    write_time_ns,
)
from hlo_indexing.cost_model.tile_arrays import TileArrays, padded
from hlo_indexing.devices.types import GpuDevice

_T = TypeVar("_T")


@dataclass(frozen=True)
class DotVisit:
    """What the dot model needs of a tiled dot: its problem and, per candidate, the
    lhs operand's tile size along the contracting dimension (the K step)."""

    problem: DotProblem
    block_k: np.ndarray


@dataclass
class TiledVisit:
    """One tiled instruction at every candidate (see the module docstring).

    ``operand`` is the fusion parameter number when the instruction is one (its tiles
    are loaded from memory), else None. ``sizes``/``strides`` are ``[candidates, rank]``;
    ``blocks`` and ``present`` are per candidate (``present`` False: at that candidate
    the tile is the same tiled instruction as another visit's, counted there)."""

    name: str
    opcode: str
    operand: int | None
    shape: tuple[int, ...]
    element_bytes: int
    minor_to_major: tuple[int, ...]
    sizes: np.ndarray
    strides: np.ndarray
    blocks: np.ndarray
    present: np.ndarray
    flops_per_element: int = 0
    dot: DotVisit | None = None
    #: Per candidate, the tile's elements with every size rounded up to a power of two
    #: (computed from ``sizes`` when not given).
    padded_elements: np.ndarray = field(default=None)  # type: ignore[arg-type]
    #: What the visit's memory figures depend on, when they may be shared with other
    #: fusions' visits through :meth:`~.tile_arrays.TileArrays.memo` (None: not shared).
    key: object = None
    #: ``present`` is true at every candidate (computed from it when not given).
    always: bool | None = None

    def __post_init__(self) -> None:
        if self.padded_elements is None:
            self.padded_elements = np.prod(padded(self.sizes), axis=1, dtype=np.int64)
        if self.always is None:
            self.always = bool(self.present.all())


@dataclass
class TiledProgram:
    """A tiled fusion at every candidate: ``num_blocks`` (output tiles) per candidate,
    every visit, and the root visits with their outputs' byte sizes."""

    num_blocks: np.ndarray
    visits: list[TiledVisit]
    roots: list[tuple[TiledVisit, int]]
    candidates: int = field(init=False)

    def __post_init__(self) -> None:
        self.candidates = len(self.num_blocks)


def num_warps_for(program: TiledProgram) -> np.ndarray:
    """``EstimateNumWarps``: by the largest padded tile of any visit, per candidate."""
    elements = [v.padded_elements if v.always else np.where(v.present, v.padded_elements, 1)
                for v in program.visits]
    largest = np.maximum.reduce(elements) if elements else np.ones(program.candidates, np.int64)
    limits = np.asarray([limit for limit, _ in constants.WARPS_BY_TILE_ELEMENTS], np.int64)
    counts = np.asarray([count for _, count in constants.WARPS_BY_TILE_ELEMENTS] + [constants.LARGEST_NUM_WARPS], np.int64)
    return counts[np.searchsorted(limits, largest, side="left")]


def fits_in_registers(program: TiledProgram, device: GpuDevice) -> np.ndarray:
    """``DoesComputationFitInRegisters`` per candidate: no root, fusion-parameter or iota
    tile above 40% of the registers of a block (always true when the device does not
    give its register limit)."""
    if device.registers_per_block_limit is None:
        return np.ones(program.candidates, bool)
    limit = constants.REGISTER_FRACTION_FOR_TILES * device.registers_per_block_limit
    fits = np.ones(program.candidates, bool)
    checked = [root for root, _ in program.roots]
    checked += [v for v in program.visits if v.operand is not None or v.opcode == "iota"]
    for visit in checked:
        fits &= (visit.padded_elements <= limit) if visit.always else ~visit.present | (visit.padded_elements <= limit)
    return fits


@dataclass
class ProgramEstimates:
    """Per candidate: the estimate's figures (times in ns; infinite where a tile spills)
    and, for the breakdown, each operand's read time and bytes and the dots' times."""

    exec_ns: np.ndarray
    read_ns: np.ndarray
    write_ns: np.ndarray
    compute_ns: np.ndarray
    bytes_read: np.ndarray
    bytes_written: int
    flops: np.ndarray
    num_blocks: np.ndarray
    num_warps: np.ndarray
    spills: np.ndarray
    operand_reads: dict[int, tuple[str, np.ndarray, np.ndarray]]
    dot_exec_ns: np.ndarray

    def at(self, index: int) -> Estimate:
        """The :class:`Estimate` of candidate ``index``."""
        warps = int(self.num_warps[index])
        blocks = int(self.num_blocks[index])
        if self.spills[index]:
            return Estimate.infinite("a tile does not fit in 40% of the block's registers", blocks, warps)
        breakdown = [
            BreakdownItem(f"read {name}", float(time[index]), int(total[index]))
            for _, (name, time, total) in sorted(self.operand_reads.items())
        ]
        breakdown.append(BreakdownItem("write", float(self.write_ns[index]), self.bytes_written))
        breakdown.append(BreakdownItem("compute", float(self.compute_ns[index])))
        if self.dot_exec_ns[index] > 0:
            breakdown.append(BreakdownItem("dot main loop", float(self.dot_exec_ns[index])))
        return Estimate(
            exec_time_ns=float(self.exec_ns[index]),
            read_time_ns=float(self.read_ns[index]),
            write_time_ns=float(self.write_ns[index]),
            compute_time_ns=float(self.compute_ns[index]),
            bytes_read=int(self.bytes_read[index]),
            bytes_written=self.bytes_written,
            flops=int(self.flops[index]),
            num_blocks=blocks,
            num_warps=warps,
            breakdown=tuple(breakdown),
        )


def _shared(cache: TileArrays | None, key: object, compute: Callable[[], _T]) -> _T:
    return compute() if cache is None or key is None else cache.memo(key, compute)


def estimate(
    program: TiledProgram,
    device: GpuDevice,
    num_warps: np.ndarray | None = None,
    num_stages: int = 1,
    tma: bool = False,
    cache: TileArrays | None = None,
) -> ProgramEstimates:
    """The model's figures for every candidate of ``program`` (module docstring).
    ``num_warps`` per candidate defaults to :func:`num_warps_for` (what XLA's tiling
    search uses); ``num_stages`` and ``tma`` only matter to dots. ``cache``: the
    :class:`~.tile_arrays.TileArrays` of the candidates, where the memory figures of
    visits with a ``key`` are shared with other fusions."""
    n = program.candidates
    warps = num_warps_for(program) if num_warps is None else np.broadcast_to(np.asarray(num_warps, np.int64), (n,))
    num_blocks = program.num_blocks
    flops = np.zeros(n, np.int64)
    dot_flops = np.zeros(n, np.int64)
    dot_compute = np.zeros(n)
    dot_exec = np.zeros(n)
    bytes_read = np.zeros(n, np.int64)
    totals: dict[int, np.ndarray] = {}
    rates: dict[int, np.ndarray] = {}
    names: dict[int, str] = {}
    sizes_of: dict[int, int] = {}
    shared_keys: dict[int, list[object]] = {}
    for visit in program.visits:
        always = bool(visit.always)
        if visit.operand is None:
            if not visit.flops_per_element and visit.dot is None:
                continue
            elements = visit.blocks * visit.padded_elements
            contribution = visit.flops_per_element * elements
            if not always:
                contribution = np.where(visit.present, contribution, 0)
            if visit.dot is not None:
                times = dot_times(device, visit.dot.problem, *_dot_tile(visit), visit.dot.block_k, warps, num_stages, tma)
                dot_compute = dot_compute + np.where(visit.present, times.compute_ns, 0.0)
                dot_exec = np.maximum(dot_exec, np.where(visit.present, times.exec_ns, 0.0))
                dot_flops = dot_flops + contribution
            else:
                flops = flops + contribution
            continue
        shared = visit.key if always else None
        tile_bytes, rate = _shared(cache, None if shared is None else ("tile read", id(device), shared),
                                   functools.partial(_tile_read, device, visit))
        bytes_read = bytes_read + tile_bytes
        key = visit.operand
        shared_keys.setdefault(key, []).append(shared)
        visit_rate = rate if always else np.where(visit.present, rate, 1.0)
        if key in totals:
            totals[key] = totals[key] + tile_bytes
            rates[key] = np.minimum(rates[key], visit_rate)
        else:
            totals[key], rates[key] = tile_bytes, visit_rate
        names.setdefault(key, visit.name)
        sizes_of[key] = int(np.prod(visit.shape, dtype=np.int64)) * visit.element_bytes
    read = np.zeros(n)
    operand_reads = {}
    for key, total in totals.items():
        keys = tuple(shared_keys[key])
        time = _shared(cache, ("operand read", id(device), keys) if None not in keys else None,
                       functools.partial(read_time_ns, device, num_blocks, np.minimum(sizes_of[key], total), total,
                                         rates[key]))
        operand_reads[key] = (names[key], time, total)
        read = read + time
    write = np.zeros(n)
    bytes_written = 0
    for root, root_bytes in program.roots:
        write = write + _shared(cache, None if root.key is None else ("write", id(device), root.key, root_bytes),
                                functools.partial(_root_write, device, root, root_bytes))
        bytes_written += root_bytes
    compute = compute_time_ns(flops, effective_flops_per_ns(device, num_blocks, warps * device.threads_per_warp))
    compute = compute + dot_compute
    exec_time = np.maximum(combine_ns(compute, read + write), dot_exec)
    spills = ~fits_in_registers(program, device)
    if spills.any():
        exec_time, read, write, compute = (np.where(spills, np.inf, x) for x in (exec_time, read, write, compute))
    return ProgramEstimates(
        exec_ns=exec_time,
        read_ns=read,
        write_ns=write,
        compute_ns=compute,
        bytes_read=bytes_read,
        bytes_written=bytes_written,
        flops=flops + dot_flops,
        num_blocks=num_blocks,
        num_warps=warps,
        spills=spills,
        operand_reads=operand_reads,
        dot_exec_ns=dot_exec,
    )


def _root_write(device: GpuDevice, root: TiledVisit, root_bytes: int) -> np.ndarray:
    rate = tiled_utilization(device, root.shape, root.minor_to_major, root.element_bytes, root.sizes, root.strides)
    return write_time_ns(device, root_bytes, rate)


def _tile_read(device: GpuDevice, visit: TiledVisit) -> tuple[np.ndarray, np.ndarray]:
    """(bytes read, bandwidth utilization) of a fusion-parameter visit, per candidate:
    blocks x the tile's elements clipped to the operand's shape."""
    clipped = np.prod(np.minimum(visit.sizes, np.asarray(visit.shape, np.int64)), axis=1, dtype=np.int64)
    tile_bytes = np.where(visit.present, visit.blocks * clipped * visit.element_bytes, 0)
    rate = tiled_utilization(device, visit.shape, visit.minor_to_major, visit.element_bytes, visit.sizes, visit.strides)
    return tile_bytes, rate


def _dot_tile(visit: TiledVisit) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(batch, rows, columns) of a dot's output tile: the product of the leading sizes,
    then the last two."""
    sizes = visit.sizes
    batch = np.prod(sizes[:, :-2], axis=1, dtype=np.int64) if sizes.shape[1] > 2 else np.ones(len(sizes), np.int64)
    return batch, sizes[:, -2], sizes[:, -1]
