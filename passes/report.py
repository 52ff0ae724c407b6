"""What the two print passes (``hlo-print-indexing-maps``, ``hlo-print-fused-indexing-maps``)
share: the options ``format`` (``text``: remarks, ``json``: one JSON document per module,
see :mod:`hlo_indexing.analysis.results`) and ``func`` (report only that function and
what is nested in it), and the JSON output itself.

A JSON document is emitted with :meth:`~hlo_indexing.passes.base.Diagnostics.output`;
``hlo-indexing-opt`` prints it apart from the diagnostics on stdout when ``-o`` sends the
IR elsewhere (``-o /dev/null > maps.json``) or in ``--report-file``, else on stderr, where
mlir-opt's reporting passes (``-print-op-stats=json``) print theirs
(:mod:`hlo_indexing.tools.reports`).
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import Any

from hlo_indexing.analysis.module_analysis import module_indexing
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.locations import enclosing_function
from hlo_indexing.passes.base import Diagnostics

FORMATS = ("text", "json")


def format_field() -> Any:
    """The ``format`` option of a print pass."""
    return dataclasses.field(
        default="text", metadata={"help": "text (remarks) or json (one JSON document per module)", "choices": FORMATS}
    )


def func_field() -> Any:
    """The ``func`` option of a print pass."""
    return dataclasses.field(
        default="", metadata={"help": "report only this function and what is nested in it; empty: all"}
    )


def selected_function(module: "ir.Operation", name: str, diagnostics: Diagnostics) -> bool:
    """True when ``name`` is empty or names a ``func.func`` of ``module``; otherwise an
    error at the module, with the closest names."""
    if not name:
        return True
    names: list[str] = []

    def visit(op: "ir.Operation") -> "ir.WalkResult":
        if op.operation.name == "func.func":
            names.append(enclosing_function(op.operation) or "")
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    if name.removeprefix("@") in names:
        return True
    close = difflib.get_close_matches(name.removeprefix("@"), names, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f"; functions: {', '.join(names) or 'none'}"
    diagnostics.error(module.location, f"option func: no function '{name}' in the module{hint}")
    return False


def emit_json(
    module: "ir.Operation",
    diagnostics: Diagnostics,
    *,
    direction: str,
    fused: bool,
    function: str,
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
        function=function.removeprefix("@") or None,
        simplify=simplify,
    )
    diagnostics.output(result.to_json())
