"""The command-line tools: ``hlo-indexing-opt`` (:mod:`.opt`, an ``mlir-opt``-like
driver: :mod:`.driver`, :mod:`.options`, :mod:`.batch`, :mod:`.diagnostics_check`),
``hlo-indexing-layout`` (:mod:`.show_layout`) and ``hlo-indexing-tile-view``
(:mod:`.tile_view`, drawing the data of
:mod:`hlo_indexing.symbolic_tiling.tile_picture`), the last two drawing with
:mod:`.svg_grid`; :mod:`.opt_work` is the driver's work past its help texts. Each
module loads on first access."""

from hlo_indexing.lazy import lazy_exports

_EXPORTS = {
    name: f"hlo_indexing.tools.{name}"
    for name in (
        "batch",
        "diagnostics_check",
        "driver",
        "opt",
        "opt_work",
        "options",
        "show_layout",
        "svg_grid",
        "tile_view",
    )
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
