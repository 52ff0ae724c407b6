"""Symbolic tiling: the tiles of a fused computation, derived from its indexing maps
(XLA's ``SymbolicTile`` and ``SymbolicTileAnalysis``).

Not to be confused with :mod:`hlo_indexing.layout.tiling` (tiled memory layouts). This
package sits above the map algebra, the per-op rules and the fused analysis; nothing
below imports it.

Modules: ``constraints`` (:class:`ConstraintExpression`, a disjunction of conjunctions of
``expr in [lo, hi]`` on tile sizes), ``symbolic_tile`` (:class:`SymbolicTile` of one
indexing map), ``tiled_fusion`` (the analysis of a fusion, its valid tilings and the
tiled computation for concrete tile sizes), split in ``tiled_fusion`` (the symbolic
analysis, its valid tilings) and ``tiled_computation`` (tiles at concrete sizes);
``hlo_source`` finds fusions in imported HLO text.
"""
