"""The TPU model's arithmetic (:mod:`.tpu` documents the model), over numpy arrays with
one entry per candidate tiling: one kernel (:func:`.tpu.estimate_kernel`, arrays of one
entry) and every candidate of a ranking at once (:mod:`.tpu_ranking`) compute their
figures here, so both give the same numbers.

A kernel is described by its operands' traffic (:class:`OperandTraffic`: the bytes of a
block inside the array and the grid steps that move it), its dots' padded operations
per grid step (:func:`dot_operations`), the vector registers its other instructions
touch per step (:func:`vector_registers`), its grid steps and the TensorCores its
parallel axes occupy; :func:`tpu_figures` turns them into times
(:class:`TpuFigures`, whose :meth:`~TpuFigures.estimate` is one candidate's
:class:`~.estimate.Estimate` with its breakdown).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hlo_indexing.cost_model import mosaic
from hlo_indexing.cost_model.estimate import BreakdownItem, Estimate
from hlo_indexing.devices.types import TpuDevice

#: Nanoseconds of pipeline bookkeeping per grid step (see :mod:`.tpu`).
STEP_OVERHEAD_NS = 350.0


@dataclass(frozen=True)
class OperandTraffic:
    """One operand's HBM traffic per candidate: ``block_bytes`` of its block inside the
    array (``min(block, array)`` per dimension, times the element size) moved at
    ``transfers`` grid steps; ``written`` for an output. ``subject``: ``parameter 0``."""

    subject: str
    written: bool
    block_bytes: np.ndarray
    transfers: np.ndarray


@dataclass(frozen=True)
class DotWork:
    """One dot's padded MXU operations per grid step (per candidate) and the chip's
    rate for its element type (:func:`mxu_rate`)."""

    operations_per_step: np.ndarray
    rate: float


def mxu_rate(element_type: str, device: TpuDevice) -> float:
    """Operations per second of the chip's MXUs for ``element_type`` (a type without a
    rate of its own at bf16's: jax's DEFAULT precision multiplies f32 in bf16 passes)."""
    return device.peak_rate(element_type) or device.peak_rate("bf16") or 1


def dot_operations(tiles: np.ndarray, k_step: np.ndarray, device: TpuDevice) -> np.ndarray:
    """``2 * batch * M * N * K`` per candidate for a dot's output tiles (``[candidates,
    rank]``, each size at least 1) and contracting step ``k_step``, ``M`` rounded up to
    the sublanes, ``N`` and ``K`` to the MXU's shape."""
    rows, columns = device.mxu_shape
    if tiles.shape[1] < 2:
        tiles = np.concatenate([np.ones((len(tiles), 1), np.int64), tiles], axis=1)
    batch = tiles[:, :-2].prod(axis=1, dtype=np.int64)
    m, n = tiles[:, -2], tiles[:, -1]
    return (2 * batch * _round_up(m, device.sublanes) * _round_up(n, columns)
            * _round_up(np.maximum(k_step, 1), rows))


def vector_registers(tiles: np.ndarray, element_type: str, device: TpuDevice) -> np.ndarray:
    """Vector registers of a tile per candidate (``[candidates, rank]``, each size at
    least 1): the tile padded to the native tiling (:func:`.mosaic.padded_sizes`) over
    ``sublane tile x lanes`` elements (``lanes`` for rank < 2)."""
    sublane_tile, lane_tile = mosaic.native_tile(element_type, device)
    per_vreg = sublane_tile * lane_tile if tiles.shape[1] >= 2 else lane_tile
    elements = mosaic.padded_sizes(tiles, element_type, device).prod(axis=1, dtype=np.int64)
    return -(-elements // per_vreg)


def _round_up(values: np.ndarray, multiple: int) -> np.ndarray:
    return -(-values // multiple) * multiple


@dataclass(frozen=True)
class TpuFigures:
    """The model's figures per candidate (arrays of one length; see :mod:`.tpu`)."""

    operands: tuple[OperandTraffic, ...]
    steps: np.ndarray
    cores: np.ndarray
    bytes_read: np.ndarray
    bytes_written: np.ndarray
    read_ns: np.ndarray
    write_ns: np.ndarray
    mxu_ns: np.ndarray
    flops: np.ndarray
    vpu_ns: np.ndarray
    compute_ns: np.ndarray
    overhead_ns: np.ndarray
    first_step_bytes: np.ndarray
    prologue_ns: np.ndarray
    exec_ns: np.ndarray
    bandwidth_per_ns: float
    clock_rate_ghz: float

    def estimate(self, index: int) -> Estimate:
        """Candidate ``index``'s estimate, its time itemised per operand, MXU, VPU, grid
        steps and prologue."""
        items = []
        for operand in self.operands:
            block, transfers = int(operand.block_bytes[index]), int(operand.transfers[index])
            moved = transfers * block
            items.append(BreakdownItem(f"{operand.subject} ({'write' if operand.written else 'read'})",
                                       moved / self.bandwidth_per_ns, moved, f"{transfers} transfers of {block} B"))
        mxu_ns, vpu_ns, steps = float(self.mxu_ns[index]), float(self.vpu_ns[index]), int(self.steps[index])
        if mxu_ns:
            items.append(BreakdownItem("MXU", mxu_ns, None,
                                       f"{int(self.flops[index])} padded operations on {int(self.cores[index])} TensorCore(s)"))
        if vpu_ns:
            items.append(BreakdownItem("VPU", vpu_ns, None, f"one vreg per cycle at {self.clock_rate_ghz} GHz"))
        items.append(BreakdownItem("grid steps", float(self.overhead_ns[index]), None,
                                   f"{steps} steps x {STEP_OVERHEAD_NS} ns"))
        first = int(self.first_step_bytes[index])
        items.append(BreakdownItem("prologue", float(self.prologue_ns[index]), first,
                                   "the first step's blocks, which nothing overlaps"))
        return Estimate(float(self.exec_ns[index]), float(self.read_ns[index]), float(self.write_ns[index]),
                        float(self.compute_ns[index]), int(self.bytes_read[index]), int(self.bytes_written[index]),
                        int(self.flops[index]), steps, None, tuple(items))


def tpu_figures(operands: Sequence[OperandTraffic], dots: Sequence[DotWork], vregs_per_step: np.ndarray,
                steps: np.ndarray, cores: np.ndarray, device: TpuDevice) -> TpuFigures:
    """The figures of kernels (one per candidate) from their operands' traffic, their
    dots' work, the vector registers their other instructions touch per grid step, their
    grid ``steps`` and the TensorCores their parallel axes occupy (``cores``): HBM
    roofline, MXU and VPU time, the per-step overhead and the prologue (:mod:`.tpu`)."""
    count = len(steps)
    bandwidth_per_ns = device.hbm_bandwidth_bytes_per_second / 1e9
    bytes_read = np.zeros(count, np.int64)
    bytes_written = np.zeros(count, np.int64)
    first_step_bytes = np.zeros(count, np.int64)
    for operand in operands:
        moved = operand.transfers * operand.block_bytes
        first_step_bytes = first_step_bytes + operand.block_bytes
        if operand.written:
            bytes_written = bytes_written + moved
        else:
            bytes_read = bytes_read + moved
    mxu_ns = np.zeros(count)
    flops = np.zeros(count, np.int64)
    for dot in dots:
        per_core = dot.rate / device.tensor_cores_per_chip * cores
        operations = dot.operations_per_step * steps
        flops = flops + operations
        mxu_ns = mxu_ns + operations / per_core * 1e9
    vpu_ns = (vregs_per_step * steps) / (device.clock_rate_ghz * cores)
    read_ns, write_ns = bytes_read / bandwidth_per_ns, bytes_written / bandwidth_per_ns
    overhead_ns = STEP_OVERHEAD_NS * steps
    prologue_ns = first_step_bytes / bandwidth_per_ns
    compute_ns = mxu_ns + vpu_ns
    exec_ns = np.maximum(read_ns + write_ns, compute_ns) + overhead_ns + prologue_ns
    return TpuFigures(tuple(operands), steps, cores, bytes_read, bytes_written, read_ns, write_ns, mxu_ns, flops, vpu_ns,
                      compute_ns, overhead_ns, first_step_bytes, prologue_ns, exec_ns, bandwidth_per_ns,
                      device.clock_rate_ghz)
