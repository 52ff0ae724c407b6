"""Symbolic tiling: the tiles of a fused computation, derived from its indexing maps
(XLA's ``SymbolicTile`` and ``SymbolicTileAnalysis``).

Not to be confused with :mod:`hlo_indexing.layout.tiling` (tiled memory layouts). This
package sits above the map algebra, the per-op rules and the fused analysis; nothing
below imports it.

Modules: ``constraints`` (:class:`ConstraintExpression`, a disjunction of conjunctions of
``expr in [lo, hi]`` on tile sizes), ``symbolic_tile`` (:class:`SymbolicTile` of one
indexing map), ``tiled_fusion`` (the symbolic analysis of a fusion, its constraints and
valid tilings), ``tiled_computation`` (the tiles at concrete sizes: sizes, strides and
offsets per program id), ``hlo_source`` (finding fusions in imported HLO text),
``footprint`` (bytes per tile and per output element in each operand's layout),
``ranking`` (every valid tiling ranked under a budget, at a bounded cost per fusion),
``exactness`` (the fraction of each operand tile the fused maps read), ``pallas``
(Pallas grid and ``BlockSpec`` text of tilings whose tiles are blocks) and
``analysis_text`` (an analysis in the text of XLA's ``SymbolicTileAnalysis::ToString()``).

XLA's experimental tiling (tiles as expressions of tile ids ``tid_i``, tile sizes ``ts_i``
and runtime values ``rt_k``): ``tile_expr`` and ``tile`` (:class:`DimTile`, :class:`Tile`),
``propagation``, ``reshape_propagation``, ``convolution`` and ``more_ops`` (a tile of an
op's output to its operands and back), ``tiling_space``, ``tiled_hlo`` (the tiled HLO
computation), ``simplify`` and ``hlo_graph`` (XLA's HLO instruction graph).
"""

from hlo_indexing.lazy import lazy_exports

_EXPORTS = {
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
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
