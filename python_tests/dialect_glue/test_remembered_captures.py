"""``captured_values`` and ``callee_block`` inside ``remembered_captures`` (what an
analysis session uses: the walk over a ``case``'s or ``while``'s regions, and the lookup
of a call's callee, once per op) give what they give outside it, for every op with
regions (every call-like op) of every lit input; a caller changing the list it got does
not change the next answer; a call whose callee does not match it fails at every ask;
nested sessions share the outermost's answers and the memory goes with it."""

from __future__ import annotations

import pytest

from hlo_indexing.dialect_glue import call_like
from hlo_indexing.dialect_glue.call_like import CALL_LIKE_OPS, callee_block, captured_values, remembered_captures
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.errors import HloIndexingError, InvalidInputError
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


def _assert_same_in_a_session(ops: list, answer) -> list:
    """``answer`` of each op outside a session, checked equal to its answers asked twice
    in one (the second time, the remembered ones)."""
    plain = [answer(op) for op in ops]
    with remembered_captures():
        assert [answer(op) for op in ops] == plain
        assert [answer(op) for op in ops] == plain
    return plain


def test_remembered_answers_equal_the_walk_on_every_lit_input() -> None:
    checked = 0
    for module in [parse_module(NESTED), *_lit_modules()]:
        ops = _ops_with_regions(module)
        _assert_same_in_a_session(ops, captured_values)
        checked += len(ops)
    assert checked > 50


def _call_like_ops(module) -> list:
    found = []

    def visit(op):
        if op.operation.name in CALL_LIKE_OPS:
            found.append(op.operation)
        return call_like.ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def _callee_or_error(op) -> object:
    try:
        return callee_block(op)
    except InvalidInputError as exc:
        return str(exc)


#: A ``func.call`` and a ``stablehlo.composite`` of ``@f``, and an ``mhlo.fusion`` whose
#: region takes another type than the op passes (the fusion's verifier does not check it).
CALLS = """
func.func private @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = "mhlo.fusion"(%x) ({
  ^bb0(%a: tensor<3xf32>):
    "mhlo.return"(%a) : (tensor<3xf32>) -> ()
  }) : (tensor<4xf32>) -> tensor<4xf32>
  %c = func.call @f(%r) : (tensor<4xf32>) -> tensor<4xf32>
  %d = stablehlo.composite "my.op" %c {decomposition = @f} : (tensor<4xf32>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}
"""


def test_remembered_callees_equal_the_lookup_on_every_lit_input() -> None:
    found = 0
    for module in [parse_module(CALLS), *_lit_modules()]:
        ops = _call_like_ops(module)
        plain = _assert_same_in_a_session(ops, _callee_or_error)
        found += sum(isinstance(callee, call_like.ir.Block) for callee in plain)
    assert found > 5


def test_a_mismatched_callee_fails_at_every_ask_in_a_session() -> None:
    module = parse_module(CALLS)  # kept alive: its ops die with it
    fusion, call, composite = _call_like_ops(module)
    with remembered_captures():
        for _ in range(2):
            with pytest.raises(InvalidInputError, match="its computation takes"):
                callee_block(fusion)
        assert callee_block(call) == callee_block(composite)  # both @f's body


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
    assert call_like._remembered is None and call_like._remembered_callees is None


def test_the_session_ends_on_error() -> None:
    with pytest.raises(RuntimeError), remembered_captures():
        raise RuntimeError("inside")
    assert call_like._remembered is None
