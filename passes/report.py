"""What the two print passes (``hlo-print-indexing-maps``, ``hlo-print-fused-indexing-maps``)
share: the options ``format`` (``text``: remarks, ``json``: one JSON document per module,
see :mod:`hlo_indexing.analysis.results`) and the JSON output itself (``func``, which
every pass has, is :mod:`hlo_indexing.passes.selection`).

A JSON document is emitted with :meth:`~hlo_indexing.passes.base.Diagnostics.output`;
``hlo-indexing-opt`` prints it apart from the diagnostics on stdout when ``-o`` sends the
IR elsewhere (``-o /dev/null > maps.json``) or in ``--report-file``, else on stderr, where
mlir-opt's reporting passes (``-print-op-stats=json``) print theirs
(:mod:`hlo_indexing.tools.reports`).
"""

from __future__ import annotations

import dataclasses

from hlo_indexing.analysis.module_analysis import module_indexing
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.passes.base import Diagnostics
from hlo_indexing.passes.selection import Selection

FORMATS = ("text", "json")


def format_field() -> str:
    """The ``format`` option of a print pass."""
    return dataclasses.field(
        default="text", metadata={"help": "text (remarks) or json (one JSON document per module)", "choices": FORMATS}
    )


def emit_json(
    module: "ir.Operation",
    diagnostics: Diagnostics,
    *,
    direction: str,
    fused: bool,
    chosen: Selection,
    max_maps: int = 16,
    simplify: bool = True,
) -> None:
    """Emit the JSON document of ``module``'s fused (``fused``) or per-op maps."""
    result = module_indexing(
        module,
        direction,
        fused=fused,
        per_op=not fused,
        max_maps=max_maps,
        within=None if chosen.everything else chosen.contains,
        simplify=simplify,
    )
    diagnostics.output(result.to_json())
