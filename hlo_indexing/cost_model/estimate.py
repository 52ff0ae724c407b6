"""The result types every cost-model backend returns, whatever the device kind.

A backend judges one tiling of a fusion on one device: it is legal, or it breaks rules,
each a :class:`Rejection` (a stable rule id, the instruction or operand it is about,
and a message with the numbers); a legal tiling gets an :class:`Estimate` (times in
nanoseconds, bytes, flops and a breakdown of where the time goes). :class:`Assessment`
holds both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Rejection:
    """One rule a tiling breaks on a device.

    ``rule`` is a stable id, ``<backend>.<rule>`` (``"triton.tile-elements"``,
    ``"mosaic.block-shape"``): scripts may match on it. ``subject`` names the
    instruction or operand the rule is about (empty when the whole tiling breaks it, e.g.
    a grid limit); ``message`` says what is wrong with the numbers involved (the sizes,
    the limit).
    """

    rule: str
    message: str
    subject: str = ""

    def __str__(self) -> str:
        return f"[{self.rule}] {self.message}"


@dataclass(frozen=True)
class BreakdownItem:
    """One named part of an estimate: ``time_ns`` (nanoseconds) spent on ``label`` (an
    operand's read, the dot's pipelined loop, the per-grid-step overhead, ...), with
    ``bytes`` moved when it is a memory access and a free-form ``detail`` (the bandwidth
    or the rate used)."""

    label: str
    time_ns: float
    bytes: int | None = None
    detail: str = ""


@dataclass(frozen=True)
class Estimate:
    """A backend's estimate of one tiling's run time on one device.

    Times are nanoseconds: ``exec_time_ns`` is the whole kernel; ``read_time_ns``,
    ``write_time_ns`` and ``compute_time_ns`` its parts before the backend overlaps
    them (so ``exec_time_ns`` need not be their sum). ``bytes_read`` and
    ``bytes_written`` are what the kernel moves to and from device memory (HBM/DRAM),
    ``flops`` the operations it performs (the backend's own count: XLA's GPU model counts
    its per-op table's cycles). ``num_warps`` is the launch's warps per block on a GPU,
    ``None`` on a TPU; ``num_blocks`` the programs of the grid. ``breakdown`` itemises
    the time. An estimate whose ``exec_time_ns`` is infinite (:meth:`infinite`) means the
    tiling cannot run efficiently at all (XLA's register-spill rule); its counts are 0.
    """

    exec_time_ns: float
    read_time_ns: float
    write_time_ns: float
    compute_time_ns: float
    bytes_read: int
    bytes_written: int
    flops: int
    num_blocks: int
    num_warps: int | None = None
    breakdown: tuple[BreakdownItem, ...] = ()

    @property
    def is_infinite(self) -> bool:
        """Whether the tiling was judged unable to run (every time infinite)."""
        return math.isinf(self.exec_time_ns)

    @classmethod
    def infinite(cls, reason: str, num_blocks: int = 0, num_warps: int | None = None) -> Estimate:
        """The estimate of a tiling that cannot run (every time infinite); ``reason`` is
        its only breakdown item."""
        inf = math.inf
        return cls(inf, inf, inf, inf, 0, 0, 0, num_blocks, num_warps, (BreakdownItem(reason, inf),))


@dataclass(frozen=True)
class Assessment:
    """A tiling judged on a device: the rules it breaks (empty when legal) and, when the
    backend could estimate it, its :class:`Estimate` (a backend may estimate an illegal
    tiling too, e.g. to compare XLA's own choice with the best legal one)."""

    tile_sizes: tuple[int, ...]
    rejections: tuple[Rejection, ...] = ()
    estimate: Estimate | None = None

    @property
    def legal(self) -> bool:
        """True when the tiling breaks no rule."""
        return not self.rejections
