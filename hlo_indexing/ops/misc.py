"""The explicit *unknown* rule for ops the analysis cannot describe."""

from __future__ import annotations

from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.ops.builders import OpInfo


def unknown(reason: str):
    """A rule giving ``unknown indexing`` for every operand/result, with ``reason``."""

    def rule(info: OpInfo, index: int) -> list:
        return [[IndexingMap.undefined(f"{info.op.operation.name}: {reason}")]] * info.num_operands

    def inverse(info: OpInfo, index: int) -> list:
        return [[IndexingMap.undefined(f"{info.op.operation.name}: {reason}")]] * info.num_results

    return rule, inverse
