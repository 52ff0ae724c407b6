"""Fused maps through tuple plumbing (``tuple``, ``get_tuple_element``, nested tuples,
tuple-typed arguments and results, calls that pack and unpack tuples).

Seeded random programs are checked against an independent numpy interpreter that
tracks, for every element of every value, the set of argument elements it depends on
(a tuple is a Python tuple of such arrays). Output -> input maps must give exactly the
interpreter's (result index, argument index) pairs and input -> output maps exactly
the transposed pairs, per tuple element where a value is a tuple."""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from hlo_indexing import (
    IndexingMap,
    fusion_indexing,
    fusion_input_to_output_indexing,
    input_to_output_indexing,
    output_to_input_indexing,
    parse_module,
)

from test_op_indexing_support import relation

# ----------------------------------------------------------------------------------------
# The independent evaluator: dependence sets per element, tuples as Python tuples.
# A type is a shape (a tuple of ints) or a tuple of types.


def is_tensor(value_type) -> bool:
    return all(isinstance(n, int) for n in value_type)


def argument_value(index: int, value_type, path: tuple = ()):
    """The value of argument ``index``: each element depends on itself only."""
    if not is_tensor(value_type):
        return tuple(argument_value(index, t, path + (k,)) for k, t in enumerate(value_type))
    out = np.empty(value_type, dtype=object)
    for position in itertools.product(*map(range, value_type)):
        out[position] = frozenset({(index, path, position)})
    return out


def union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.frompyfunc(lambda x, y: x | y, 2, 1)(a, b)


def leaves(value, path: tuple = ()):
    """``(path, array)`` for every tensor inside ``value``."""
    if isinstance(value, tuple):
        for k, element in enumerate(value):
            yield from leaves(element, path + (k,))
    else:
        yield path, value


def element(value, path: tuple):
    for k in path:
        value = value[k]
    return value


# ----------------------------------------------------------------------------------------
# Random programs: MLIR text plus the evaluator's result, built side by side.


def type_text(value_type) -> str:
    if not is_tensor(value_type):
        return "tuple<" + ", ".join(type_text(t) for t in value_type) + ">"
    return "tensor<" + "x".join(map(str, value_type)) + "xf32>"


@dataclass
class Value:
    name: str
    type: object  # a shape tuple of ints, or a tuple of such types (a tuple value)
    data: object  # the evaluator's value


class ProgramBuilder:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.lines: list[str] = []
        self.counter = 0
        self.helpers: dict[str, str] = {}

    def fresh(self) -> str:
        self.counter += 1
        return f"%v{self.counter}"

    def emit(self, text: str, value_type, data) -> Value:
        name = self.fresh()
        self.lines.append(f"    {name} = {text}")
        return Value(name, value_type, data)

    def tuple_of(self, parts: list[Value]) -> Value:
        value_type = tuple(p.type for p in parts)
        names = ", ".join(p.name for p in parts)
        return self.emit(f"stablehlo.tuple {names} : {type_text(value_type)}", value_type, tuple(p.data for p in parts))

    def get(self, value: Value, k: int) -> Value:
        result_type = value.type[k]
        text = f"stablehlo.get_tuple_element {value.name}[{k}] : ({type_text(value.type)}) -> {type_text(result_type)}"
        return self.emit(text, result_type, value.data[k])

    def unary(self, value: Value) -> Value:
        shape, t = value.type, type_text(value.type)
        choice = self.rng.choice(["reverse", "transpose", "slice", "negate"] if len(shape) == 2 else ["reverse", "slice"])
        if choice == "reverse":
            dim = self.rng.randrange(len(shape))
            return self.emit(f"stablehlo.reverse {value.name}, dims = [{dim}] : {t}", shape, np.flip(value.data, dim))
        if choice == "transpose":
            new = (shape[1], shape[0])
            text = f"stablehlo.transpose {value.name}, dims = [1, 0] : ({t}) -> {type_text(new)}"
            return self.emit(text, new, value.data.T)
        if choice == "negate":
            return self.emit(f"stablehlo.negate {value.name} : {t}", shape, value.data)
        starts = [self.rng.randrange(n) for n in shape]
        limits = [self.rng.randrange(s + 1, n + 1) for s, n in zip(starts, shape, strict=True)]
        new = tuple(lim - s for s, lim in zip(starts, limits, strict=True))
        text = (
            f"stablehlo.slice {value.name} [" + ", ".join(f"{s}:{lim}" for s, lim in zip(starts, limits, strict=True))
            + f"] : ({t}) -> {type_text(new)}"
        )
        return self.emit(text, new, value.data[tuple(slice(s, lim) for s, lim in zip(starts, limits, strict=True))])

    def add(self, a: Value, b: Value) -> Value:
        return self.emit(f"stablehlo.add {a.name}, {b.name} : {type_text(a.type)}", a.type, union(a.data, b.data))

    def call_repack(self, value: Value) -> Value:
        """A call of a private function that unpacks a tuple and packs it reversed."""
        n = len(value.type)
        name = f"repack{len(self.helpers)}"
        result_type = tuple(reversed(value.type))
        body = [f"    %e{k} = stablehlo.get_tuple_element %t[{k}] : ({type_text(value.type)}) -> {type_text(value.type[k])}" for k in range(n)]
        body.append("    %r = stablehlo.tuple " + ", ".join(f"%e{k}" for k in reversed(range(n))) + f" : {type_text(result_type)}")
        body.append(f"    return %r : {type_text(result_type)}")
        self.helpers[name] = (
            f"  func.func private @{name}(%t: {type_text(value.type)}) -> {type_text(result_type)} {{\n" + "\n".join(body) + "\n  }"
        )
        text = f"func.call @{name}({value.name}) : ({type_text(value.type)}) -> {type_text(result_type)}"
        return self.emit(text, result_type, tuple(reversed(value.data)))


def random_program(seed: int):
    """``(module text, argument types, result value)`` of a random tuple-plumbing program."""
    rng = random.Random(seed)
    builder = ProgramBuilder(rng)
    shapes = [(rng.randint(1, 4), rng.randint(1, 4)) for _ in range(rng.randint(2, 3))]
    argument_types: list = list(shapes)
    if rng.random() < 0.5:  # a tuple-typed argument
        argument_types.append((tuple(shapes[0]), (rng.randint(1, 5),)))
    live = [Value(f"%arg{i}", t, argument_value(i, t)) for i, t in enumerate(argument_types)]
    for _ in range(rng.randint(4, 10)):
        tensors = [v for v in live if is_tensor(v.type)]
        tuples = [v for v in live if not is_tensor(v.type)]
        action = rng.choice(["tuple", "get", "unary", "add", "call"])
        if action == "tuple" or not tuples and action in ("get", "call"):
            live.append(builder.tuple_of(rng.sample(live, rng.randint(1, min(3, len(live))))))
        elif action == "get":
            source = rng.choice(tuples)
            live.append(builder.get(source, rng.randrange(len(source.type))))
        elif action == "call":
            live.append(builder.call_repack(rng.choice(tuples)))
        elif action == "unary":
            live.append(builder.unary(rng.choice(tensors)))
        else:
            a = rng.choice(tensors)
            same = [v for v in tensors if v.type == a.type]
            live.append(builder.add(a, rng.choice(same)))
    result = live[-1]
    arguments = ", ".join(f"%arg{i}: {type_text(t)}" for i, t in enumerate(argument_types))
    text = (
        "module {\n"
        f"  func.func @main({arguments}) -> {type_text(result.type)} {{\n"
        + "\n".join(builder.lines)
        + f"\n    return {result.name} : {type_text(result.type)}\n  }}\n"
        + "\n".join(builder.helpers.values())
        + "\n}\n"
    )
    return text, argument_types, result


def expected_pairs(result_data, result_path: tuple, argument: int, argument_path: tuple) -> set:
    data = element(result_data, result_path)
    return {
        (position, source_position)
        for position in itertools.product(*map(range, data.shape))
        for index, path, source_position in data[position]
        if index == argument and path == argument_path
    }



def argument_element_maps(fused, argument: int, path: tuple):
    return fused.maps[argument] if path == () else fused.elements[argument].get(path, frozenset())


def argument_leaves(argument_types):
    for index, value_type in enumerate(argument_types):
        probe = argument_value(index, value_type)
        for path, _ in leaves(probe):
            yield index, path


@pytest.mark.parametrize("seed", range(40))
def test_random_tuple_programs_match_the_evaluator(seed) -> None:
    text, argument_types, result = random_program(seed)
    module = parse_module(text)
    main = module.body.operations[0]
    for result_path, _ in leaves(result.data):
        fused = fusion_indexing(main, 0, element=result_path)
        for argument, argument_path in argument_leaves(argument_types):
            expected = expected_pairs(result.data, result_path, argument, argument_path)
            got = relation(argument_element_maps(fused, argument, argument_path))
            assert got == expected, (text, result_path, argument, argument_path)
    for argument, argument_path in argument_leaves(argument_types):
        forward = fusion_input_to_output_indexing(main, argument, element=argument_path)
        for result_path, _ in leaves(result.data):
            expected = {(b, a) for a, b in expected_pairs(result.data, result_path, argument, argument_path)}
            maps = forward.maps[0] if result_path == () else forward.elements[0].get(result_path, frozenset())
            assert relation(maps) == expected, (text, argument, argument_path, result_path)


def test_random_programs_exercise_every_tuple_feature() -> None:
    """The seeds above cover nested tuples, tuple arguments and tuple results."""
    texts = [random_program(seed) for seed in range(40)]
    assert any("tuple<tuple<" in t or ", tuple<" in t for t, _, _ in texts)
    assert any(not is_tensor(types[-1]) for _, types, _ in texts)
    assert any(not is_tensor(result.type) for _, _, result in texts)
    assert any("func.call" in t for t, _, _ in texts)


# ----------------------------------------------------------------------------------------
# Per-op maps and explicit unknowns.

PER_OP = """
func.func @f(%a: tensor<4xf32>, %b: tensor<2x3xf32>, %n: tuple<tensor<4xf32>>) -> tensor<2x3xf32> {
  %t = stablehlo.tuple %a, %b, %n : tuple<tensor<4xf32>, tensor<2x3xf32>, tuple<tensor<4xf32>>>
  %g = stablehlo.get_tuple_element %t[1] : (tuple<tensor<4xf32>, tensor<2x3xf32>, tuple<tensor<4xf32>>>) -> tensor<2x3xf32>
  return %g : tensor<2x3xf32>
}
"""


def identity_pairs(shape) -> set:
    return {(p, p) for p in itertools.product(*map(range, shape))}


def test_tuple_and_get_tuple_element_per_op_maps_address_one_element() -> None:
    module = parse_module(PER_OP)
    tuple_op, gte = list(module.body.operations[0].regions[0].blocks[0].operations)[:2]
    o2i = output_to_input_indexing(tuple_op)
    assert relation(o2i[0]) == identity_pairs((4,))
    assert relation(o2i[1]) == identity_pairs((2, 3))
    (nested,) = o2i[2]
    assert nested.is_undefined and "nested tuple" in nested.reason
    assert relation(input_to_output_indexing(tuple_op, 1)[0]) == identity_pairs((2, 3))
    assert relation(output_to_input_indexing(gte)[0]) == identity_pairs((2, 3))
    assert relation(input_to_output_indexing(gte)[0]) == identity_pairs((2, 3))


OPAQUE = """
func.func @f(%a: tensor<4xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tuple<tensor<4xf32>, tensor<2x3xf32>>) {
  %t = stablehlo.tuple %a, %b : tuple<tensor<4xf32>, tensor<2x3xf32>>
  %c = stablehlo.custom_call @foo(%t) : (tuple<tensor<4xf32>, tensor<2x3xf32>>) -> tuple<tensor<4xf32>, tensor<2x3xf32>>
  %g = stablehlo.get_tuple_element %c[1] : (tuple<tensor<4xf32>, tensor<2x3xf32>>) -> tensor<2x3xf32>
  return %g, %t : tensor<2x3xf32>, tuple<tensor<4xf32>, tensor<2x3xf32>>
}
"""


def test_an_opaque_op_on_a_tuple_gives_unknown_maps_with_the_reason() -> None:
    module = parse_module(OPAQUE)
    func = module.body.operations[0]
    fused = fusion_indexing(func, 0)
    for maps in fused.maps:
        (m,) = maps
        assert m.is_undefined and "custom_call" in m.reason
    forward = fusion_input_to_output_indexing(func, 1)
    (m,) = forward.maps[0]
    assert m.is_undefined and "custom_call" in m.reason
    assert relation(forward.elements[1][(1,)]) == identity_pairs((2, 3))


def test_a_whole_tuple_result_is_unknown_and_names_the_element_argument() -> None:
    module = parse_module(OPAQUE)
    func = module.body.operations[0]
    fused = fusion_indexing(func, 1)
    assert fused.is_unknown
    assert all("element=(k, ...)" in m.reason for maps in fused.maps for m in maps)
    assert relation(fusion_indexing(func, 1, element=(0,)).maps[0]) == identity_pairs((4,))
    assert fusion_indexing(func, 1, element=(0,)).maps[1] == frozenset()


def test_an_element_path_that_does_not_exist_is_rejected() -> None:
    module = parse_module(OPAQUE)
    func = module.body.operations[0]
    with pytest.raises(ValueError, match="has no tuple element 2"):
        fusion_indexing(func, 1, element=(2,))
    with pytest.raises(ValueError, match="has no tuple element 0"):
        fusion_indexing(func, 0, element=(0,))


# ----------------------------------------------------------------------------------------
# XLA's GetTupleElementOp case. XLA's HLO -> StableHLO translator folds tuple /
# get-tuple-element away, so the conformance runner cannot check it; this is the same
# module written by hand in StableHLO, compared with the corpus' expected map.

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "conformance" / "xla_indexing" / "cases.jsonl"

GET_TUPLE_ELEMENT_CASE = """
func.func @e(%p0: tensor<10x20xf32>, %p1: tensor<30x40xf32>) -> tensor<10x20xf32> {
  %t0 = stablehlo.tuple %p0, %p1 : tuple<tensor<10x20xf32>, tensor<30x40xf32>>
  %gte0 = stablehlo.get_tuple_element %t0[0] : (tuple<tensor<10x20xf32>, tensor<30x40xf32>>) -> tensor<10x20xf32>
  return %gte0 : tensor<10x20xf32>
}
"""


@pytest.mark.skipif(not CORPUS.exists(), reason=f"conformance corpus not found at {CORPUS}")
def test_xla_get_tuple_element_case_transcribed_to_stablehlo() -> None:
    case = next(
        json.loads(line)
        for line in CORPUS.read_text().splitlines()
        if json.loads(line)["id"] == "indexing_analysis_test::GetTupleElementOp"
    )
    assert "tuple(p0, p1)" in case["hlo"] and "get-tuple-element(t0), index=0" in case["hlo"]
    module = parse_module(GET_TUPLE_ELEMENT_CASE)
    func = module.body.operations[0]
    gte = list(func.regions[0].blocks[0].operations)[1]
    (expected_text,) = case["expected"][0]
    expected = IndexingMap.parse(expected_text, func.context)
    assert relation(output_to_input_indexing(gte)[0]) == expected.relation()
    fused = fusion_indexing(func)
    assert relation(fused.maps[0]) == expected.relation()
    assert fused.maps[1] == frozenset()


def test_fusion_results_stay_hashable_and_compare_their_elements() -> None:
    module = parse_module(OPAQUE)
    func = module.body.operations[0]
    forward = fusion_input_to_output_indexing(func, 1)
    assert hash(forward) == hash(fusion_input_to_output_indexing(func, 1))
    assert forward == fusion_input_to_output_indexing(func, 1)
    assert forward != fusion_input_to_output_indexing(func, 0)
