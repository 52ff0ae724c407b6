"""The explicit *unknown* rule for ops the analysis cannot describe."""

from __future__ import annotations

from collections.abc import Callable

from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.ops.builders import OpInfo


def unknown(reason: str) -> tuple[Callable[[OpInfo, int], list], Callable[[OpInfo, int], list]]:
    """The two functions (output to input, input to output) of a rule giving ``unknown
    indexing`` for every operand/result, with ``reason``."""

    def output_to_input(info: OpInfo, index: int) -> list:
        return [[IndexingMap.undefined(f"{info.op.operation.name}: {reason}")]] * info.num_operands

    def input_to_output(info: OpInfo, index: int) -> list:
        return [[IndexingMap.undefined(f"{info.op.operation.name}: {reason}")]] * info.num_results

    return output_to_input, input_to_output
