"""The command-line tools: ``hlo-indexing-opt`` (:mod:`.opt`, an ``mlir-opt``-like
driver: :mod:`.driver`, :mod:`.options`, :mod:`.batch`, :mod:`.diagnostics_check`),
``hlo-indexing-layout`` (:mod:`.show_layout`) and ``hlo-indexing-tile-view``
(:mod:`.tile_view`, its data :mod:`.tile_picture`), the last two drawing with
:mod:`.svg_grid`. Each module loads on first access."""

from hlo_indexing.lazy import lazy_exports

_EXPORTS = {
    name: f"hlo_indexing.tools.{name}"
    for name in (
        "batch",
        "diagnostics_check",
        "driver",
        "opt",
        "options",
        "show_layout",
        "svg_grid",
        "tile_picture",
        "tile_view",
    )
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
