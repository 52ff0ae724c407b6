"""Call-like ops (:data:`hlo_indexing.dialect_glue.call_like.CALL_LIKE_OPS`: ``mhlo.fusion``,
``func.call``, ``stablehlo.composite``) as ops: their per-op maps are the fused maps of
the computation they run, in both directions, as XLA answers for a fusion instruction
(``ComputeOutputToInputIndexing`` of a fusion returns the fused maps of its root).

The fused maps come from the region hook (:mod:`hlo_indexing.ops.regions`); without
it, or when the callee is not in the module, the maps are *unknown* with the reason.

Example: ``%0 = func.call @f(%x)`` where ``@f`` transposes gives ``operand id = 0
(d0, d1) -> (d1, d0)``.
"""

from __future__ import annotations

from hlo_indexing.dialect_glue.bindings import ir

from hlo_indexing.dialect_glue.call_like import callee_region
from hlo_indexing.ops.rule import OpInfo, RuleResult, UnknownIndexing
from hlo_indexing.ops.regions import RegionIndexing


def _region(info: OpInfo) -> tuple[ir.Region, RegionIndexing]:
    region = callee_region(info.op)
    if region is None:
        raise UnknownIndexing("the called computation is not in the module")
    if info.regions is None:
        raise UnknownIndexing("the maps of a call are its body's: ask hlo_indexing.analysis.per_op")
    return region, info.regions


def call_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Result ``result_index`` -> each operand: the callee's fused maps."""
    region, regions = _region(info)
    return [list(maps) for maps in regions.output_to_input(region, result_index)]


def call_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Operand ``operand_index`` -> each result: the callee's fused input -> output maps."""
    region, regions = _region(info)
    return [list(maps) for maps in regions.input_to_output(region, operand_index)]
