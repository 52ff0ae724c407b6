"""Name -> pass class, imported lazily so that ``--help`` and lit stay fast.

Every entry's key must equal the class's ``name`` (a test checks it)."""

from __future__ import annotations

import importlib

from hlo_indexing.passes.base import ModulePass

#: pass name -> "module:ClassName" (module relative to ``hlo_indexing.passes``)
PASSES: dict[str, str] = {
    "hlo-lower-tiled-layouts": "lower_tiled_layouts:LowerTiledLayouts",
    "hlo-attach-indexing-maps": "attach_indexing_maps:AttachIndexingMaps",
    "hlo-print-indexing-maps": "print_indexing_maps:PrintIndexingMaps",
    "hlo-simplify-indexing-maps": "simplify_maps:SimplifyIndexingMaps",
    "hlo-fuse-indexing-maps": "fusion_maps:FuseIndexingMaps",
    "hlo-print-fusion-indexing": "fusion_maps:PrintFusionIndexing",
}


def pass_names() -> list[str]:
    return sorted(PASSES)


def lookup(name: str) -> type[ModulePass] | None:
    """The pass class registered under ``name``, or None."""
    target = PASSES.get(name)
    if target is None:
        return None
    module_name, class_name = target.split(":")
    module = importlib.import_module(f"hlo_indexing.passes.{module_name}")
    return getattr(module, class_name)
