"""Program analysis built on per-op maps: fused maps of functions, regions and call-like
ops (``fusion``), folding of runtime variables (``runtime_folding``), whole-module
analysis (``module_analysis``), operand utilisation and memory coalescing."""
