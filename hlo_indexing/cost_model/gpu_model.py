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
import math
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
            self.padded_elements = padded(self.sizes).prod(axis=1, dtype=np.int64)
        if self.always is None:
            self.always = bool(self.present.all())


@dataclass
class TiledProgram:
    """A tiled fusion at every candidate: ``num_blocks`` (output tiles) per candidate,
    every visit, and the root visits with their outputs' byte sizes. ``blocks_key``: what
    ``num_blocks`` depends on, when figures derived from it may be shared with other
    fusions through :meth:`~.tile_arrays.TileArrays.memo` (None: not shared)."""

    num_blocks: np.ndarray
    visits: list[TiledVisit]
    roots: list[tuple[TiledVisit, int]]
    blocks_key: object = None
    candidates: int = field(init=False)

    def __post_init__(self) -> None:
        self.candidates = len(self.num_blocks)


#: ``EstimateNumWarps``'s table as arrays: tile element limits and the warps up to each
#: (then :data:`~.gpu_constants.LARGEST_NUM_WARPS`).
_WARP_LIMITS = np.asarray([limit for limit, _ in constants.WARPS_BY_TILE_ELEMENTS], np.int64)
_WARP_COUNTS = np.asarray([count for _, count in constants.WARPS_BY_TILE_ELEMENTS] + [constants.LARGEST_NUM_WARPS],
                          np.int64)


def num_warps_for(program: TiledProgram) -> np.ndarray:
    """``EstimateNumWarps``: by the largest padded tile of any visit, per candidate."""
    largest: np.ndarray | None = None
    seen: set[int] = set()
    for v in program.visits:
        if v.always and id(v.padded_elements) in seen:
            continue  # tiles of the same sizes: one array
        seen.add(id(v.padded_elements))
        elements = v.padded_elements if v.always else np.where(v.present, v.padded_elements, 1)
        largest = elements if largest is None else np.maximum(largest, elements)
    if largest is None:
        largest = np.ones(program.candidates, np.int64)
    return _WARP_COUNTS[_WARP_LIMITS.searchsorted(largest, side="left")]


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
    fits: np.ndarray | None = None,
) -> ProgramEstimates:
    """The model's figures for every candidate of ``program`` (module docstring).
    ``num_warps`` per candidate defaults to :func:`num_warps_for` (what XLA's tiling
    search uses); ``num_stages`` and ``tma`` only matter to dots. ``cache``: the
    :class:`~.tile_arrays.TileArrays` of the candidates, where the memory figures of
    visits with a ``key`` are shared with other fusions. ``fits``: per candidate,
    :func:`fits_in_registers` when the caller has it already."""
    n = program.candidates
    warps = num_warps_for(program) if num_warps is None else np.broadcast_to(np.asarray(num_warps, np.int64), (n,))
    num_blocks = program.num_blocks
    # Sums start as Python zeros (a fusion without dots or flops allocates nothing for them).
    flops: np.ndarray | int = 0
    dot_flops: np.ndarray | int = 0
    dot_compute: np.ndarray | float = 0.0
    dot_exec = np.zeros(n)
    bytes_read: np.ndarray | int = 0
    totals: dict[int, np.ndarray] = {}
    rates: dict[int, np.ndarray] = {}
    names: dict[int, str] = {}
    sizes_of: dict[int, int] = {}
    shared_keys: dict[int, list[object]] = {}
    reads = _tile_reads(device, [visit for visit in program.visits if visit.operand is not None], cache)
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
                timed = dot_times(device, visit.dot.problem, *_dot_tile(visit), visit.dot.block_k, warps, num_stages, tma)
                dot_compute = dot_compute + np.where(visit.present, timed.compute_ns, 0.0)
                dot_exec = np.maximum(dot_exec, np.where(visit.present, timed.exec_ns, 0.0))
                dot_flops = dot_flops + contribution
            else:
                flops = flops + contribution
            continue
        shared = visit.key if always else None
        tile_bytes, rate = reads[id(visit)]
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
        sizes_of[key] = math.prod(visit.shape) * visit.element_bytes
    times = _operand_read_times(device, num_blocks, totals, rates, sizes_of, shared_keys, cache)
    read: np.ndarray | float = 0.0
    operand_reads = {}
    for key, total in totals.items():
        operand_reads[key] = (names[key], times[key], total)
        read = read + times[key]
    write: np.ndarray | float = 0.0
    bytes_written = 0
    for root, root_bytes in program.roots:
        write = write + _shared(cache, None if root.key is None else ("write", id(device), root.key, root_bytes),
                                functools.partial(_root_write, device, root, root_bytes))
        bytes_written += root_bytes
    read, write = _array(read, n), _array(write, n)
    if isinstance(flops, np.ndarray):
        rate_key = None if program.blocks_key is None else ("flops rate", id(device), program.blocks_key, warps.tobytes())
        rate = _shared(cache, rate_key,
                       lambda: effective_flops_per_ns(device, num_blocks, warps * device.threads_per_warp))
        compute = compute_time_ns(flops, rate)
    else:
        compute = np.zeros(n)  # no flops: no time, whatever the rate
    if isinstance(dot_compute, np.ndarray):
        compute = compute + dot_compute
        exec_time = np.maximum(combine_ns(compute, read + write), dot_exec)
    else:
        exec_time = combine_ns(compute, read + write)  # no dot: nothing to wait for beyond it
    spills = ~(fits_in_registers(program, device) if fits is None else fits)
    if np.count_nonzero(spills):
        exec_time, read, write, compute = (np.where(spills, np.inf, x) for x in (exec_time, read, write, compute))
    total_flops = flops + dot_flops
    return ProgramEstimates(
        exec_ns=exec_time,
        read_ns=read,
        write_ns=write,
        compute_ns=compute,
        bytes_read=_array(bytes_read, n, np.int64),
        bytes_written=bytes_written,
        flops=total_flops if isinstance(total_flops, np.ndarray) else np.zeros(n, np.int64),
        num_blocks=num_blocks,
        num_warps=warps,
        spills=spills,
        operand_reads=operand_reads,
        dot_exec_ns=dot_exec,
    )


def _array(total: np.ndarray | float, n: int, dtype: type = np.float64) -> np.ndarray:
    """``total`` when it is an array, else ``n`` zeros (a sum over nothing)."""
    return total if isinstance(total, np.ndarray) else np.zeros(n, dtype)


def _operand_read_times(device: GpuDevice, num_blocks: np.ndarray, totals: dict[int, np.ndarray],
                        rates: dict[int, np.ndarray], sizes_of: dict[int, int], shared_keys: dict[int, list[object]],
                        cache: TileArrays | None) -> dict[int, np.ndarray]:
    """Per operand, its read time (:func:`~.gpu_rates.read_time_ns` of its bytes at its
    worst tile's rate). Operands whose tiles all have keys are shared through ``cache``;
    the others are computed in one call, stacked (the arithmetic is elementwise)."""
    times: dict[int, np.ndarray] = {}
    pending: list[tuple[int, object]] = []
    for key in totals:
        keys = tuple(shared_keys[key])
        memo_key: object = ("operand read", id(device), keys) if cache is not None and None not in keys else None
        found = cache.get(memo_key) if cache is not None and memo_key is not None else None
        if found is None:
            pending.append((key, memo_key))
        else:
            times[key] = found
    if pending:
        net = [np.minimum(sizes_of[key], totals[key]) for key, _ in pending]
        total = [totals[key] for key, _ in pending]
        rate = [rates[key] for key, _ in pending]
        computed = (read_time_ns(device, num_blocks, np.array(net), np.array(total), np.array(rate)) if len(pending) > 1
                    else read_time_ns(device, num_blocks, net[0], total[0], rate[0])[np.newaxis])
        for (key, memo_key), time in zip(pending, computed):
            times[key] = time
            if cache is not None and memo_key is not None:
                cache.put(memo_key, time)
    return times


def _root_write(device: GpuDevice, root: TiledVisit, root_bytes: int) -> np.ndarray:
    rate = tiled_utilization(device, root.shape, root.minor_to_major, root.element_bytes, root.sizes, root.strides)
    return write_time_ns(device, root_bytes, rate)


def _tile_reads(device: GpuDevice, visits: list[TiledVisit],
                cache: TileArrays | None) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per fusion-parameter visit (by ``id``), its (bytes read, bandwidth utilization) per
    candidate: blocks x the tile's elements clipped to the operand's shape. A visit with
    a ``key`` present everywhere is shared through ``cache``; the others are computed
    together, stacked per rank and layout (the arithmetic is elementwise)."""
    found: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    pending: dict[tuple[int, tuple[int, ...]], list[tuple[TiledVisit, object]]] = {}
    for visit in visits:
        memo_key: object = ("tile read", id(device), visit.key) if cache is not None and visit.always \
            and visit.key is not None else None
        cached = cache.get(memo_key) if cache is not None and memo_key is not None else None
        if cached is not None:
            found[id(visit)] = cached
        else:
            pending.setdefault((len(visit.shape), visit.minor_to_major), []).append((visit, memo_key))
    for (_, minor_to_major), group in pending.items():
        stacked = [visit for visit, _ in group]
        shape = np.asarray([visit.shape for visit in stacked], np.int64)[:, np.newaxis, :]
        element_bytes = np.asarray([visit.element_bytes for visit in stacked], np.int64)[:, np.newaxis]
        sizes = np.array([visit.sizes for visit in stacked])
        strides = np.array([visit.strides for visit in stacked])
        clipped = np.minimum(sizes, shape).prod(axis=2, dtype=np.int64)
        tile_bytes = np.array([visit.blocks for visit in stacked]) * clipped * element_bytes
        if not all(visit.always for visit in stacked):
            tile_bytes = np.where(np.array([visit.present for visit in stacked]), tile_bytes, 0)
        rate = tiled_utilization(device, shape, minor_to_major, element_bytes, sizes, strides)
        for row, (visit, memo_key) in enumerate(group):
            found[id(visit)] = (tile_bytes[row], rate[row])
            if cache is not None and memo_key is not None:
                cache.put(memo_key, found[id(visit)])
    return found


def _dot_tile(visit: TiledVisit) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(batch, rows, columns) of a dot's output tile: the product of the leading sizes,
    then the last two."""
    sizes = visit.sizes
    batch = sizes[:, :-2].prod(axis=1, dtype=np.int64) if sizes.shape[1] > 2 else np.ones(len(sizes), np.int64)
    return batch, sizes[:, -2], sizes[:, -1]
