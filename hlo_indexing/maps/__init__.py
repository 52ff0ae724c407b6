"""The map algebra: intervals, affine expressions, :class:`IndexingMap` and the operations
on it (text, attributes, composition and clean-up, the range-aware simplifier).

Bottom to top: ``interval`` and ``affine_expr`` (data and evaluation), ``indexing_map``
(the data type), ``text`` and ``attributes`` (XLA text and MLIR attributes), ``algebra``
(composition, removal and conversion of variables) and ``simplifier``."""
