"""Per-op indexing maps (output -> input and input -> output) for StableHLO, MHLO and
CHLO ops. Rules live in one module per op family and are looked up by op kind in
:mod:`hlo_indexing.ops.rules`; :mod:`hlo_indexing.ops.analysis` is the
entry point."""

from hlo_indexing.ops.analysis import input_to_output_indexing, output_to_input_indexing
from hlo_indexing.ops.result import InstructionIndexing, RuntimeSource

__all__ = ["InstructionIndexing", "RuntimeSource", "input_to_output_indexing", "output_to_input_indexing"]
