"""Tiled layouts (XLA's ``{1,0:T(8,128)(2,1)}`` notation): parsing, placement, lowering to
indexing maps, numpy pack/unpack and TPU defaults. Names are imported lazily, so that
parsing and placement do not load the MLIR bindings."""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "COMBINE": "text",
    "Layout": "text",
    "LayoutParseError": "text",
    "Shape": "text",
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hlo_indexing.layout' has no attribute {name!r}")
    return getattr(importlib.import_module(f"hlo_indexing.layout.{module}"), name)
