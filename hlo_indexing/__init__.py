"""hlo-indexing: XLA-style indexing maps and tiled layouts for StableHLO/MHLO.

The public API is re-exported here lazily, so that ``import hlo_indexing`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "parse_module": "hlo_indexing.dialect_glue.parsing",
    "make_context": "hlo_indexing.dialect_glue.context",
    "default_context": "hlo_indexing.dialect_glue.context",
    "Interval": "hlo_indexing.interval",
    "IndexingMap": "hlo_indexing.indexing_map",
    "Variable": "hlo_indexing.indexing_map",
    "HloIndexingError": "hlo_indexing.errors",
    "ParseError": "hlo_indexing.errors",
    "output_to_input_indexing": "hlo_indexing.op_indexing.analysis",
    "fusion_indexing": "hlo_indexing.fusion",
    "analyze": "hlo_indexing.module_analysis",
    "ModuleIndexing": "hlo_indexing.module_analysis",
    "fusion_input_to_output_indexing": "hlo_indexing.fusion",
    "FusionIndexing": "hlo_indexing.fusion",
    "operand_utilization": "hlo_indexing.utilization",
    "Utilization": "hlo_indexing.utilization",
    "coalescing": "hlo_indexing.coalescing_analysis",
    "Coalescing": "hlo_indexing.coalescing_analysis",
    "input_to_output_indexing": "hlo_indexing.op_indexing.analysis",
    "InstructionIndexing": "hlo_indexing.op_indexing.result",
    "Layout": "hlo_indexing.layout.layout_text",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hlo_indexing' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
