"""Per-op indexing maps (output -> input and input -> output) for StableHLO, MHLO and
CHLO ops. Rules live in one module per op family over the rule interface
(:mod:`hlo_indexing.ops.rule`, maps built with :mod:`hlo_indexing.ops.map_builders` and
:mod:`hlo_indexing.ops.inversion`) and are looked up by op kind in
:mod:`hlo_indexing.ops.rules`; :mod:`hlo_indexing.ops.dispatch` answers per op. The
public per-op functions are ``hlo_indexing.output_to_input_indexing`` and
``hlo_indexing.input_to_output_indexing`` (:mod:`hlo_indexing.analysis.per_op`)."""

from hlo_indexing.ops.result import InstructionIndexing, RuntimeSource

__all__ = ["InstructionIndexing", "RuntimeSource"]
