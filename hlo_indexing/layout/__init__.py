"""Tiled layouts (XLA's ``{1,0:T(8,128)(2,1)}`` notation): parsing, placement, lowering to
indexing maps, numpy pack/unpack and TPU defaults.

Layers: ``tiling`` (placement) and ``text`` (the notation's parser) < ``types`` (the
values ``Layout`` and ``Shape``, whose parse and placement methods are built on the two
below) < ``lowering`` (indexing maps, MLIR) and ``packing`` (numpy) < ``tpu``. The names
are imported lazily, so that parsing and placement do not load the MLIR bindings."""

from __future__ import annotations

from hlo_indexing.lazy import lazy_exports

_EXPORTS = {
    "COMBINE": "tiling",
    "Layout": "types",
    "Shape": "types",
    "LayoutParseError": "text",
    "parse_layout": "types",
    "parse_shape": "types",
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
