"""The pass ``hlo-audit-tilings{device=h100 format=text func=}``: XLA's own tiling choice
for every fusion of an XLA GPU HLO dump that carries a ``block_level_fusion_config``,
audited on the device (:func:`hlo_indexing.cost_model.audit.audit_tilings`): one remark
per fusion::

    fusion.3: XLA's tiling [1, 911] (2 warps, 0 stages) is legal; covers its output
    exactly once; estimated 5 us; the best found [4, 911] (4 warps, 1 stage): 4.96 us
    (1.01x); slower than the best found: +48.9 ns: compute 156 ns longer (2 warps per
    block vs 4)

(a warning when the choice is not legal, naming the rules it breaks and why), or with
``format=json`` one document per module, verbatim on stderr:
``{"schema": "hlo-indexing/tiling-audit/1", "device": {...}, "fusions": [...]}``, each
fusion as :func:`~hlo_indexing.cost_model.audit.audit_json` writes it
(``hlo_indexing/schema/tiling-audit.schema.json``;
:func:`~hlo_indexing.cost_model.audit.module_audit` gives it in Python). Fusions without
a block-level config are not XLA Triton fusions and are left out; a module with none
gets one remark saying so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import ClassVar

from hlo_indexing.cost_model.audit import audit_document, audit_tilings
from hlo_indexing.devices.registry import device as select_device
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.passes.base import Diagnostics, ModulePass
from hlo_indexing.passes.report import format_field
from hlo_indexing.passes.selection import func_field, selection
from hlo_indexing.symbolic_tiling.hlo_source import instruction_name


@dataclass(frozen=True)
class AuditTilings(ModulePass):
    """See the module docstring."""

    name: ClassVar[str] = "hlo-audit-tilings"
    description: ClassVar[str] = (
        "Audit XLA's block-level tiling of each GPU fusion: legal, coverage, time against the best found"
    )

    device: str = field(default="h100", metadata={
        "help": "the GPU the dump was compiled for (a bundled name or a JSON description file)"})
    format: str = format_field()
    func: str = func_field()

    def run(self, module: "ir.Operation", diagnostics: Diagnostics) -> None:
        """Audit every fusion with a block-level config (see the module docstring); an
        unknown device or a TPU is an error at the module."""
        chosen = selection(module, self.func, diagnostics)
        if chosen is None:
            return
        try:
            target = select_device(self.device)
            fusions = _fusions_by_name(module)
            audits = [(audit, fusions.get(audit.name)) for audit in audit_tilings(module, target)]
        except HloIndexingError as exc:
            diagnostics.error(module.location, str(exc) if exc.location else exc.message)
            return
        audits = [(audit, op) for audit, op in audits if chosen.everything or (op is not None and chosen.contains(op))]
        if self.format == "json":
            diagnostics.output(json.dumps(audit_document(target, [audit for audit, _ in audits]), indent=2))
            return
        if not audits:
            diagnostics.remark(module.location, "no fusion carries a block_level_fusion_config (XLA's Triton tiling)")
        for audit, op in audits:
            location = op.location if op is not None else module.location
            if audit.legal:
                diagnostics.remark(location, str(audit))
            else:
                diagnostics.warning(location, str(audit))


def _fusions_by_name(module: "ir.Operation") -> dict[str, "ir.Operation"]:
    """Each ``mhlo.fusion`` under the HLO instruction name the audit reports (the first
    of a name), found in one walk."""
    found: dict[str, ir.Operation] = {}
    for _, op in computations(module):
        name = instruction_name(op) if op.name == "mhlo.fusion" else ""
        if name:
            found.setdefault(name, op)
    return found
