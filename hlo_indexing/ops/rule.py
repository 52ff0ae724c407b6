"""The interface of a per-op rule: what a rule receives (:class:`OpInfo`: the op, its
kind and static shapes) and gives (per operand, or per result, a list of maps or an
:class:`Entry`: maps plus the sources of their runtime variables), how it says it cannot
describe an op instance (:class:`UnknownIndexing`), and the rule of an op with no
indexing at all (:func:`unknown`). The rules themselves are in the op-family modules,
indexed by :mod:`hlo_indexing.ops.rules`.

Example::

    output_to_input, input_to_output = unknown("custom call target 'f' has no rule")
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import operand_values
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.ops.regions import RegionIndexing
from hlo_indexing.ops.result import RuntimeSource

Shape = tuple[int, ...]


class UnknownIndexing(Exception):
    """Raised by a rule that cannot describe an op instance (dynamic shapes, missing
    layouts, ...); the analysis turns it into undefined maps carrying the message."""


@dataclass(frozen=True)
class OpInfo:
    """The op (for attribute reads), its kind and the static shapes of its operands
    and results (``None`` for a value that is not a statically shaped tensor), and the
    fused analysis of bodies (:mod:`hlo_indexing.ops.regions`) when the caller has one."""

    op: ir.Operation
    kind: str
    operand_shapes: tuple[Shape | None, ...]
    result_shapes: tuple[Shape | None, ...]
    context: ir.Context
    regions: RegionIndexing | None = None

    def operand(self, index: int) -> Shape:
        """The static shape of operand ``index``; :class:`UnknownIndexing` when it has none."""
        return _static(self.operand_shapes[index], f"operand {index}")

    def result(self, index: int) -> Shape:
        """The static shape of result ``index``; :class:`UnknownIndexing` when it has none."""
        return _static(self.result_shapes[index], f"result {index}")

    def operand_is_token(self, index: int) -> bool:
        """Whether operand ``index`` is a token (:func:`is_token`)."""
        return is_token(operand_values(self.op)[index].type)

    def result_is_token(self, index: int) -> bool:
        """Whether result ``index`` is a token (:func:`is_token`); of a custom call whose
        one tuple result stands for its elements (``result_shapes``), element ``index``."""
        results = self.op.results
        result_type = results[0].type if len(results) == 1 else None
        if isinstance(result_type, ir.TupleType) and result_type.num_types == len(self.result_shapes):
            return is_token(result_type.get_type(index))
        return is_token(results[index].type)

    @property
    def num_operands(self) -> int:
        """The number of operands."""
        return len(self.operand_shapes)

    @property
    def num_results(self) -> int:
        """The number of results."""
        return len(self.result_shapes)


def _static(shape: Shape | None, what: str) -> Shape:
    if shape is None:
        raise UnknownIndexing(f"{what} is not a statically shaped tensor")
    return shape


#: The token types (XLA's ``token[]``): they order side effects and hold no element.
TOKEN_TYPES = frozenset({"!stablehlo.token", "!mhlo.token"})


def is_token(value_type: ir.Type) -> bool:
    """Whether a value of ``value_type`` is a token: no element of it is read or written,
    so no map goes to or from it."""
    return str(value_type) in TOKEN_TYPES


def value_shape(value_type: ir.Type) -> Shape | None:
    """The static shape of a ranked tensor type, else None."""
    if not isinstance(value_type, ir.RankedTensorType) or not value_type.has_static_shape:
        return None
    return tuple(value_type.shape)


@dataclass(frozen=True)
class Entry:
    """The maps of one operand/result and the sources of their runtime variables;
    ``note`` says why the maps over-approximate, when the rule knows."""

    maps: tuple[IndexingMap, ...]
    runtime: tuple[RuntimeSource, ...] = field(default=())
    note: str = ""


#: What a rule returns: one entry per operand (output to input) or per result (input to
#: output), each a list of maps or an :class:`Entry` (maps and the sources of their
#: runtime variables).
RuleResult = Sequence[Sequence[IndexingMap] | Entry]


def entry_maps(entry: Sequence[IndexingMap] | Entry) -> Sequence[IndexingMap]:
    """The maps of one entry of a :data:`RuleResult`."""
    return entry.maps if isinstance(entry, Entry) else entry


def unknown(reason: str) -> tuple[Callable[[OpInfo, int], RuleResult], Callable[[OpInfo, int], RuleResult]]:
    """The two functions (output to input, input to output) of a rule giving ``unknown
    indexing`` for every operand/result, with ``reason``."""

    def output_to_input(info: OpInfo, index: int) -> RuleResult:
        return [[IndexingMap.undefined(f"{info.op.operation.name}: {reason}")]] * info.num_operands

    def input_to_output(info: OpInfo, index: int) -> RuleResult:
        return [[IndexingMap.undefined(f"{info.op.operation.name}: {reason}")]] * info.num_results

    return output_to_input, input_to_output
