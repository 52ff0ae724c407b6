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
    "Interval": "hlo_indexing.maps.interval",
    "IndexingMap": "hlo_indexing.maps.indexing_map",
    "Variable": "hlo_indexing.maps.indexing_map",
    "HloIndexingError": "hlo_indexing.errors",
    "ParseError": "hlo_indexing.errors",
    "output_to_input_indexing": "hlo_indexing.analysis.per_op",
    "fusion_indexing": "hlo_indexing.analysis.fusion",
    "analyze": "hlo_indexing.frontend",
    "ModuleIndexing": "hlo_indexing.analysis.module_analysis",
    "fusion_input_to_output_indexing": "hlo_indexing.analysis.fusion",
    "FusionIndexing": "hlo_indexing.analysis.fusion",
    "operand_utilization": "hlo_indexing.analysis.utilization",
    "Utilization": "hlo_indexing.analysis.utilization",
    "coalescing": "hlo_indexing.analysis.coalescing",
    "Coalescing": "hlo_indexing.analysis.coalescing",
    "input_to_output_indexing": "hlo_indexing.analysis.per_op",
    "InstructionIndexing": "hlo_indexing.ops.result",
    "Layout": "hlo_indexing.layout.types",
    "symbolic_tile": "hlo_indexing.symbolic_tiling.symbolic_tile",
    "SymbolicTile": "hlo_indexing.symbolic_tiling.symbolic_tile",
    "NotATile": "hlo_indexing.symbolic_tiling.symbolic_tile",
    "ConstraintExpression": "hlo_indexing.symbolic_tiling.constraints",
    "analyze_fusion": "hlo_indexing.symbolic_tiling.tiled_fusion",
    "analyze_producer_consumer": "hlo_indexing.symbolic_tiling.tiled_fusion",
    "TiledFusion": "hlo_indexing.symbolic_tiling.tiled_fusion",
    "AnalysisFailure": "hlo_indexing.symbolic_tiling.tiled_fusion",
    "TilingError": "hlo_indexing.symbolic_tiling.tiled_fusion",
    "tiled_computation": "hlo_indexing.symbolic_tiling.tiled_computation",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hlo_indexing' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
