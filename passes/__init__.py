"""hlo-indexing's passes, their registry and the glue to run them in MLIR pipelines.

A pass is a frozen dataclass deriving from :class:`hlo_indexing.passes.base.ModulePass`;
its fields are its options. Passes are looked up by name in
:mod:`hlo_indexing.passes.registry`, which imports each pass module only when used.
"""
