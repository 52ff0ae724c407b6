"""hlo-indexing: XLA-style indexing maps and tiled layouts for StableHLO/MHLO.

The public API is re-exported here lazily, so that ``import hlo_indexing`` stays cheap
(``dir()`` and ``help()`` list every name). Start with :func:`analyze` (a JAX
``Lowered`` object, an MLIR module, MLIR/HLO text or a path -> :class:`ModuleIndexing`);
per op: :func:`output_to_input_indexing`, :func:`input_to_output_indexing`; per
computation: :func:`fusion_indexing`; maps: :class:`IndexingMap`; tilings of a fusion:
:func:`analyze_fusion`, :func:`rank_tilings` (``device=``: legal tilings on a GPU or TPU,
fastest first by its cost model, :mod:`hlo_indexing.cost_model`), :func:`assess_tiling`,
:func:`module_tilings` (the tilings JSON),
:func:`tile_picture` / :func:`render_tile_svg` (an SVG of a tile); Pallas kernels checked
before they run: :func:`check_pallas` (jax needed); tiled layouts:
:mod:`hlo_indexing.layout` (``parse_layout``, ``linear_offset_map``,
``tiled_coordinates_map``, ``pack``); devices: :func:`device` (``"h100"``,
``"tpu-v5e"``, a JSON file), :class:`GpuDevice`, :class:`TpuDevice`; errors:
:class:`HloIndexingError` and its subclasses.

Subpackages: ``maps`` (the map algebra), ``ops`` (per-op rules), ``analysis`` (fused
maps, utilisation, coalescing, JSON), ``layout``, ``pallas`` (the Pallas checker),
``passes`` (MLIR passes),
``dialect_glue`` (the MLIR bindings), ``tools`` (the command-line tools).
"""

from __future__ import annotations

from typing import Any as _Any

from hlo_indexing.lazy import lazy_exports as _lazy_exports
from hlo_indexing.version import installed_version as _installed_version

_EXPORTS = {
    "parse_module": "hlo_indexing.dialect_glue.parsing",
    "make_context": "hlo_indexing.dialect_glue.context",
    "default_context": "hlo_indexing.dialect_glue.context",
    "Interval": "hlo_indexing.maps.interval",
    "IndexingMap": "hlo_indexing.maps.indexing_map",
    "Variable": "hlo_indexing.maps.indexing_map",
    "HloIndexingError": "hlo_indexing.errors",
    "ParseError": "hlo_indexing.errors",
    "InputNotFoundError": "hlo_indexing.errors",
    "InvalidArgumentError": "hlo_indexing.errors",
    "IndexOutOfRangeError": "hlo_indexing.errors",
    "UnsupportedError": "hlo_indexing.errors",
    "output_to_input_indexing": "hlo_indexing.analysis.per_op",
    "fusion_indexing": "hlo_indexing.analysis.fusion",
    "analyze": "hlo_indexing.frontend",
    "ModuleIndexing": "hlo_indexing.analysis.results",
    "fusion_input_to_output_indexing": "hlo_indexing.analysis.fusion",
    "grouped_output_to_input_indexing": "hlo_indexing.analysis.grouped",
    "group_indexing_maps_by_producers": "hlo_indexing.analysis.grouped",
    "epilogue_input_to_output_indexing": "hlo_indexing.analysis.grouped",
    "GroupedIndexing": "hlo_indexing.analysis.grouped",
    "physical_output_to_input_indexing": "hlo_indexing.analysis.physical",
    "physical_input_to_output_indexing": "hlo_indexing.analysis.physical",
    "physical_fusion_indexing": "hlo_indexing.analysis.physical",
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
    "TilingError": "hlo_indexing.errors",
    "tiled_computation": "hlo_indexing.symbolic_tiling.tiled_computation",
    "tiling_footprint": "hlo_indexing.symbolic_tiling.footprint",
    "rank_tilings": "hlo_indexing.cost_model.ranking",
    "DeviceRanking": "hlo_indexing.cost_model.ranking",
    "assess_tiling": "hlo_indexing.cost_model.backends",
    "device": "hlo_indexing.devices.registry",
    "GpuDevice": "hlo_indexing.devices.types",
    "TpuDevice": "hlo_indexing.devices.types",
    "Footprint": "hlo_indexing.symbolic_tiling.footprint",
    "Ranking": "hlo_indexing.symbolic_tiling.ranking",
    "OperandFootprint": "hlo_indexing.symbolic_tiling.footprint",
    "FootprintError": "hlo_indexing.symbolic_tiling.footprint",
    "with_exactness": "hlo_indexing.symbolic_tiling.footprint",
    "tiling_exactness": "hlo_indexing.symbolic_tiling.exactness",
    "TilingExactness": "hlo_indexing.symbolic_tiling.exactness",
    "OperandExactness": "hlo_indexing.symbolic_tiling.exactness",
    "pallas_blockspecs": "hlo_indexing.symbolic_tiling.pallas",
    "block_index_maps": "hlo_indexing.symbolic_tiling.pallas",
    "NotABlockError": "hlo_indexing.symbolic_tiling.pallas",
    "PallasBlockSpecs": "hlo_indexing.symbolic_tiling.pallas",
    "module_tilings": "hlo_indexing.cost_model.device_report",
    "tile_picture": "hlo_indexing.symbolic_tiling.tile_picture",
    "render_tile_svg": "hlo_indexing.tools.tile_view",
    "check_pallas": "hlo_indexing.pallas.check",
    "PallasReport": "hlo_indexing.pallas.report",
}

__all__ = sorted(_EXPORTS)
_exported, _listed = _lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> _Any:
    """The lazy public names, and ``__version__`` (read from the installed metadata once)."""
    if name == "__version__":
        return _installed_version() or "0+unknown"  # 0+unknown: a source tree never installed
    return _exported(name)


def __dir__() -> list[str]:
    return sorted({*_listed(), "__version__"})
