"""hlo-indexing's passes, their registry and the glue to run them in MLIR pipelines.

A pass is a frozen dataclass deriving from :class:`hlo_indexing.passes.base.ModulePass`;
its fields are its options. Passes are looked up by name in
:mod:`hlo_indexing.passes.registry`, which imports each pass module only when used.
:func:`run_pipeline` runs a textual pipeline on a module. Public names load lazily
(``dir()`` lists them).
"""

from hlo_indexing.lazy import lazy_exports

_EXPORTS = {
    "ModulePass": "hlo_indexing.passes.base",
    "Diagnostics": "hlo_indexing.passes.base",
    "Diagnostic": "hlo_indexing.passes.base",
    "PassOptionError": "hlo_indexing.passes.base",
    "run_pipeline": "hlo_indexing.passes.pass_manager",
    "build_pass_manager": "hlo_indexing.passes.pass_manager",
    "PipelineError": "hlo_indexing.passes.pipeline_text",
    "parse_pipeline": "hlo_indexing.passes.pipeline_text",
    "PASSES": "hlo_indexing.passes.registry",
    "pass_names": "hlo_indexing.passes.registry",
    "lookup": "hlo_indexing.passes.registry",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
