"""``check_pallas``: check every ``pallas_call`` of a function before it runs.

For each call (:mod:`.calls`) and each operand whose blocks the pipeline copies (VMEM
or SMEM blocks), the block index map becomes :class:`~hlo_indexing.maps.indexing_map.IndexingMap`
pieces (:mod:`.operand_maps`), on which :mod:`.checks` decides the block range of every
operand and, for outputs, coverage, races and revisits. With a TPU device, the blocks go
through Mosaic's rules (:mod:`hlo_indexing.cost_model.mosaic`): ``illegal-block-shape``,
``vmem-overflow`` and the ``unaligned-block`` performance note.

Parallel axes: those marked ``parallel`` (any value but ``arbitrary``) in the call's TPU
``dimension_semantics``, and the axes ``jax.vmap`` added (Mosaic makes them parallel). A
call that gives none runs its grid in order on a TPU (Mosaic's default, ``arbitrary``):
no axis but the vmapped ones is parallel when the device is a TPU or the call carries TPU
compiler parameters; otherwise every axis is (GPU backends run all programs at once).

Outputs aliased to an input (``input_output_aliases``) keep the input's values where no
grid point writes, so they are not checked for coverage; like Pallas's TPU interpreter,
revisits are not checked on them either, nor on outputs declared ``RevisitMode.ANY``.
Operands in memory space ANY/HBM (the kernel moves data itself) are not checked beyond
Mosaic's rule that their block is the whole array.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hlo_indexing.cost_model import mosaic
from hlo_indexing.devices.registry import device as find_device
from hlo_indexing.devices.types import Device, GpuDevice, TpuDevice
from hlo_indexing.dialect_glue.context import current_or_default_context
from hlo_indexing.errors import InvalidArgumentError, LimitExceededError
from hlo_indexing.limits import MAX_PALLAS_GRID_POINTS
from hlo_indexing.pallas.calls import SQUEEZED, Operand, PallasCall, evaluate_index_map, trace_calls, xla_element_type
from hlo_indexing.pallas.checks import Question, coverage_findings, race_findings, range_findings, revisit_findings
from hlo_indexing.pallas.operand_maps import OperandMaps, operand_maps
from hlo_indexing.pallas.report import (
    DEVICE_RULES,
    ILLEGAL,
    NOT_DECIDED,
    REASONED,
    UNALIGNED,
    UNCOVERED,
    VMEM,
    CallReport,
    Finding,
    OperandReport,
    PallasReport,
)


def check_pallas(fn: Callable[..., object], *args: object, device: str | Device | None = None, max_points: int = MAX_PALLAS_GRID_POINTS) -> PallasReport:
    """Trace ``fn(*args)`` (``args``: arrays or ``jax.ShapeDtypeStruct`` s) and check every
    ``pallas_call`` in it (see the module docstring and :mod:`.report` for the findings).
    ``device``: a device name (``"tpu-v5e"``), a :class:`~hlo_indexing.devices.types.Device`,
    or None (no device rules). ``max_points`` bounds the grid points a check enumerates
    when reasoning on the maps does not decide it.

    Raises :class:`~hlo_indexing.errors.UnsupportedError` without jax,
    :class:`~hlo_indexing.errors.InvalidArgumentError` when tracing fails or for an
    unknown device."""
    chosen = find_device(device) if isinstance(device, str) else device
    if chosen is not None and not isinstance(chosen, (GpuDevice, TpuDevice)):
        raise InvalidArgumentError(f"device must be a device name or a Device, got {type(device).__name__}")
    if max_points < 1:
        raise InvalidArgumentError(f"max_points must be positive, got {max_points}")
    calls = trace_calls(fn, args)
    notes = []
    if chosen is not None and not isinstance(chosen, TpuDevice):
        notes.append(f"{chosen.name} is a GPU: block shapes are checked against TPU rules only (none applied)")
    return PallasReport(tuple(check_call(call, chosen, max_points) for call in calls), chosen.name if chosen else None, tuple(notes))


def runs_on_tpu(call: PallasCall, device: Device | None) -> bool:
    """Whether the call is checked as a TPU kernel: the device is a TPU, or the call
    carries TPU compiler parameters."""
    return isinstance(device, TpuDevice) or call.backend == "tpu"


def parallel_axes(call: PallasCall, device: Device | None) -> tuple[tuple[int, ...], str]:
    """The grid axes taken as parallel, and a sentence saying why."""
    rank = len(call.grid or ())
    if call.semantics is not None:
        axes = tuple(k for k, s in enumerate(call.semantics) if s != "arbitrary")
        return axes, f"dimension_semantics {tuple(call.semantics)}"
    if runs_on_tpu(call, device):
        vmapped = f" but for the axes jax.vmap added {call.vmapped_axes}" if call.vmapped_axes else ""
        return call.vmapped_axes, f"no dimension_semantics: a TPU runs the grid in order (arbitrary){vmapped}"
    return tuple(range(rank)), "no dimension_semantics: every axis taken as parallel"


def check_call(call: PallasCall, device: Device | None, max_points: int) -> CallReport:
    """The report of one ``pallas_call``."""
    axes, semantics_note = parallel_axes(call, device)
    findings: list[Finding] = []
    maps_by_operand: dict[Operand, OperandMaps] = {}
    if call.grid is None:
        findings.append(Finding(NOT_DECIDED, "the grid's size is known only at run time: no block was checked", None, call.name))
    elif 0 in call.grid:
        for operand in call.outputs:
            if operand.pipelined and not operand.aliased and 0 not in operand.array_shape:
                message = f"{operand.label}: the grid {call.grid} is empty: no element is written"
                findings.append(Finding(UNCOVERED, message, operand.label, call.name, element=(0,) * len(operand.array_shape), method=REASONED))
    else:
        context = current_or_default_context()
        question = Question(call, max_points, lambda operand, point: evaluate_index_map(call, operand, point), axes)
        for operand in call.operands:
            if not operand.pipelined or 0 in operand.array_shape:  # no element to read or write
                continue
            try:
                maps = operand_maps(call, operand, context)
                maps_by_operand[operand] = maps
                findings += _operand_findings(question, maps, call, device, axes)
            except LimitExceededError as error:  # a number past int64, a domain too large: say so
                findings.append(Finding(NOT_DECIDED, f"{operand.label}: not checked: {error.message}", operand.label, call.name))
    if isinstance(device, TpuDevice):
        findings += device_findings(call, device)
    operands = tuple(_operand_report(o, maps_by_operand.get(o)) for o in call.operands)
    return CallReport(call.name, call.grid, axes, semantics_note, operands, tuple(findings))


def _operand_findings(question: Question, maps: OperandMaps, call: PallasCall, device: Device | None, axes: tuple[int, ...]) -> list[Finding]:
    """The findings about one operand's maps (see the module docstring)."""
    operand = maps.operand
    if maps.problem:
        return [Finding(NOT_DECIDED, f"{operand.label}: not checked: {maps.problem}", operand.label, call.name)]
    findings = range_findings(question, maps)
    if operand.role == "output":
        if not operand.aliased:
            findings += coverage_findings(question, maps)
        if _whole_array(operand) and not runs_on_tpu(call, device):
            findings += _self_addressed(call, operand, axes)
        else:
            findings += race_findings(question, maps)
        if not operand.aliased and not operand.revisit_any:
            findings += revisit_findings(question, maps)
    return findings


def tpu_block(operand: Operand) -> mosaic.TpuBlock | None:
    """The operand's block as Mosaic's rules see it (None for an element type without
    a plain size, e.g. a PRNG key)."""
    element_type = xla_element_type(operand.dtype)
    if element_type is None:
        return None
    trivial = _whole_array(operand)
    return mosaic.TpuBlock(
        operand.label,
        tuple(operand.block_sizes),
        tuple(operand.array_shape),
        element_type,
        operand.memory_space,
        trivial,
        operand.buffers,
        tuple(d.kind for d in operand.block),
    )


def _whole_array(operand: Operand) -> bool:
    """Whether every grid point gets the whole array (no BlockSpec, or one of the
    array's shape at block index 0)."""
    return tuple(operand.block_sizes) == tuple(operand.array_shape) and _all_zero(operand)


def _self_addressed(call: PallasCall, operand: Operand, axes: tuple[int, ...]) -> list[Finding]:
    """A GPU kernel that gets the whole output at every grid point writes the parts it
    chooses by its own indexing: whether two programs write the same elements is not a
    question of blocks."""
    assert call.grid is not None
    if not any(call.grid[a] > 1 for a in axes):
        return []
    return [
        Finding(
            NOT_DECIDED,
            f"{operand.label}: not decided whether grid points write the same elements: every grid point gets the "
            "whole array (no BlockSpec) and writes it through its own indexing, which the block analysis does not see",
            operand.label,
            call.name,
        )
    ]


def _all_zero(operand: Operand) -> bool:
    """Whether the index map returns literal zeros (Mosaic's "trivial window")."""
    outvars = operand.index_map.jaxpr.outvars
    return all(getattr(v, "val", None) is not None and int(v.val) == 0 for v in outvars)


def device_findings(call: PallasCall, device: TpuDevice) -> list[Finding]:
    """``illegal-block-shape``, ``vmem-overflow`` and ``unaligned-block`` on a TPU."""
    findings = []
    blocks = []
    for operand in call.operands:
        block = tpu_block(operand)
        if block is None:
            findings.append(Finding(NOT_DECIDED, f"{operand.label}: element type {operand.dtype} has no plain size: its block was not checked against {device.name}'s rules", operand.label, call.name))
            continue
        blocks.append(block)
        rejections = mosaic.block_rejections(block, device)
        for rejection in rejections:
            findings.append(Finding(ILLEGAL, f"{rejection.message} (rule {rejection.rule})", operand.label, call.name, method=DEVICE_RULES))
        if not rejections:
            note = mosaic.native_tiling_note(block, device)
            if note is not None:
                findings.append(Finding(UNALIGNED, note, operand.label, call.name, method=DEVICE_RULES))
    scratch = 0
    for buffer in call.scratch:
        element_type = xla_element_type(buffer.dtype)
        if buffer.memory_space in mosaic.VMEM_SPACES and element_type is not None:
            scratch += mosaic.buffer_bytes(buffer.shape, element_type, device)
    for rejection in mosaic.vmem_rejections(blocks, scratch, device, call.vmem_limit_bytes):
        findings.append(Finding(VMEM, f"{rejection.message} (rule {rejection.rule})", None, call.name, method=DEVICE_RULES))
    return findings


def _operand_report(operand: Operand, maps: OperandMaps | None) -> OperandReport:
    block: tuple[int | None, ...] = tuple(None if d.kind == SQUEEZED else d.size for d in operand.block)
    pieces: Sequence[str] = [str(p) for p in maps.pieces] if maps is not None else []
    elements: Sequence[str] = [str(m) for m in maps.element_maps] if maps is not None else []
    if maps is None:
        pieces = [f"(memory space {operand.memory_space}: the kernel accesses the whole array)"]
    return OperandReport(operand.label, operand.array_shape, operand.dtype, block, operand.memory_space, tuple(pieces), tuple(elements))

