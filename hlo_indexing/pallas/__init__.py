"""Checking Pallas kernels before they run: :func:`check_pallas` traces a function,
reads every ``pallas_call`` (grid, block shapes, index maps, dimension semantics), turns
each operand's index map into indexing maps from the grid to blocks and elements, and
reports races, uncovered outputs, out-of-range and partial blocks, non-consecutive
revisits and, for a TPU, blocks Mosaic rejects or that overflow VMEM.

Modules, bottom to top: ``jax_support`` (the lazy jax import), ``calls`` (the
``pallas_call`` s of a trace), ``cases`` and ``index_maps`` (index-map jaxprs as
piecewise-affine values), ``operand_maps`` (their IndexingMaps), ``report`` (findings),
``checks`` (the questions, decided on the maps), ``check`` (:func:`check_pallas`),
``cli`` (``python -m hlo_indexing.pallas FILE.py:FUNC``). jax is needed only here, and
imported on first use.
"""

from hlo_indexing.lazy import lazy_exports

_EXPORTS = {
    "check_pallas": "hlo_indexing.pallas.check",
    "PallasReport": "hlo_indexing.pallas.report",
    "CallReport": "hlo_indexing.pallas.report",
    "OperandReport": "hlo_indexing.pallas.report",
    "Finding": "hlo_indexing.pallas.report",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
