"""The names the fused walk gives capped values (``SetAlgebra.value_name``, numbered by
one ``AsmState`` per module for the whole analysis) are the names ``Value.get_name()``
gives, for results and block arguments at every depth of every function."""

from __future__ import annotations

from hlo_indexing.analysis.map_sets import SetAlgebra
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.parsing import parse_module

TEXT = """
func.func @first(%x: tensor<4x8xf32>, %init: tensor<f32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %e = stablehlo.exponential %x : tensor<4x8xf32>
  %r = stablehlo.reduce(%e init: %init) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    reducer(%a: tensor<f32>, %b: tensor<f32>) {
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }
  return %r, %e : tensor<4xf32>, tensor<4x8xf32>
}
func.func @second(%y: tensor<3xf32>) -> tensor<3xf32> {
  %n = stablehlo.negate %y : tensor<3xf32>
  %m = stablehlo.multiply %n, %y : tensor<3xf32>
  return %m : tensor<3xf32>
}
"""


def _values(operation: ir.Operation) -> list[ir.Value]:
    found: list[ir.Value] = []
    for region in operation.regions:
        for block in region.blocks:
            found.extend(block.arguments)
            for op in block.operations:
                found.extend(op.results)
                found.extend(_values(op.operation))
    return found


def test_value_names_are_get_names() -> None:
    module = parse_module(TEXT)
    values = _values(module.operation)
    assert len(values) == 10  # 3 function arguments, 2 reducer arguments, 5 results
    sets = SetAlgebra(max_maps=16)
    names = [sets.value_name(v) for v in values]
    assert names == [v.get_name() for v in values]
    assert len(set(names)) > 6 and "%arg0" in names
    assert len(sets.asm_states) == 1  # one numbering of the module for every value
