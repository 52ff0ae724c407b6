"""The device arithmetic of XLA's GPU cost model (``GpuPerformanceModelBase`` and the
tiled coalescing heuristic), vectorized over candidate tilings.

Every function takes numpy arrays (one entry per candidate; a single tiling is an array
of one) and reproduces XLA's number types where they show in the results: the device
clock and the DRAM-heuristic bandwidths are C++ ``float`` (``np.float32`` here), the
flop rates are truncated to integers, the tiled write bandwidth too. Times are returned
in nanoseconds (``float64``).
"""

from __future__ import annotations

import functools

import numpy as np

from hlo_indexing.cost_model import gpu_constants as constants
from hlo_indexing.devices.types import GpuDevice

NS_PER_SECOND = 1e9


def clock_ghz(device: GpuDevice) -> np.float32:
    """The clock as XLA stores it (a C++ ``float``)."""
    return np.float32(device.clock_rate_ghz)


def effective_flops_per_ns(device: GpuDevice, num_blocks: np.ndarray, threads_per_block: np.ndarray) -> np.ndarray:
    """``CalculateEffectiveFlopsPerNs``: active FP32 lanes (threads per block, at most
    ``fpus_per_core``) x active SMs (blocks, at most ``core_count``) x clock x 2 (FMA),
    the clock doubled in float, the product truncated to an integer."""
    lanes = np.minimum(threads_per_block, device.fpus_per_core).astype(np.int64)
    cores = np.minimum(num_blocks, device.core_count).astype(np.int64)
    per_lane = np.float64(clock_ghz(device) * np.float32(2))
    return np.trunc(per_lane * (lanes * cores)).astype(np.int64)


@functools.cache
def peak_matrix_ops_per_ns(device: GpuDevice, element_type: str) -> int:
    """``CalculatePeakMatrixOpsPerNs``: the tensor-core rate of the element type (clock x
    ops per clock x 2 x SMs x units per SM, truncated), or, without a rate for it, the
    full-occupancy scalar rate."""
    rate = device.matrix_rate(element_type)
    if rate is None:
        full = np.array([device.core_count]), np.array([device.fpus_per_core])
        return int(effective_flops_per_ns(device, *full)[0])
    per_unit = np.float64(np.float32(rate.clock_rate_ghz)) * rate.ops_per_clock * 2
    return int(per_unit * (device.core_count * rate.units_per_core))


def compute_time_ns(flops: np.ndarray, flops_per_ns: np.ndarray) -> np.ndarray:
    """``ComputeTime``: flops / rate in float (a zero rate gives an infinite time)."""
    rate = flops_per_ns.astype(np.float32)
    time = np.divide(flops.astype(np.float32), rate, out=np.full(rate.shape, np.float32(np.inf)), where=rate > 0)
    return np.where(flops == 0, 0.0, time).astype(np.float64)


def adjust_bandwidth(device: GpuDevice, bandwidth: np.ndarray, num_blocks: np.ndarray) -> np.ndarray:
    """``AdjustBandwidth``: at most one transaction per clock and per block
    (``memory_transactions_per_clock`` x clock x blocks), in float."""
    per_block = clock_ghz(device) * np.float32(1.0e9) * np.float32(device.memory_transactions_per_clock)
    return np.minimum(bandwidth, num_blocks.astype(np.float32) * per_block)


def read_time_ns(
    device: GpuDevice, num_blocks: np.ndarray, net_bytes: np.ndarray, total_bytes: np.ndarray, utilization: np.ndarray
) -> np.ndarray:
    """``ReadTimeWithDRAMHeuristic``: the first ``net_bytes`` (the operand once) come from
    DRAM at ``memory_bandwidth x utilization``; re-reads come from L2 (2.5x faster when the
    operand fits in L2, 20x when it also fits in the SMs' L1) or, when it does not fit
    in L2, from DRAM again at the coalescing-reduced rate. Both bandwidths are capped
    by :func:`adjust_bandwidth`."""
    bandwidth = np.float64(device.memory_bandwidth_bytes_per_second)
    dram = (bandwidth * utilization).astype(np.float32)
    fits_l2 = net_bytes < device.l2_cache_size_bytes
    fits_l1 = net_bytes < device.l1_cache_size_per_sm_bytes * device.core_count
    rest = np.where(fits_l2, np.float32(bandwidth) * np.float32(constants.L2_CACHE_SPEEDUP), dram)
    rest = np.where(fits_l2 & fits_l1, rest * np.float32(constants.L1_CACHE_SPEEDUP), rest)
    dram = adjust_bandwidth(device, dram, num_blocks)
    rest = adjust_bandwidth(device, rest, num_blocks)
    from_dram = np.minimum(net_bytes, total_bytes)
    from_cache = total_bytes - from_dram
    seconds = from_dram.astype(np.float32) / dram
    seconds_rest = from_cache.astype(np.float32) / rest
    return (seconds.astype(np.float64) + seconds_rest.astype(np.float64)) * NS_PER_SECOND


def tiled_utilization(
    device: GpuDevice,
    shape: tuple[int, ...] | np.ndarray,
    minor_to_major: tuple[int, ...],
    element_bytes: int | np.ndarray,
    tile_sizes: np.ndarray,
    tile_strides: np.ndarray,
) -> np.ndarray:
    """``BandwidthUtilizationRateHeuristicForTiledMemoryAccess``: the contiguous part of
    a tile (walking the layout minor to major, stopping at a stride other than 1 and
    after a dimension the tile covers only partly) in bytes, over the DRAM->L2
    transactions it needs. ``tile_sizes``/``tile_strides``: ``[candidates, rank]``; or,
    for several tiles of one rank and layout at once, ``[tiles, candidates, rank]`` with
    ``shape`` an array ``[tiles, 1, rank]`` and ``element_bytes`` one ``[tiles, 1]``."""
    dims = np.asarray(shape, np.int64)
    contiguous = np.ones(tile_sizes.shape[:-1], np.int64)
    going = np.ones(tile_sizes.shape[:-1], bool)
    for dim in minor_to_major:
        going &= tile_strides[..., dim] == 1
        contiguous = np.where(going, contiguous * np.minimum(tile_sizes[..., dim], dims[..., dim]), contiguous)
        going &= tile_sizes[..., dim] >= dims[..., dim]
    transaction = device.dram_to_l2_transaction_size_bytes
    used = contiguous * element_bytes
    return used / (transaction * -(-used // transaction))


def write_time_ns(device: GpuDevice, bytes_written: int, utilization: np.ndarray) -> np.ndarray:
    """The indexing model's write time of one output: its bytes at the memory bandwidth
    times the tile's utilization, the bandwidth truncated to an integer."""
    bandwidth = np.trunc(utilization * device.memory_bandwidth_bytes_per_second)
    return np.divide(np.float64(bytes_written) * NS_PER_SECOND, bandwidth, out=np.full(bandwidth.shape, np.inf),
                     where=bandwidth > 0)


def combine_ns(compute: np.ndarray, memory: np.ndarray) -> np.ndarray:
    """``CombineComputeAndMemoryAccessTime``: 95% of the shorter hides under the longer."""
    shorter = np.minimum(compute, memory)
    both_infinite = np.isinf(compute) & np.isinf(memory)
    return np.where(both_infinite, np.inf, compute + memory - np.where(both_infinite, 0.0, shorter)
                    * constants.MEMORY_COMPUTE_PARALLELISM)
