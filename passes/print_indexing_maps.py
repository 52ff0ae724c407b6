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
``format=json`` prints one JSON document instead (:mod:`hlo_indexing.passes.report`;
with ``physical=``, of the physical maps). Both render one
:func:`~hlo_indexing.analysis.module_analysis.module_indexing` result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.passes.attach_indexing_maps import PerOpMapsPass
from hlo_indexing.passes.base import Diagnostics
from hlo_indexing.passes.report import format_field, print_maps


@dataclass(frozen=True)
class PrintIndexingMaps(PerOpMapsPass):
    """See the module docstring."""

    name: ClassVar[str] = "hlo-print-indexing-maps"
    description: ClassVar[str] = "Emit a remark with each HLO op's per-op indexing maps (XLA text)"

    format: str = format_field()

    def run(self, module: "ir.Operation", diagnostics: Diagnostics) -> None:
        """Emit a remark per result (operand) of every HLO op with its per-op maps in the
        chosen direction (or the JSON document); an op whose analysis fails gets an error
        diagnostic (with ``format=json``, an ``error`` in its entry)."""
        print_maps(module, diagnostics, self.func, self.format, direction=self.direction, fused=False,
                   simplify=self.simplify, physical=self.physical)
