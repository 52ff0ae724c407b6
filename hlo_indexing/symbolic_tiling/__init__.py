"""Symbolic tiling: the tiles of a fused computation, derived from its indexing maps
(XLA's ``SymbolicTile`` and ``SymbolicTileAnalysis``).

Not to be confused with :mod:`hlo_indexing.layout.tiling` (tiled memory layouts). This
package sits above the map algebra, the per-op rules and the fused analysis; nothing
below imports it.

Modules: ``constraints`` (:class:`ConstraintExpression`, a disjunction of conjunctions of
``expr in [lo, hi]`` on tile sizes), ``symbolic_tile`` (:class:`SymbolicTile` of one
indexing map), ``tiled_fusion`` (the symbolic analysis of a fusion, its constraints and
valid tilings), ``tiled_computation`` (the tiles at concrete sizes: sizes, strides and
offsets per program id) and ``hlo_source`` (finding fusions in imported HLO text).
"""
