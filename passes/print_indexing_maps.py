"""The pass ``hlo-print-indexing-maps``: a remark per HLO op with its per-op indexing
maps in XLA's text (for lit tests and for reading).

Same ops and options as ``hlo-attach-indexing-maps``. Each remark is, for
``direction=output-to-input``, one block per result::

    output-to-input indexing of result #0 (stablehlo.add):
    operand id = 0 (d0) -> (d0), domain: d0 in [0, 9]
    operand id = 1 (d0) -> (d0), domain: d0 in [0, 9]

and for ``direction=input-to-output`` one block per operand, ``input-to-output indexing
of operand #k (op):`` followed by one ``operand id = r`` line per result (XLA's wording).
An op imported from HLO is named after its instruction: ``result #0 (stablehlo.add
add.3)``. Remarks come in source order; ``func=NAME`` keeps the ops of one function or HLO
instruction (:mod:`~hlo_indexing.passes.selection`) and
``format=json`` prints one JSON document instead (:mod:`hlo_indexing.passes.report`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from hlo_indexing.analysis.per_op import hlo_ops
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.locations import location_name, source_order_key
from hlo_indexing.direction import Direction
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.passes.attach_indexing_maps import PerOpMapsPass, per_op_maps
from hlo_indexing.passes.base import Diagnostics
from hlo_indexing.passes.report import emit_json, format_field
from hlo_indexing.passes.selection import selection


@dataclass(frozen=True)
class PrintIndexingMaps(PerOpMapsPass):
    """See the module docstring."""

    name: ClassVar[str] = "hlo-print-indexing-maps"
    description: ClassVar[str] = "Emit a remark with each HLO op's per-op indexing maps (XLA text)"

    format: str = format_field()

    def run(self, module: "ir.Operation", diagnostics: Diagnostics) -> None:
        """Emit a remark per result (operand) of every HLO op with its per-op maps in the
        chosen direction (or the JSON document); an op whose analysis fails gets an error
        diagnostic."""
        chosen = selection(module, self.func, diagnostics)
        if chosen is None:
            return
        if self.format == "json":
            if self.physical != "none":
                diagnostics.error(module.location, "format=json prints logical maps only: drop physical= or use text")
                return
            try:
                emit_json(module, diagnostics, direction=self.direction, fused=False, chosen=chosen, simplify=self.simplify)
            except HloIndexingError as exc:
                diagnostics.error(module.location, exc.message)
            return
        what = "result" if self.direction == Direction.OUTPUT_TO_INPUT else "operand"
        for op in sorted(hlo_ops(module), key=lambda op: source_order_key(op.location)):
            if not chosen.contains(op):
                continue
            instruction = location_name(op.location)
            label = f"{op.name} {instruction}" if instruction else op.name
            try:
                per_index = per_op_maps(op, self.direction, self.simplify, self.physical)
            except HloIndexingError as exc:
                diagnostics.failure(op.location, exc)
                continue
            blocks = [
                f"{self.direction} indexing of {what} #{k} ({label}):\n{indexing}".rstrip()
                for k, indexing in enumerate(per_index)
            ]
            diagnostics.remark(op.location, "\n".join(blocks) if blocks else f"{label}: no {what}s")
