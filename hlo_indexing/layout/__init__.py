"""Tiled layouts (XLA's ``{1,0:T(8,128)(2,1)}`` notation): parsing, placement, lowering to
indexing maps, numpy pack/unpack and TPU defaults.

Layers: ``types`` (the values) < ``tiling`` (placement) < ``text`` (parsing, which checks
sizes) < ``lowering`` (indexing maps, MLIR) and ``packing`` (numpy) < ``tpu``. The
binding-free ``types``, ``tiling`` and ``text`` are imported here, to install the
delegates of ``Layout``/``Shape``; the other names are imported lazily, so that parsing
and placement do not load the MLIR bindings."""

from __future__ import annotations

from hlo_indexing.layout import text, tiling
from hlo_indexing.layout.types import OPERATIONS
from hlo_indexing.lazy import lazy_exports

OPERATIONS.install(
    parse_layout=text.parse_layout,
    parse_shape=text.parse_shape,
    physical_shape=tiling.physical_shape,
    padded_size=tiling.padded_size,
    linear_index=tiling.linear_index,
    logical_index=tiling.logical_index,
)

_EXPORTS = {
    "COMBINE": "types",
    "Layout": "types",
    "Shape": "types",
    "LayoutParseError": "text",
    "parse_layout": "text",
    "parse_shape": "text",
    "PADDING": "tiling",
    "TilingPlan": "tiling",
    "plan": "tiling",
    "physical_shape": "tiling",
    "padded_size": "tiling",
    "linear_index": "tiling",
    "logical_index": "tiling",
    "linear_offset_map": "lowering",
    "tiled_coordinates_map": "lowering",
    "logical_index_map": "lowering",
    "memref_type": "lowering",
    "memref_type_text": "lowering",
    "physical_memref_type": "lowering",
    "physical_memref_type_text": "lowering",
    "pack": "packing",
    "unpack": "packing",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, {name: f"hlo_indexing.layout.{module}" for name, module in _EXPORTS.items()})
