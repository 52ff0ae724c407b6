"""Shared helpers of the per-op indexing tests: build one op as StableHLO (and its MHLO
twin), compute its maps in both directions, and compare the enumerated relations with a
brute-force dependence computed independently by the test."""

from __future__ import annotations

import itertools

import numpy as np

from hlo_indexing import input_to_output_indexing, output_to_input_indexing
from hlo_indexing.dialect_glue.bindings import ir, passmanager
from hlo_indexing.dialect_glue.context import make_context

CONTEXT = make_context()


def tensor(shape, element="f32") -> str:
    return "tensor<" + "".join(f"{n}x" for n in shape) + f"{element}>"


def build(op_text: str, operand_types: list[str], result_type: str) -> tuple:
    """A module with one function whose first op is ``op_text`` (operands ``%a0, %a1,
    ...``), and the same module legalised to MHLO. Returns ``(stablehlo_op, mhlo_op)``."""
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(operand_types))
    text = f"func.func @f({args}) -> {result_type} {{\n  %0 = {op_text}\n  return %0 : {result_type}\n}}"
    with CONTEXT:
        module = ir.Module.parse(text)
        twin = ir.Module.parse(str(module))
        passmanager.PassManager.parse("builtin.module(stablehlo-legalize-to-hlo)").run(twin.operation)
    return first_op(module), first_op(twin), (module, twin)


def first_op(module):
    return module.body.operations[0].regions[0].blocks[0].operations[0]


def relation(maps) -> set:
    """The union of the relations of a set of maps."""
    out = set()
    for m in maps:
        assert not m.is_undefined, m.reason
        out |= m.relation()
    return out


def perturbed_dependence(shapes, evaluate) -> list[set]:
    """(output index, operand index) pairs per operand of ``evaluate`` (numpy, on arrays of
    ``shapes``), found by perturbing each element of random inputs in ``[1, 2]`` and
    seeing which output elements change."""
    rng = np.random.default_rng(0)
    values = [rng.uniform(1.0, 2.0, s) for s in shapes]
    base = evaluate(*values)
    out = []
    for k, shape in enumerate(shapes):
        pairs = set()
        for index in itertools.product(*(range(n) for n in shape)):
            changed = [v.copy() for v in values]
            changed[k][index] += 1.0
            pairs |= {(tuple(int(i) for i in o), index) for o in np.argwhere(evaluate(*changed) != base)}
        out.append(pairs)
    return out


def indices(shape):
    return itertools.product(*(range(n) for n in shape))


def check_op(ops, expected_o2i: list[set], result_index: int = 0, simplify: bool = True) -> None:
    """For both dialect forms of the op: output -> operand ``k`` relation equals
    ``expected_o2i[k]`` (pairs (output index, operand index)), and operand ``k`` ->
    output equals its transpose."""
    stable, twin = ops[0], ops[1]
    for op in (stable, twin):
        forward = output_to_input_indexing(op, result_index, simplify=simplify)
        assert len(forward.maps) == len(expected_o2i)
        for k, expected in enumerate(expected_o2i):
            assert relation(forward.maps[k]) == expected, f"{op.operation.name} output->operand {k}\n{forward}"
            backward = input_to_output_indexing(op, k, simplify=simplify)
            got = relation(backward.maps[result_index])
            assert got == {(i, o) for o, i in expected}, f"{op.operation.name} operand {k}->output\n{backward}"
    assert output_to_input_indexing(stable, result_index) == output_to_input_indexing(twin, result_index)


def id_relation(output_ids: np.ndarray, input_shape) -> set:
    """Pairs (output index, input index) from an array of input element ids (``-1``:
    the output element reads no input element)."""
    out = set()
    for index in indices(output_ids.shape):
        element = int(output_ids[index])
        if element >= 0:
            out.add((tuple(index), tuple(int(v) for v in np.unravel_index(element, input_shape))))
    return out


def ids(shape) -> np.ndarray:
    return np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)
