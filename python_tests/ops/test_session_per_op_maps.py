"""The per-op maps of loops, branches and calls (not cached per op: they depend on more
than the op) asked for with the region analysis inside one of its sessions are built
once per (op, index, direction): the walks of bodies and callees ask for the same op
again. For every op of the control-flow lit inputs (``while`` counted, pass-through and
data-dependent, ``case`` with captures, calls), in both directions, the maps given in a
session equal those given outside one; for those ops a second ask in the session gets
the same object; an ask that fails fails every time."""

from __future__ import annotations

import pytest

from hlo_indexing.analysis.fusion import REGIONS
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import operand_values
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.ops.dispatch import all_indexings, operand_indexing, result_indexing
from helpers import LIT_TESTS

CONTROL_FLOW = LIT_TESTS / "ops" / "control-flow-and-calls.mlir"
#: The ops whose maps the per-op cache does not keep (they depend on more than the op).
UNCACHED = frozenset({"stablehlo.while", "stablehlo.case", "stablehlo.if", "func.call", "stablehlo.composite"})

def _hlo_ops(module) -> list[ir.Operation]:
    found = []

    def visit(op):
        operation = op.operation
        if operation.name.startswith(("stablehlo.", "func.call")) and operation.name != "stablehlo.return":
            found.append(operation)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def _asks(operation: ir.Operation) -> list:
    return [(result_indexing, r) for r in range(len(operation.results))] + [
        (operand_indexing, k) for k in range(len(operand_values(operation)))
    ]


def _maps_or_error(ask, operation: ir.Operation, index: int) -> object:
    try:
        return ask(operation, index, regions=REGIONS).maps
    except HloIndexingError as exc:
        return str(exc)


def test_maps_in_a_session_equal_those_outside_and_are_built_once() -> None:
    modules = [parse_module(chunk) for chunk in CONTROL_FLOW.read_text().split("// -----")]
    checked = 0
    for module in modules:
        for operation in _hlo_ops(module):
            outside = [_maps_or_error(ask, operation, index) for ask, index in _asks(operation)]
            with REGIONS.session():
                inside = [_maps_or_error(ask, operation, index) for ask, index in _asks(operation)]
                if operation.name not in UNCACHED:
                    continue
                for ask, index in _asks(operation):
                    try:
                        first = ask(operation, index, regions=REGIONS)
                    except HloIndexingError:
                        continue
                    assert ask(operation, index, regions=REGIONS) is first
                    checked += operation.name == "stablehlo.while"
                per_result = all_indexings(operation, "output-to-input", regions=REGIONS)
                assert all(found is result_indexing(operation, r, regions=REGIONS) for r, found in enumerate(per_result))
            assert inside == outside
    assert checked > 10


def test_a_failing_ask_fails_every_time_in_a_session() -> None:
    module = parse_module(CONTROL_FLOW.read_text().split("// -----")[0])
    loop = next(op for op in _hlo_ops(module) if op.name == "stablehlo.while")
    with REGIONS.session():
        for _ in range(2):
            with pytest.raises(HloIndexingError, match="has no result #2"):
                result_indexing(loop, 2, regions=REGIONS)
