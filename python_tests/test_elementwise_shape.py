"""ops.analysis.elementwise_shape: the ops whose operands are all read through the
identity map over their result's shape. Checked against the per-op maps
(output_to_input_indexing) and against the brute-force relation of an elementwise op
(output index i reads index i of every operand)."""

from __future__ import annotations

import pytest
from test_op_indexing_support import build, indices, relation, tensor

from hlo_indexing import output_to_input_indexing
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.ops.dispatch import elementwise_shape

CASES = [
    # (op text, operand types, result type, expected shape)
    ("stablehlo.add %a0, %a1 : tensor<3x4xf32>", [tensor((3, 4))] * 2, tensor((3, 4)), (3, 4)),
    ("stablehlo.convert %a0 : (tensor<2x5xf32>) -> tensor<2x5xi32>", [tensor((2, 5))], tensor((2, 5), "i32"), (2, 5)),
    ("stablehlo.compare GT, %a0, %a1 : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xi1>", [tensor((6,))] * 2,
     tensor((6,), "i1"), (6,)),
    ("stablehlo.exponential %a0 : tensor<f32>", [tensor(())], tensor(()), ()),
    # a scalar predicate is broadcast: not every operand has the result's shape
    ("stablehlo.select %a0, %a1, %a2 : tensor<i1>, tensor<3xf32>", [tensor((), "i1"), tensor((3,)), tensor((3,))],
     tensor((3,)), None),
    ("stablehlo.add %a0, %a1 : tensor<0x4xf32>", [tensor((0, 4))] * 2, tensor((0, 4)), None),  # nothing to read
    ("stablehlo.add %a0, %a1 : tensor<?x4xf32>", ["tensor<?x4xf32>"] * 2, "tensor<?x4xf32>", None),  # dynamic
    ("stablehlo.transpose %a0, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>", [tensor((2, 2))], tensor((2, 2)),
     None),  # same shapes, not elementwise
]


@pytest.mark.parametrize("op_text, operand_types, result_type, expected", CASES, ids=[c[0].split()[0] + f"-{i}" for i, c in enumerate(CASES)])
def test_elementwise_shape(op_text: str, operand_types: list[str], result_type: str, expected: tuple | None) -> None:
    stable, twin, modules = build(op_text, operand_types, result_type)  # modules: kept alive while the ops are used
    for op in (stable, twin):
        shape = elementwise_shape(op)
        assert shape == expected, op
        if shape is None:
            continue
        identity = IndexingMap.identity(shape, context=op.context)
        per_op = output_to_input_indexing(op, simplify=False)
        assert all(list(maps) == [identity] for maps in per_op.maps)
        reads = {(index, index) for index in indices(shape)}  # brute force: each output element reads its own index
        assert all(relation(maps) == reads for maps in per_op.maps)
