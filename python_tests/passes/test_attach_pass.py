"""The attach pass stores exactly the maps of the Python API, readable back from the
builtin attributes, nested per result (output-to-input) or per operand (input-to-output)."""

from __future__ import annotations

import pytest

from hlo_indexing import input_to_output_indexing, output_to_input_indexing
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.maps.attributes import indexing_map_from_attribute
from hlo_indexing.passes.attach_indexing_maps import ATTRIBUTE_NAMES, AttachIndexingMaps, hlo_ops
from hlo_indexing.passes.base import Diagnostics

TEXT = """
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %i: tensor<f32>) -> tensor<8xf32> {
  %0 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %1 = stablehlo.add %a, %0 : tensor<4x8xf32>
  %2 = stablehlo.reduce(%1 init: %i) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = stablehlo.custom_call @foo(%2) : (tensor<8xf32>) -> tensor<8xf32>
  return %3 : tensor<8xf32>
}
"""


@pytest.mark.parametrize("direction", ["output-to-input", "input-to-output"])
def test_attached_maps_equal_the_api(direction):
    with make_context():
        module = ir.Module.parse(TEXT)
        diagnostics = Diagnostics()
        AttachIndexingMaps(direction=direction).run(module.operation, diagnostics)
        assert not diagnostics.has_errors
        ops = list(hlo_ops(module.operation))
        assert [op.name for op in ops] == [
            "stablehlo.broadcast_in_dim", "stablehlo.add", "stablehlo.reduce", "stablehlo.custom_call"
        ]
        for op in ops:
            stored = op.attributes[ATTRIBUTE_NAMES[direction]]
            outer = len(op.results) if direction == "output-to-input" else len(op.operands)
            assert len(stored) == outer
            for k in range(outer):
                api = (output_to_input_indexing if direction == "output-to-input" else input_to_output_indexing)(op, k)
                read = tuple(frozenset(indexing_map_from_attribute(m) for m in entry) for entry in stored[k])
                assert read == api.maps, op.name


def test_reducer_bodies_are_skipped():
    with make_context():
        module = ir.Module.parse(TEXT)
        names = [op.name for op in hlo_ops(module.operation)]
        assert names.count("stablehlo.add") == 1  # not the one inside the reducer
