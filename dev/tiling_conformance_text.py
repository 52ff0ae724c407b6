"""Checker of the ``tiling_analysis`` records of subkind ``to_string``: our analysis in the
text of XLA's ``SymbolicTileAnalysis::ToString()``
(:func:`hlo_indexing.symbolic_tiling.analysis_text.analysis_to_string`), compared
exactly.

The instruction names and HLO text are XLA's own: the record's HLO parsed by XLA's parser
(:func:`hlo_indexing.dialect_glue.hlo_import.parse_xla_hlo_module`), whose names are
uniquified module-wide (an ENTRY parameter ``p0`` parsed after a fusion's ``p0`` is
``p0.1``). As XLA's fusion adaptor does, the parameters of a fusion computation called
by a fusion instruction are that instruction's operands."""

from __future__ import annotations

import difflib
import re

from hlo_indexing.dialect_glue.hlo_import import parse_xla_hlo_module
from hlo_indexing.symbolic_tiling.analysis_text import analysis_to_string
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, TiledFusion, TiledNode

Result = tuple[str, str]


def check_to_string(record: dict, analysis: TiledFusion | AnalysisFailure) -> Result:
    """Compare ``analysis`` (of the record's computation) printed as XLA prints it with
    ``expected.to_string``."""
    if isinstance(analysis, AnalysisFailure):
        return "fail", f"analysis failed: {analysis.reason}"
    name = record["fusion"].get("computation")
    if name is None:
        return "fail", "to_string is checked on a computation only"
    describe = _describer(record["hlo"], f"{record['id']}.hlo", name)
    actual = analysis_to_string(analysis, describe)
    expected = record["expected"]["to_string"]
    if actual == expected:
        return "pass", ""
    diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(), "expected", "ours", lineterm="", n=1)
    return "fail", "text differs: " + " | ".join(list(diff)[2:12])


def _describer(hlo: str, filename: str, computation: str):  # noqa: ANN202 - a Describe callable
    """``node -> (XLA name, XLA text)`` for the nodes of ``computation``'s analysis."""
    module = parse_xla_hlo_module(hlo, filename)
    instructions: dict[str, dict[str, object]] = {}
    caller_operands: list[object] | None = None
    calls = re.compile(rf"calls=%{re.escape(computation)}(?![\w.\-])")
    for c in module.computations():  # type: ignore[attr-defined]
        instructions[c.name] = {i.name: i for i in c.instructions()}
        for i in c.instructions():
            if caller_operands is None and calls.search(i.to_string()):
                caller_operands = list(i.operands())
    own = instructions.get(computation, {})
    parameters = {
        int(m.group(1)): i for i in own.values() if (m := re.search(r" parameter\((\d+)\)", i.to_string())) is not None  # type: ignore[attr-defined]
    }

    def describe(node: TiledNode) -> tuple[str, str]:
        number = node.parameter_number
        if number is not None:
            found = caller_operands[number] if caller_operands is not None else parameters[number]
        else:
            found = own.get(node.name) or next(d[node.name] for d in instructions.values() if node.name in d)
        return found.name, found.to_string()  # type: ignore[attr-defined]

    return describe
