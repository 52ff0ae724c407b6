"""The indexing maps of a whole module: :class:`ModuleIndexing`, the result of
:func:`hlo_indexing.analyze` (see :mod:`hlo_indexing.frontend` for what it accepts).

It holds the fused maps of every ``func.func`` with a body and every ``mhlo.fusion``
(:class:`ComputationMaps`, one :class:`~hlo_indexing.analysis.fusion.FusionIndexing` per
result, or per argument for ``direction="input-to-output"``), and the per-op maps of every
HLO op (:class:`OpMaps`), with a readable ``str()``; :func:`module_indexing` computes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hlo_indexing.analysis.fusion import (
    DEFAULT_MAX_MAPS,
    FusionIndexing,
    fusion_indexing,
    fusion_input_to_output_indexing,
)
from hlo_indexing.analysis.per_op import hlo_ops, indexings
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.parsing import location_of
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.maps.text import display_text
from hlo_indexing.ops.result import InstructionIndexing


@dataclass(frozen=True)
class ComputationMaps:
    """Fused maps of one computation (``@name`` of a ``func.func``, or ``mhlo.fusion``).

    ``maps[i]`` is the :class:`FusionIndexing` of result ``i`` (output-to-input: one map
    set per argument) or of argument ``i`` (input-to-output: one map set per result).
    ``error`` says why the maps could not be computed (``maps`` is then empty)."""

    name: str
    location: str
    maps: tuple[FusionIndexing, ...]
    direction: str
    error: str | None = None

    def lines(self) -> list[str]:
        """The printed form: one line per map (``name result i -> arg k: map``), a line
        per over-approximated result, or one error line."""
        if self.error is not None:
            return [f"{self.name}: error: {self.error}"]
        source, target = ("result", "arg") if self.direction == "output-to-input" else ("arg", "result")
        lines = []
        for i, fused in enumerate(self.maps):
            for k, maps in enumerate(fused.maps):
                texts = sorted(display_text(m) for m in maps) or ["no dependence"]
                lines += [f"{self.name} {source} {i} -> {target} {k}: {text}" for text in texts]
            if fused.over_approximated:
                lines.append(f"{self.name} {source} {i}: over-approximated ({', '.join(fused.over_approximated)})")
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class OpMaps:
    """Per-op maps of one HLO op: ``indexing[i]`` for its result ``i`` (output-to-input)
    or operand ``i`` (input-to-output)."""

    op: str
    location: str
    indexing: tuple[InstructionIndexing, ...]
    direction: str

    def lines(self) -> list[str]:
        """The printed form: a header line per result (operand) then its maps, indented."""
        what = "result" if self.direction == "output-to-input" else "operand"
        lines = []
        for i, indexing in enumerate(self.indexing):
            lines.append(f"{self.op} at {self.location}, {what} {i}:")
            lines += [f"  {line}" for line in str(indexing).splitlines()] or ["  (no operands)"]
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class ModuleIndexing:
    """The result of :func:`analyze`; ``module`` is the ``builtin.module`` analysed (kept
    alive with the result)."""

    computations: tuple[ComputationMaps, ...]
    ops: tuple[OpMaps, ...]
    direction: str
    module: Any

    def computation(self, name: str) -> ComputationMaps:
        """The computation called ``name`` (``"@main"`` or ``"main"``)."""
        wanted = name if name.startswith("@") or "." in name else f"@{name}"
        for computation in self.computations:
            if computation.name == wanted:
                return computation
        raise KeyError(f"no computation {wanted!r}; have {[c.name for c in self.computations]}")

    def __str__(self) -> str:
        lines = [line for computation in self.computations for line in computation.lines()]
        if self.ops:
            lines.append(f"per-op maps ({self.direction}):")
            lines += [f"  {line}" for op in self.ops for line in op.lines()]
        return "\n".join(lines)


def _short_location(op: Any, buffer: str | None) -> str:
    where = location_of(op.location, buffer)
    return str(where) if where is not None else str(op.location)


def module_indexing(
    module: ir.Operation,
    direction: str,
    *,
    fused: bool = True,
    per_op: bool = True,
    max_maps: int = DEFAULT_MAX_MAPS,
    buffer: str | None = None,
) -> ModuleIndexing:
    """The fused maps of every computation (``fused``) and the per-op maps of every HLO op
    (``per_op``) of ``module``; ``buffer`` names the text it was parsed from (for
    locations)."""
    computations_found = tuple(_computation_maps(module, direction, max_maps, buffer)) if fused else ()
    ops = tuple(_op_maps(module, direction, buffer)) if per_op else ()
    return ModuleIndexing(computations_found, ops, direction, module)


def _computation_maps(module: Any, direction: str, max_maps: int, buffer: str | None):
    for name, op in computations(module):
        block = op.regions[0].blocks[0]
        try:
            if direction == "output-to-input":
                count = len(list(block.operations)[-1].operands)
                maps = tuple(fusion_indexing(op, r, max_maps=max_maps) for r in range(count))
            else:
                count = len(block.arguments)
                maps = tuple(fusion_input_to_output_indexing(op, a, max_maps=max_maps) for a in range(count))
        except (HloIndexingError, ValueError, NotImplementedError) as exc:
            yield ComputationMaps(name, _short_location(op, buffer), (), direction, str(exc))
            continue
        yield ComputationMaps(name, _short_location(op, buffer), maps, direction)


def _op_maps(module: Any, direction: str, buffer: str | None):
    for op in hlo_ops(module):
        yield OpMaps(op.name, _short_location(op, buffer), tuple(indexings(op, direction, simplify=True)), direction)
