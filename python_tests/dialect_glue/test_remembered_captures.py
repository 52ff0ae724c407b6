"""``captured_values`` inside ``remembered_captures`` (what an analysis session uses: the
walk over a ``case``'s or ``while``'s regions once per op) gives what the walk gives
outside it, for every op with regions of every lit input; a caller changing the list it
got does not change the next answer; nested sessions share the outermost's answers and
the memory goes with it."""

from __future__ import annotations

import pytest

from hlo_indexing.dialect_glue import call_like
from hlo_indexing.dialect_glue.call_like import captured_values, remembered_captures
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.errors import HloIndexingError
from helpers import LIT_TESTS

#: A ``case`` inside a ``while`` body: the branches capture the body's argument and a
#: value defined outside the loop (the ``while`` itself captures nothing but that value).
NESTED = """
func.func @main(%x: tensor<4xf32>, %c: tensor<f32>) -> tensor<4xf32> {
  %k = stablehlo.constant dense<2.0> : tensor<4xf32>
  %r:2 = stablehlo.while(%i = %c, %v = %x) : tensor<f32>, tensor<4xf32>
  cond {
    %lt = stablehlo.compare LT, %i, %i : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %p = stablehlo.constant dense<1> : tensor<i32>
    %b = "stablehlo.case"(%p) ({
      %s = stablehlo.add %v, %k : tensor<4xf32>
      stablehlo.return %s : tensor<4xf32>
    }, {
      stablehlo.return %v : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    stablehlo.return %i, %b : tensor<f32>, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}
"""


def _ops_with_regions(module) -> list:
    found = []

    def visit(op):
        if len(op.operation.regions):
            found.append(op.operation)
        return call_like.ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def _lit_modules() -> list:
    modules = []
    for path in sorted(LIT_TESTS.rglob("*.mlir")):
        if "Output" in path.parts:
            continue
        for chunk in path.read_text().split("// -----"):
            try:
                modules.append(parse_module(chunk))
            except (HloIndexingError, ValueError):
                continue  # inputs that test errors
    return modules


def test_remembered_answers_equal_the_walk_on_every_lit_input() -> None:
    checked = 0
    for module in [parse_module(NESTED), *_lit_modules()]:
        ops = _ops_with_regions(module)
        plain = [captured_values(op) for op in ops]
        with remembered_captures():
            assert [captured_values(op) for op in ops] == plain
            assert [captured_values(op) for op in ops] == plain  # the remembered answers
        checked += len(ops)
    assert checked > 50


def test_nested_case_captures_the_loop_argument_and_the_outer_constant() -> None:
    module = parse_module(NESTED)
    by_name = {op.name: op for op in _ops_with_regions(module)}
    with remembered_captures():
        case = captured_values(by_name["stablehlo.case"])
        loop = captured_values(by_name["stablehlo.while"])
    assert len(loop) == 1 and loop[0].owner.name == "stablehlo.constant"  # %k
    assert len(case) == 2
    assert isinstance(case[0], call_like.ir.BlockArgument) and case[0].arg_number == 1  # %v, first use
    assert case[1] == loop[0]


def test_a_changed_answer_does_not_change_the_next_and_sessions_end() -> None:
    module = parse_module(NESTED)
    case = next(op for op in _ops_with_regions(module) if op.name == "stablehlo.case")
    with remembered_captures():
        first = captured_values(case)
        first.clear()
        with remembered_captures():  # nested: the outer session's answers
            assert len(captured_values(case)) == 2
            assert call_like._remembered is not None and case in call_like._remembered
        assert call_like._remembered is not None
    assert call_like._remembered is None


def test_the_session_ends_on_error() -> None:
    with pytest.raises(RuntimeError), remembered_captures():
        raise RuntimeError("inside")
    assert call_like._remembered is None
