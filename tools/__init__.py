"""The command-line tools: ``hlo-indexing-opt`` (:mod:`.opt`, an ``mlir-opt``-like
driver: :mod:`.driver`, :mod:`.options`, :mod:`.batch`, :mod:`.diagnostics_check`) and
``hlo-indexing-layout`` (:mod:`.show_layout`). Each module loads on first access."""

from hlo_indexing.lazy import lazy_exports

_EXPORTS = {
    name: f"hlo_indexing.tools.{name}" for name in ("batch", "diagnostics_check", "driver", "opt", "options", "show_layout")
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
