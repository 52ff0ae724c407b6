"""XLA's experimental tiling (``xla/codegen/tiling/experimental``): tiles whose offsets,
sizes and strides are expressions of tile ids and tile sizes (``tile``, ``tile_expr``,
``simplify``), their propagation through HLO instructions (``propagation``,
``reshape_propagation``, ``convolution``, ``more_ops``), the tiling space of a fusion
(``tiling_space``) and the tiled HLO computation (``tiled_hlo``), on XLA's HLO instruction
graph (``hlo_graph``). Checked against XLA's experimental-tiling corpus
(``dev/tiling_conformance_propagation.py``); no pass or public name reaches it yet."""
