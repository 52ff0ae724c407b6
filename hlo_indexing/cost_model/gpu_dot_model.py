"""XLA's dot cost model (``gpu_dot_fusion_cost_model``), which the indexing model uses
for every tiled ``dot`` it can describe; vectorized over candidate tilings.

A dot is a problem ``b x m x n x k`` (batch, lhs rows, rhs columns, contraction; one
non-contracting and one contracting dimension per side) computed by thread blocks of
``tb x tm x tn`` outputs stepping ``tk`` at a time along ``k``:

* compute: the tile's flops over the whole ``k``, for every block of every wave of
  ``core_count`` blocks (tile and wave quantised), at the tensor-core rate of the lhs
  type (:func:`~.gpu_rates.peak_matrix_ops_per_ns`), derated for small ``tm``
  (Blackwell: < 128 halves it; Hopper: < 64 gives 63%; compute capability 8.x: < 32
  halves it);
* HBM: the operands once and the output once, at the device bandwidth scaled by a
  fraction read (linearly interpolated, in float) from a table keyed by the bytes moved
  (Ampere, Hopper and Blackwell tables, ``gpu_constants``);
* the pipelined main loop, per hardware wave (blocks resident per SM from shared memory
  and threads): with one stage (or one step) read, compute, write and a 1300 ns latency
  per step run one after the other; with ``s`` stages, ``s - 1`` steps of loads are in
  flight (prologue, steady state, epilogue, see :func:`pipelined_loop_ns`);
* L2: each block reads its rows and columns over the whole ``k`` from L2 (6.65 TB/s on
  an H100, scaled by the device's DRAM bandwidth), plus 400 ns per step (150 ns with TMA).

The dot's time is the longer of the loop and L2 times.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hlo_indexing.cost_model import gpu_constants as constants
from hlo_indexing.cost_model.element_types import bit_width
from hlo_indexing.cost_model.gpu_rates import NS_PER_SECOND, peak_matrix_ops_per_ns
from hlo_indexing.devices.types import GpuDevice


@dataclass(frozen=True)
class DotProblem:
    """The dot's sizes and element types (``DotProblemInfo``)."""

    b: int
    m: int
    n: int
    k: int
    lhs_type: str
    rhs_type: str
    out_type: str


@dataclass(frozen=True)
class DotTimes:
    """Per candidate: the tile- and wave-quantised compute time and the dot's time, ns."""

    compute_ns: np.ndarray
    exec_ns: np.ndarray


def _bytes(elements: np.ndarray | int, element_type: str) -> np.ndarray:
    return -(-(np.asarray(elements, np.int64) * bit_width(element_type)) // 8)


def flops_derate(device: GpuDevice, tile_m: np.ndarray) -> np.ndarray:
    """The tensor-core derate for ``tile_m`` rows per block on ``device``."""
    capability = device.cuda_compute_capability
    major = capability[0] if capability else 0
    if major >= 10:
        return np.where(tile_m < 128, 0.5, 1.0)
    if major == 9:
        return np.where(tile_m < 64, 0.63, 1.0)
    if major == 8:
        return np.where(tile_m < 32, 0.5, 1.0)
    return np.ones(tile_m.shape)


def hbm_bandwidth(device: GpuDevice, bytes_moved: int) -> np.float32:
    """Effective HBM bandwidth (bytes/s, float) for a transfer of ``bytes_moved``: the
    device bandwidth times the generation's table fraction, interpolated linearly (in
    float) and clamped at the table's ends."""
    table = constants.hbm_bandwidth_table(device)
    sizes = [size for size, _ in table]
    fractions = [np.float32(fraction) for _, fraction in table]
    if bytes_moved <= sizes[0]:
        fraction = fractions[0]
    elif bytes_moved >= sizes[-1]:
        fraction = fractions[-1]
    else:
        upper = next(i for i, size in enumerate(sizes) if size >= bytes_moved)
        t = np.float32(bytes_moved - sizes[upper - 1]) / np.float32(sizes[upper] - sizes[upper - 1])
        fraction = fractions[upper - 1] + t * (fractions[upper] - fractions[upper - 1])
    return np.float32(fraction * np.float32(device.memory_bandwidth_bytes_per_second))


def pipelined_loop_ns(
    read_ns: np.ndarray, write_ns: np.ndarray, compute_ns: np.ndarray, steps: np.ndarray, stages: int
) -> np.ndarray:
    """One wave's main loop (``CalculatePipelinedLoopTime``): serial with one stage or one
    step; else ``s - 1`` steps of loads (each ``read/steps + 1300 ns``) in flight: a
    prologue of ``s - 1`` loads, the steady steps each as long as the longest of a
    load, a step's compute and the load latency spread over ``s - 1`` stages, an
    epilogue of ``s - 1`` computes, then the write."""
    latency = constants.LOOP_LATENCY_TAX_NS
    serial = read_ns + write_ns + compute_ns + steps * latency
    if stages <= 1:
        return serial
    safe_steps = np.maximum(steps, 1)
    load = read_ns / safe_steps
    memory_step = load + latency
    compute_step = compute_ns / safe_steps
    in_flight = np.minimum(stages - 1, steps)
    step = np.maximum(np.maximum(load, compute_step), np.maximum(memory_step, compute_step) / (stages - 1))
    pipelined = in_flight * memory_step + (steps - in_flight) * step + in_flight * compute_step + write_ns
    return np.where(steps <= 1, serial, pipelined)


def dot_times(
    device: GpuDevice,
    dot: DotProblem,
    tile_b: np.ndarray,
    tile_m: np.ndarray,
    tile_n: np.ndarray,
    tile_k: np.ndarray,
    num_warps: np.ndarray,
    num_stages: int,
    tma: bool = False,
) -> DotTimes:
    """The dot model's compute and exec times for every candidate tile (module docstring)."""
    blocks = -(-dot.b // tile_b) * -(-dot.m // tile_m) * -(-dot.n // tile_n)
    waves = -(-blocks // device.core_count)
    flops = 2 * tile_b * tile_m * tile_n * dot.k * waves * device.core_count
    rate = peak_matrix_ops_per_ns(device, dot.lhs_type) * flops_derate(device, tile_m)
    compute = (np.float32(1.0) * flops.astype(np.float32) / rate.astype(np.float32)).astype(np.float64)

    read_bytes = int(_bytes(dot.b * dot.m * dot.k, dot.lhs_type) + _bytes(dot.b * dot.k * dot.n, dot.rhs_type))
    write_bytes = int(_bytes(dot.b * dot.m * dot.n, dot.out_type))
    bandwidth = hbm_bandwidth(device, read_bytes + write_bytes)
    read = np.float64(np.float32(read_bytes) / bandwidth) * NS_PER_SECOND
    write = np.float64(np.float32(write_bytes) / bandwidth) * NS_PER_SECOND

    steps = -(-dot.k // np.maximum(tile_k, 1))
    shared_per_block = _bytes((tile_m + tile_n) * tile_k, dot.lhs_type) * max(num_stages, 1)
    per_sm = np.minimum(device.shared_memory_per_core_bytes // np.maximum(shared_per_block, 1),
                        device.threads_per_core_limit // np.maximum(num_warps * device.threads_per_warp, 1))
    if device.max_blocks_per_multiprocessor:
        per_sm = np.minimum(per_sm, device.max_blocks_per_multiprocessor)
    per_sm = np.maximum(per_sm, 1)
    hardware_waves = -(-blocks // (per_sm * device.core_count))
    loop = pipelined_loop_ns(read / hardware_waves, write / hardware_waves, compute / hardware_waves, steps,
                             num_stages) * hardware_waves

    l2_bytes = (_bytes(tile_b * tile_m * dot.k, dot.lhs_type) + _bytes(tile_b * tile_n * dot.k, dot.rhs_type)) * blocks
    l2_bandwidth = constants.H100_L2_BANDWIDTH * device.memory_bandwidth_bytes_per_second / constants.H100_DRAM_BANDWIDTH
    overhead = constants.TMA_LOOP_OVERHEAD_NS if tma else constants.LEGACY_LOOP_OVERHEAD_NS
    l2 = np.float64(np.float32(1.0) * l2_bytes.astype(np.float32)) / l2_bandwidth * NS_PER_SECOND + steps * overhead
    return DotTimes(compute, np.maximum(loop, l2))
