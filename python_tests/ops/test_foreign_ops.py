"""Ops of dialects other than StableHLO/MHLO/CHLO get unknown indexing from the per-op
API, even when their names match an HLO op's (``foo.transpose``, ``tensor.reshape``)."""

from __future__ import annotations

from hlo_indexing import input_to_output_indexing, output_to_input_indexing, parse_module
from hlo_indexing.dialect_glue.context import make_context

FOREIGN = """
func.func @f(%a: tensor<4x8xf32>, %s: tensor<2xi64>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %t = "foo.transpose"(%a) {permutation = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %r = tensor.reshape %a(%s) : (tensor<4x8xf32>, tensor<2xi64>) -> tensor<8x4xf32>
  return %t, %r : tensor<8x4xf32>, tensor<8x4xf32>
}
"""


def test_foreign_ops_named_like_hlo_ops_are_unknown() -> None:
    module = parse_module(FOREIGN, context=make_context(allow_unregistered_dialects=True))
    transpose, reshape = list(module.body.operations[0].regions[0].blocks[0].operations)[:2]
    for op in (transpose, reshape):
        for indexing in (output_to_input_indexing(op), input_to_output_indexing(op)):
            assert indexing.is_unknown, indexing
            assert "not a StableHLO, MHLO or CHLO op" in indexing.reason
