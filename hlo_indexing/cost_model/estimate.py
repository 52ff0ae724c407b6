"""The result types every cost-model backend returns, whatever the device kind.

A backend judges one tiling of a fusion on one device: it is legal, or it breaks rules,
each a :class:`Rejection` (a stable rule id, the instruction or operand it is about,
and a message with the numbers); a legal tiling gets an :class:`Estimate` (times in
nanoseconds, bytes, flops and a breakdown of where the time goes). :class:`Assessment`
holds both.

Many candidates at once (a ranking): a backend returns :class:`CandidateEstimates`,
numpy arrays with one entry per candidate, and one :class:`ConstraintCheck` per rule
and subject (which candidates satisfy it, and the rejection of one that does not).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


def time_text(ns: float) -> str:
    """A time in nanoseconds in words, three significant digits in its unit: ``5 us``,
    ``37.6 ms``, ``-48.9 ns``, ``infinite``."""
    if math.isinf(ns):
        return "infinite"
    if abs(ns) >= 1e6:
        return f"{ns / 1e6:.3g} ms"
    if abs(ns) >= 1e3:
        return f"{ns / 1e3:.3g} us"
    return f"{ns:.3g} ns"


#: The rule of a tiling the tiled computation refuses to build (``UNIMPLEMENTED``: a
#: negative stride, a concatenate tile across two operands), on every backend.
RULE_UNIMPLEMENTED = "tiling.unimplemented"


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

    def to_json(self) -> dict[str, object]:
        """Every figure, JSON-ready (times in ns, an infinite time as None): the
        ``estimate`` object of ``hlo_indexing/schema/tilings.schema.json``."""
        def finite(value: float) -> float | None:
            return None if math.isinf(value) else value

        return {
            "exec_time_ns": finite(self.exec_time_ns),
            "read_time_ns": finite(self.read_time_ns),
            "write_time_ns": finite(self.write_time_ns),
            "compute_time_ns": finite(self.compute_time_ns),
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "flops": self.flops,
            "num_blocks": self.num_blocks,
            "num_warps": self.num_warps,
            "breakdown": [{"label": item.label, "time_ns": finite(item.time_ns), "bytes": item.bytes,
                           "detail": item.detail} for item in self.breakdown],
        }


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


@dataclass(frozen=True)
class ConstraintCheck:
    """One rule on one subject over all candidates: ``ok`` per candidate (bool array),
    and the message of a candidate that breaks it (``describe(i)``)."""

    rule: str
    subject: str
    ok: np.ndarray
    describe: Callable[[int], str]

    def rejection(self, index: int, names: Mapping[str, str] | None = None) -> Rejection:
        """The :class:`Rejection` of candidate ``index`` (which breaks the rule); ``names``
        renames instructions in it (a fusion with the same body as the one checked)."""
        rejection = Rejection(self.rule, self.describe(index), self.subject)
        return renamed(rejection, names) if names else rejection


def renamed(rejection: Rejection, names: Mapping[str, str]) -> Rejection:
    """``rejection`` with every instruction name of ``names`` (whole names only: not
    the ``s`` of ``array's``) replaced by its value."""
    pattern = re.compile(r"(?<![\w.'])(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?![\w.'])")
    message = pattern.sub(lambda m: names[m.group(1)], rejection.message) if names else rejection.message
    return Rejection(rejection.rule, message, names.get(rejection.subject, rejection.subject))


@dataclass
class CandidateEstimates:
    """A backend's verdict on many candidate tilings: per candidate (arrays of one
    length) the :class:`Estimate` fields, and the rule checks. ``num_warps`` is None
    on devices without warps; ``breakdown(i)`` itemises candidate ``i``'s time."""

    checks: Sequence[ConstraintCheck]
    exec_time_ns: np.ndarray
    read_time_ns: np.ndarray
    write_time_ns: np.ndarray
    compute_time_ns: np.ndarray
    bytes_read: np.ndarray
    bytes_written: np.ndarray
    flops: np.ndarray
    num_blocks: np.ndarray
    num_warps: np.ndarray | None = None
    breakdown: Callable[[int], tuple[BreakdownItem, ...]] | None = None

    def __len__(self) -> int:
        return len(self.exec_time_ns)

    def rejections(self, index: int, names: Mapping[str, str] | None = None) -> tuple[Rejection, ...]:
        """The rules candidate ``index`` breaks, in check order (``names``: see
        :meth:`ConstraintCheck.rejection`)."""
        return tuple(check.rejection(index, names) for check in self.checks if not check.ok[index])

    def estimate(self, index: int) -> Estimate:
        """The :class:`Estimate` of candidate ``index``."""
        return Estimate(
            exec_time_ns=float(self.exec_time_ns[index]),
            read_time_ns=float(self.read_time_ns[index]),
            write_time_ns=float(self.write_time_ns[index]),
            compute_time_ns=float(self.compute_time_ns[index]),
            bytes_read=int(self.bytes_read[index]),
            bytes_written=int(self.bytes_written[index]),
            flops=int(self.flops[index]),
            num_blocks=int(self.num_blocks[index]),
            num_warps=None if self.num_warps is None else int(self.num_warps[index]),
            breakdown=self.breakdown(index) if self.breakdown is not None else (),
        )
