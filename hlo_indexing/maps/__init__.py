"""The map algebra: intervals, affine expressions, :class:`IndexingMap` and the operations
on it (text, attributes, composition and clean-up, the range-aware simplifier).

Bottom to top: ``interval`` and ``affine_expr`` (data and evaluation), ``indexing_map``
(the data type), ``text`` and ``attributes`` (XLA text and MLIR attributes), ``algebra``
(composition, removal and conversion of variables) and ``simplifier``. The convenience
methods of :class:`~hlo_indexing.maps.indexing_map.IndexingMap` (``parse``, ``simplify``,
``compose``, ...) are thin delegates to those modules, installed below (see
:mod:`hlo_indexing.delegates`)."""

from hlo_indexing.maps import algebra, attributes, simplifier, text
from hlo_indexing.maps.algebra import compose
from hlo_indexing.maps.indexing_map import OPERATIONS, IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.simplifier import simplify
from hlo_indexing.maps.text import display_text, parse_indexing_map, print_indexing_map

__all__ = [
    "IndexingMap",
    "Interval",
    "Variable",
    "compose",
    "display_text",
    "parse_indexing_map",
    "print_indexing_map",
    "simplify",
]

OPERATIONS.install(
    parse=text.parse_indexing_map,
    print=text.print_indexing_map,
    compose=algebra.compose,
    simplify=simplifier.simplify,
    remove_unused_symbols=algebra.remove_unused_symbols,
    remove_unused_dims=algebra.remove_unused_dims,
    remove_unused_variables=algebra.remove_unused_variables,
    convert_range_variables_to_dims=algebra.convert_range_variables_to_dims,
    rescale_symbols=algebra.rescale_symbols,
    convert_symbols_to_dims=algebra.convert_symbols_to_dims,
    to_attribute=attributes.indexing_map_to_attribute,
    from_attribute=attributes.indexing_map_from_attribute,
)
