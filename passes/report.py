"""What the two print passes (``hlo-print-indexing-maps``, ``hlo-print-fused-indexing-maps``)
share: the option ``format`` (``text``: remarks, ``json``: one JSON document per module)
and the printing itself, of one :func:`~hlo_indexing.analysis.module_analysis.module_indexing`
result in either rendering of :mod:`hlo_indexing.analysis.results` (``func``, which
every pass has, is :mod:`hlo_indexing.passes.selection`).

Text: each op's or computation's remarks are emitted as soon as it is analysed, at its
location; a part that failed is an error there (:meth:`Diagnostics.failure`). JSON: the
document is emitted with :meth:`~hlo_indexing.passes.base.Diagnostics.output`, failures
in it (``error`` fields), not as diagnostics; ``hlo-indexing-opt`` prints it apart from
the diagnostics on stdout when ``-o`` sends the IR elsewhere (``-o /dev/null >
maps.json``) or in ``--report-file``, else on stderr, where mlir-opt's reporting passes
(``-print-op-stats=json``) print theirs (:mod:`hlo_indexing.tools.reports`).
"""

from __future__ import annotations

import dataclasses

from hlo_indexing.analysis.fusion import DEFAULT_MAX_MAPS
from hlo_indexing.analysis.module_analysis import module_indexing
from hlo_indexing.analysis.results import ComputationMaps, Failure, OpMaps
from hlo_indexing.analysis.utilization import DEFAULT_MAX_POINTS
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.passes.base import Diagnostics
from hlo_indexing.passes.selection import selection

FORMATS = ("text", "json")


def format_field() -> str:
    """The ``format`` option of a print pass."""
    return dataclasses.field(
        default="text", metadata={"help": "text (remarks) or json (one JSON document per module)", "choices": FORMATS}
    )


def print_maps(
    module: "ir.Operation",
    diagnostics: Diagnostics,
    func: str,
    output_format: str,
    *,
    direction: str,
    fused: bool,
    max_maps: int = DEFAULT_MAX_MAPS,
    simplify: bool = True,
    physical: str = "none",
    analyses: bool = False,
    max_points: int = DEFAULT_MAX_POINTS,
) -> None:
    """Analyse what ``func`` selects in ``module`` once (its fused maps when ``fused``,
    else its per-op maps; the other options as :func:`module_indexing` takes them) and
    print the result in ``output_format`` (see the module docstring)."""
    chosen = selection(module, func, diagnostics)
    if chosen is None:
        return
    text = output_format == "text"
    try:
        result = module_indexing(
            module,
            direction,
            fused=fused,
            per_op=not fused,
            max_maps=max_maps,
            within=None if chosen.everything else chosen.contains,
            simplify=simplify,
            physical=physical,
            analyses=analyses,
            max_points=max_points,
            on_result=(lambda found: _emit_report(found, diagnostics)) if text else None,
        )
    except HloIndexingError as exc:
        diagnostics.error(module.location, exc.message)
        return
    if not text:
        diagnostics.output(result.to_json())


def _emit_report(found: ComputationMaps | OpMaps, diagnostics: Diagnostics) -> None:
    """The text rendering of one computation or op as diagnostics at its location:
    remarks, and an error for each failure."""
    location = found.operation.location
    for item in found.report():
        if isinstance(item, Failure):
            diagnostics.failure(location, item.error, item.context)
        else:
            diagnostics.remark(location, item)
