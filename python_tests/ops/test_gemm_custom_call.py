"""cuBLAS GEMM custom calls of XLA GPU modules (``__cublas$gemm``, ``__cublas$lt$matmul``):
a tuple of the product and a workspace, the dot's dimension numbers in the
``backend_config`` JSON. The maps of the computation's result (the product, taken by
``get-tuple-element``) must equal the dependence of the product computed with numpy,
found by perturbing each input element; bad configurations are located errors."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from op_fixtures import perturbed_dependence, relation

from hlo_indexing import fusion_indexing, parse_module
from hlo_indexing.direction import Direction
from hlo_indexing.ops.dispatch import tuple_elements_indexing
from hlo_indexing.errors import InvalidAttributeError


def _shape(dims) -> str:
    return "f32[" + ",".join(map(str, dims)) + "]"


def _module(target: str, operands: list, result: tuple, numbers: dict, config: str | None = None) -> str:
    config = config if config is not None else json.dumps(
        {"gemm_backend_config": {"alpha_real": 1, "beta": 1 if len(operands) > 2 else 0,
                                 "dot_dimension_numbers": {k: [str(d) for d in v] for k, v in numbers.items()},
                                 "epilogue": "BIAS" if len(operands) > 2 and len(operands[2]) == 1 else "DEFAULT"}})
    params = "\n".join(f"  p{i} = {_shape(s)} parameter({i})" for i, s in enumerate(operands))
    names = ", ".join(f"p{i}" for i in range(len(operands)))
    return (
        f"HloModule m\nENTRY e {{\n{params}\n"
        f"  g = ({_shape(result)}, s8[1024]) custom-call({names}), custom_call_target=\"{target}\", backend_config={config}\n"
        f"  ROOT r = {_shape(result)} get-tuple-element(g), index=0\n}}\n"
    )


# (target, operand shapes, result shape, dimension numbers, numpy product of the operands)
CASES = [
    ("__cublas$gemm", [(3, 4), (4, 5)], (3, 5),
     {"lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]}, lambda a, b: a @ b),
    ("__cublas$gemm", [(2, 4, 3), (2, 5, 4)], (2, 3, 5),
     {"lhs_batch_dimensions": [0], "rhs_batch_dimensions": [0],
      "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [2]},
     lambda a, b: np.einsum("bkm,bnk->bmn", a, b)),
    ("__cublas$lt$matmul", [(3, 4), (4, 2), (3, 2)], (3, 2),
     {"lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]}, lambda a, b, c: a @ b + c),
    ("__cublas$lt$matmul", [(3, 4), (4, 2), (2,)], (3, 2),
     {"lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]}, lambda a, b, bias: a @ b + bias),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{len(c[1])}-operands-{len(c[2])}d" for c in CASES])
def test_the_product_of_a_gemm_reads_as_its_dot(case) -> None:
    target, operands, result, numbers, product = case
    module = parse_module(_module(target, operands, result, numbers), filename="gemm.hlo")
    main = module.body.operations[0]
    fused = fusion_indexing(main, 0)
    for k, pairs in enumerate(perturbed_dependence(operands, product)):
        assert relation(fused.maps[k]) == pairs, f"operand {k}: {fused.maps[k]}"


def test_the_workspace_of_a_gemm_reads_every_operand_element() -> None:
    operands = [(3, 4), (4, 5)]
    text = _module("__cublas$gemm", operands, (3, 5), CASES[0][3]).replace("index=0", "index=1").replace(
        "ROOT r = f32[3,5]", "ROOT r = s8[1024]")
    module = parse_module(text, filename="gemm.hlo")  # kept alive: MLIR frees its ops with it
    fused = fusion_indexing(module.body.operations[0], 0)
    for k, shape in enumerate(operands):
        every = set(itertools.product(*(range(n) for n in shape)))
        assert relation(fused.maps[k]) == {((w,), i) for w in range(1024) for i in every}


@pytest.mark.parametrize("config, problem", [
    ('{"gemm_backend_config":{"alpha_real":1}}', "has no gemm_backend_config.dot_dimension_numbers"),
    ('{"alpha_real":1}', r"has no gemm_backend_config \(KeyError"),
    ('{"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["0"],'
     '"rhs_contracting_dimensions":["0"]}}}', "backend_config"),
])
def test_a_gemm_without_usable_dimension_numbers_is_a_located_error(config, problem) -> None:
    module = parse_module(_module("__cublas$gemm", [(3, 4), (4, 5)], (3, 5), {}, config), filename="gemm.hlo")
    gemm = module.body.operations[0].regions[0].blocks[0].operations[0]
    with pytest.raises(InvalidAttributeError, match=problem) as raised:
        tuple_elements_indexing(gemm, Direction.OUTPUT_TO_INPUT, 0)
    assert "gemm.hlo:" in str(raised.value)
