"""The only place that knows which MLIR Python bindings are in use.

Everything else in hlo-indexing imports ``ir`` and the dialect modules from
:mod:`hlo_indexing.dialect_glue.bindings`, creates contexts with
:func:`make_context`/:func:`default_context`, and parses text with
:func:`parse_module`. Swapping jaxlib for the upstream ``mlir`` wheels or
``iree.compiler`` happens in ``bindings.py`` alone.
"""

from hlo_indexing.dialect_glue.context import default_context, make_context
from hlo_indexing.dialect_glue.parsing import parse_module

__all__ = ["default_context", "make_context", "parse_module"]
