"""Per-device maps of collectives against a brute force: ``G`` devices simulated with
numpy, each operand element tagged with (device, index), each collective computed as
the StableHLO spec defines it. For every device, the (result index, operand index)
pairs it reads must lie in our relation (the range variable standing for the device's
position covers every device), and the union over devices must equal it; the element
must come from the device our ``replica id`` map names."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hlo_indexing.analysis.grouped import grouped_output_to_input_indexing
from hlo_indexing.analysis.per_op import output_to_input_indexing
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.errors import InvalidAttributeError

CONTEXT = make_context()
G = 3


def _op(text: str, operand: tuple, result: tuple):
    def ty(shape):
        return "tensor<" + "x".join(map(str, shape)) + "xf32>"

    source = f"func.func @f(%a: {ty(operand)}) -> {ty(result)} {{\n  %0 = {text} : ({ty(operand)}) -> {ty(result)}\n  return %0 : {ty(result)}\n}}"
    module = ir.Module.parse(source, context=CONTEXT)
    return module, module.body.operations[0].regions[0].blocks[0].operations[0]


GROUPS = f"replica_groups = dense<[[{', '.join(map(str, range(G)))}]]> : tensor<1x{G}xi64>"
REDUCER = """({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %m = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %m : tensor<f32>
  })"""


def _tagged(shape):
    """Per device, an object array of (device, index) tags."""
    out = []
    for g in range(G):
        array = np.empty(shape, dtype=object)
        for index in itertools.product(*(range(n) for n in shape)):
            array[index] = {(g, index)}
        out.append(array)
    return out


def _union(arrays):
    out = np.empty(arrays[0].shape, dtype=object)
    for index in itertools.product(*(range(n) for n in out.shape)):
        out[index] = set().union(*(a[index] for a in arrays))
    return out


def simulate(kind: str, operand: tuple, params: dict) -> list[np.ndarray]:
    """Per device, the result as an array of sets of (source device, operand index)."""
    x = _tagged(operand)
    if kind == "all_reduce":
        return [_union(x)] * G
    if kind == "all_gather":
        return [np.concatenate(x, axis=params["dim"])] * G
    if kind == "reduce_scatter":
        total = _union(x)
        return np.split(total, G, axis=params["dim"])
    if kind == "all_to_all":
        blocks = [np.split(a, G, axis=params["split"]) for a in x]
        return [np.concatenate([blocks[h][g] for h in range(G)], axis=params["concat"]) for g in range(G)]
    assert kind == "collective_permute"
    source = {t: s for s, t in params["pairs"]}
    return [x[source[g]] for g in range(G)]


CASES = [
    ("all_reduce", f'"stablehlo.all_reduce"(%a) {REDUCER} {{{GROUPS}}}', (4, 2), (4, 2), {}),
    ("all_gather", f'"stablehlo.all_gather"(%a) {{all_gather_dim = 1 : i64, {GROUPS}}}', (2, 2), (2, 6), {"dim": 1}),
    ("reduce_scatter", f'"stablehlo.reduce_scatter"(%a) {REDUCER} {{scatter_dimension = 0 : i64, {GROUPS}}}',
     (6, 2), (2, 2), {"dim": 0}),
    ("all_to_all", f'"stablehlo.all_to_all"(%a) {{split_dimension = 1 : i64, concat_dimension = 0 : i64, '
     f'split_count = {G} : i64, {GROUPS}}}', (2, 6), (6, 2), {"split": 1, "concat": 0}),
    ("all_to_all_same_dim", f'"stablehlo.all_to_all"(%a) {{split_dimension = 0 : i64, concat_dimension = 0 : i64, '
     f'split_count = {G} : i64, {GROUPS}}}', (6, 2), (6, 2), {"split": 0, "concat": 0}),
    ("collective_permute", '"stablehlo.collective_permute"(%a) {source_target_pairs = dense<[[0, 1], [1, 2], [2, 0]]> '
     ": tensor<3x2xi64>}", (4,), (4,), {"pairs": [(0, 1), (1, 2), (2, 0)]}),
]


@pytest.mark.parametrize("name, text, operand, result, params", CASES, ids=[c[0] for c in CASES])
def test_per_device_maps_match_a_simulation(name, text, operand, result, params) -> None:
    kind = "all_to_all" if name.startswith("all_to_all") else name
    _module, op = _op(text, operand, result)
    indexing = output_to_input_indexing(op)
    (maps,) = indexing.maps
    ours = set().union(*(m.relation() for m in maps))
    replica = indexing.replica_maps[0] if indexing.replica_maps else None
    union = set()
    for g, device_result in enumerate(simulate(kind, operand, params)):
        pairs = set()
        for index in itertools.product(*(range(n) for n in result)):
            for source, element in device_result[index]:
                pairs.add((index, element))
                if replica is not None:
                    assert (index, (source,)) in replica.relation(), f"{name}: device {g} {index} from {source}"
        assert pairs <= ours, f"{name}: device {g} misses {sorted(pairs - ours)[:3]}"
        union |= pairs
    assert union == ours, f"{name}: over-approximated {sorted(ours - union)[:3]}"


def _tuple_all_to_all(operands: int, shape: tuple = (2, 2)):
    """XLA's tuple all-to-all (no split_dimension), as its CPU compiler emits it."""
    ty = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    types = ", ".join([ty] * operands)
    source = (
        f"func.func @f({', '.join(f'%a{j}: {ty}' for j in range(operands))}) -> ({types}) {{\n"
        f'  %0:{operands} = "mhlo.all_to_all"({", ".join(f"%a{j}" for j in range(operands))}) {{{GROUPS}}} '
        f": ({types}) -> ({types})\n"
        f"  return {', '.join(f'%0#{i}' for i in range(operands))} : {types}\n}}"
    )
    module = ir.Module.parse(source, context=CONTEXT)
    return module, module.body.operations[0].regions[0].blocks[0].operations[0]


def test_tuple_all_to_all_reads_every_operand_from_the_results_device() -> None:
    # XLA's AllToAll, tuple form, simulated: on device p, element e of result i is element
    # e of operand p held by device i. Per result and operand, the union over devices of
    # the (result element, operand element) pairs must be our relation, and the devices
    # they come from our replica map.
    shape = (2, 2)
    _module, op = _tuple_all_to_all(G, shape)
    elements = list(itertools.product(*(range(n) for n in shape)))
    # per (device p, result i): (result element, operand read, operand element, device holding it)
    sent = {(p, i): [(e, p, e, i) for e in elements] for p in range(G) for i in range(G)}
    for i in range(G):
        indexing = output_to_input_indexing(op, i)
        for j in range(G):
            pairs = {(e, src) for p in range(G) for e, operand, src, _ in sent[(p, i)] if operand == j}
            devices = {(e, (device,)) for p in range(G) for e, operand, _, device in sent[(p, i)] if operand == j}
            assert set().union(*(m.relation() for m in indexing.maps[j])) == pairs, f"result {i} operand {j}"
            assert indexing.replica_maps[j].relation() == devices


def test_a_tuple_all_to_all_with_an_operand_per_device_missing_is_refused_with_its_reason() -> None:
    _module, op = _tuple_all_to_all(G - 1)
    with pytest.raises(InvalidAttributeError, match=rf"split_dimension' is missing, .* one operand per device of the group \({G}\)"):
        output_to_input_indexing(op, 0)


def test_chained_all_gathers_compose_their_positions() -> None:
    # XLA's ChainedAllGatherFusion: XLA's ComposeOperandIndexing gives up on two replica id
    # maps (an undefined map, a documented difference of the conformance runner); ours
    # composes the positions: every (result index, p0 index) pair some device reads, and
    # only those, whichever device sent the element.
    source = (
        "func.func @f(%a: tensor<2xf32>) -> tensor<18xf32> {\n"
        f'  %0 = "stablehlo.all_gather"(%a) {{all_gather_dim = 0 : i64, {GROUPS}}} : (tensor<2xf32>) -> tensor<6xf32>\n'
        f'  %1 = "stablehlo.all_gather"(%0) {{all_gather_dim = 0 : i64, {GROUPS}}} : (tensor<6xf32>) -> tensor<18xf32>\n'
        "  return %1 : tensor<18xf32>\n}"
    )
    module = ir.Module.parse(source, context=CONTEXT)
    block = module.body.operations[0].regions[0].blocks[0]
    grouped = grouped_output_to_input_indexing(block.operations[1])
    ours = set().union(*(m.relation() for m in grouped[block.arguments[0]]))
    first = simulate("all_gather", (2,), {"dim": 0})  # every device: sets of (device, p0 index)
    second = np.concatenate(first, axis=0)  # what every device holds after the second all-gather
    expected = {((i,), element) for i in range(18) for _, element in second[i]}
    assert ours == expected
