"""The map algebra: intervals, affine expressions, :class:`IndexingMap` and the operations
on it (text, attributes, composition and clean-up, the range-aware simplifier).

Bottom to top: ``interval`` and ``affine_expr`` (data and evaluation), ``variables``
(a map's parts), ``memo`` (the one memo of map results), ``linear_form``,
``expr_simplifier`` and ``simplifier`` (range-aware simplification of a map's parts),
``text`` (XLA's text format of a map's parts), ``indexing_map`` (the data type, whose
``parse``, ``str()`` and ``simplify()`` are built on the modules below it), then the
free functions on maps: ``algebra`` (composition, removal and conversion of variables)
and ``attributes`` (the MLIR attribute form)."""

from hlo_indexing.maps.algebra import compose
from hlo_indexing.maps.indexing_map import IndexingMap, Variable, display_text, parse_indexing_map, print_indexing_map
from hlo_indexing.maps.interval import Interval

__all__ = [
    "IndexingMap",
    "Interval",
    "Variable",
    "compose",
    "display_text",
    "parse_indexing_map",
    "print_indexing_map",
]
