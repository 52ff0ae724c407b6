"""Program analysis built on per-op maps: fused maps of functions, regions and call-like
ops (``fusion``), folding of runtime variables (``runtime_folding``), whole-module
analysis (``module_analysis``; its results, as text and JSON, in ``results``), operand utilisation and
memory coalescing. Public names load lazily (``dir()`` lists them)."""

from hlo_indexing.lazy import lazy_exports

_EXPORTS = {
    "fusion_indexing": "hlo_indexing.analysis.fusion",
    "fusion_input_to_output_indexing": "hlo_indexing.analysis.fusion",
    "FusionIndexing": "hlo_indexing.analysis.fusion",
    "output_to_input_indexing": "hlo_indexing.analysis.per_op",
    "input_to_output_indexing": "hlo_indexing.analysis.per_op",
    "ModuleIndexing": "hlo_indexing.analysis.results",
    "ComputationMaps": "hlo_indexing.analysis.results",
    "OpMaps": "hlo_indexing.analysis.results",
    "module_indexing": "hlo_indexing.analysis.module_analysis",
    "operand_utilization": "hlo_indexing.analysis.utilization",
    "Utilization": "hlo_indexing.analysis.utilization",
    "coalescing": "hlo_indexing.analysis.coalescing",
    "Coalescing": "hlo_indexing.analysis.coalescing",
    "fold_runtime_variables": "hlo_indexing.analysis.runtime_folding",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
