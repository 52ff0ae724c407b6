"""The result of :func:`~hlo_indexing.pallas.check.check_pallas`: findings with a fixed
vocabulary, per ``pallas_call`` the maps they were decided on, as text and JSON.

========================  ========  ===================================================
kind                      severity  meaning
========================  ========  ===================================================
``race``                  error     two grid points that may run in parallel write
                                    overlapping output elements
``uncovered-output``      error     some output element is written by no grid point
``block-index-out-of-range``  error for some grid point a block lies entirely outside
                                    its array (an element window: any part outside)
``partial-block``         warning   a block runs past the array's edge (reads padding,
                                    writes are masked)
``non-consecutive-revisit``  error  an output block is visited again after other
                                    blocks, in the grid's iteration order
``illegal-block-shape``   error     the device's backend rejects the block
``vmem-overflow``         error     the blocks, double-buffered, exceed the on-chip memory
``unaligned-block``       warning   an accepted TPU block whose last two dimensions are
                                    not multiples of its element type's native tile
                                    (Mosaic pads it: a performance note)
``not-decided``           warning   a question the analysis could not answer, and why
                                    (a prefetched scalar, a grid too large to enumerate)
========================  ========  ===================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

RACE = "race"
UNCOVERED = "uncovered-output"
OUT_OF_RANGE = "block-index-out-of-range"
PARTIAL = "partial-block"
REVISIT = "non-consecutive-revisit"
ILLEGAL = "illegal-block-shape"
VMEM = "vmem-overflow"
UNALIGNED = "unaligned-block"
NOT_DECIDED = "not-decided"

#: Every kind with its severity.
SEVERITIES = {
    RACE: "error",
    UNCOVERED: "error",
    OUT_OF_RANGE: "error",
    PARTIAL: "warning",
    REVISIT: "error",
    ILLEGAL: "error",
    VMEM: "error",
    UNALIGNED: "warning",
    NOT_DECIDED: "warning",
}

#: How a finding was decided: on the maps (ranges, constraints, simplifier, affine
#: forms), by enumerating the grid (bounded), by the device's block rules.
REASONED, ENUMERATED, DEVICE_RULES = "reasoned", "enumerated", "device rules"


@dataclass(frozen=True)
class Finding:
    """One finding: ``kind`` (the table above), ``severity``, ``message`` (names the
    operand, the grid point or region and the element that shows it), ``operand`` (its
    label, ``"output 0 (o_ref)"``; None for the whole call), ``call`` (the kernel),
    the witnessing ``grid_point`` and ``element`` when there are, and ``method``."""

    kind: str
    message: str
    operand: str | None
    call: str
    grid_point: tuple[int, ...] | None = None
    element: tuple[int, ...] | None = None
    method: str = ""

    @property
    def severity(self) -> str:
        """``error`` or ``warning``."""
        return SEVERITIES[self.kind]

    def to_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return {
            "kind": self.kind,
            "severity": self.severity,
            "message": self.message,
            "operand": self.operand,
            "call": self.call,
            "grid_point": list(self.grid_point) if self.grid_point is not None else None,
            "element": list(self.element) if self.element is not None else None,
            "method": self.method,
        }

    def __str__(self) -> str:
        return f"{self.severity}: [{self.kind}] {self.message}"


@dataclass(frozen=True)
class OperandReport:
    """An operand as checked: its block and array, and its maps as XLA text (one per
    piece of the grid): grid -> block indices, grid -> elements."""

    label: str
    array_shape: tuple[int, ...]
    dtype: str
    block_shape: tuple[int | None, ...]
    memory_space: str
    block_index_maps: tuple[str, ...]
    element_maps: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return {
            "operand": self.label,
            "array_shape": list(self.array_shape),
            "dtype": self.dtype,
            "block_shape": list(self.block_shape),
            "memory_space": self.memory_space,
            "block_index_maps": list(self.block_index_maps),
            "element_maps": list(self.element_maps),
        }


@dataclass(frozen=True)
class CallReport:
    """One ``pallas_call``: its kernel, grid, the axes taken as parallel (and why), its
    operands and findings."""

    call: str
    grid: tuple[int, ...] | None
    parallel_axes: tuple[int, ...]
    semantics_note: str
    operands: tuple[OperandReport, ...]
    findings: tuple[Finding, ...]

    def to_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return {
            "call": self.call,
            "grid": list(self.grid) if self.grid is not None else None,
            "parallel_axes": list(self.parallel_axes),
            "semantics": self.semantics_note,
            "operands": [o.to_dict() for o in self.operands],
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclass(frozen=True)
class PallasReport:
    """The findings of every ``pallas_call`` of a function, for ``device`` (its name,
    or None: no device rules checked)."""

    calls: tuple[CallReport, ...]
    device: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every finding, call by call."""
        return tuple(f for call in self.calls for f in call.findings)

    @property
    def errors(self) -> tuple[Finding, ...]:
        """The findings of severity ``error``."""
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        """The findings of severity ``warning``."""
        return tuple(f for f in self.findings if f.severity == "warning")

    @property
    def ok(self) -> bool:
        """True when there is no error."""
        return not self.errors

    def kinds(self) -> set[str]:
        """The kinds found."""
        return {f.kind for f in self.findings}

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: the device, notes, calls (with operands, maps and findings) and a
        count of errors and warnings."""
        return {
            "device": self.device,
            "notes": list(self.notes),
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "calls": [c.to_dict() for c in self.calls],
        }

    def __str__(self) -> str:
        lines = []
        device = f" on {self.device}" if self.device else ""
        if not self.calls:
            lines.append("no pallas_call found")
        for call in self.calls:
            grid = "dynamic" if call.grid is None else "(" + ", ".join(map(str, call.grid)) + ")"
            lines.append(f"pallas_call {call.call}: grid {grid}, {call.semantics_note}")
            for operand in call.operands:
                lines.append(f"  {operand.label}: block {_shape(operand.block_shape)} of {_shape(operand.array_shape)} {operand.dtype}")
                for text in operand.block_index_maps:
                    lines.append(f"    {text}")
            for finding in call.findings:
                lines.append(f"  {finding}")
        lines += [f"note: {n}" for n in self.notes]
        summary = f"{len(self.errors)} error(s), {len(self.warnings)} warning(s){device}"
        lines.append(summary)
        return "\n".join(lines)


def _shape(shape: Sequence[int | None]) -> str:
    return "(" + ", ".join("None" if n is None else str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"
