"""``sdy.manual_computation`` (JAX's ``shard_map``) against a brute force: every device
of the mesh runs the body on its blocks of the operand, element provenance in numpy
(sets of operand elements), the results are assembled from the devices' blocks, and
the fused maps of ``@main`` must give exactly the pairs found."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hlo_indexing import fusion_indexing, parse_module


def _t(*shape: int) -> str:
    return "tensor<" + "".join(f"{n}x" for n in shape) + "f32>"


def _spec(axes) -> str:
    return "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in dim) + "}" for dim in axes) + "]"


def module_text(mesh, global_in, local_in, in_axes, global_out, local_out, out_axes, body) -> str:
    mesh_text = ", ".join(f'"{a}"={n}' for a, n in mesh.items())
    manual = ", ".join(f'"{a}"' for a in mesh)
    return f"""module {{
  sdy.mesh @mesh = <[{mesh_text}]>
  func.func @main(%arg0: {_t(*global_in)}) -> {_t(*global_out)} {{
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, {_spec(in_axes)}>] out_shardings=[<@mesh, {_spec(out_axes)}>] manual_axes={{{manual}}} (%a: {_t(*local_in)}) {{
{body}
    }} : ({_t(*global_in)}) -> {_t(*global_out)}
    return %0 : {_t(*global_out)}
  }}
}}"""


ADD = """({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %s = stablehlo.add %x, %y : tensor<f32>
        stablehlo.return %s : tensor<f32>
      })"""


def _block(axes, mesh, coordinate) -> int:
    index = 0
    for a in axes:
        index = index * mesh[a] + coordinate[list(mesh).index(a)]
    return index


def simulate(mesh, global_in, local_in, in_axes, global_out, local_out, out_axes, body) -> np.ndarray:
    """The global result as an array of sets of operand indices."""
    devices = list(itertools.product(*(range(n) for n in mesh.values())))
    tags = np.empty(global_in, dtype=object)
    for index in itertools.product(*(range(n) for n in global_in)):
        tags[index] = frozenset({index})
    local = {}
    for c in devices:
        slices = tuple(
            slice(_block(axes, mesh, c) * size, (_block(axes, mesh, c) + 1) * size) for axes, size in zip(in_axes, local_in)
        )
        local[c] = tags[slices]
    out = np.empty(global_out, dtype=object)
    for c in devices:
        result = body(local[c], local)
        slices = tuple(
            slice(_block(axes, mesh, c) * size, (_block(axes, mesh, c) + 1) * size) for axes, size in zip(out_axes, local_out)
        )
        out[slices] = result
    return out


def _union_all(arrays):
    out = np.empty(arrays[0].shape, dtype=object)
    for index in itertools.product(*(range(n) for n in out.shape)):
        out[index] = frozenset().union(*(a[index] for a in arrays))
    return out


def _row_union(a):
    out = np.empty((a.shape[0], 1), dtype=object)
    for i in range(a.shape[0]):
        out[i, 0] = frozenset().union(*a[i])
    return out


CASES = {
    "elementwise": (
        {"x": 2}, (4, 3), (2, 3), [("x",), ()], (4, 3), (2, 3), [("x",), ()],
        f"      %0 = stablehlo.exponential %a : {_t(2, 3)}\n      sdy.return %0 : {_t(2, 3)}",
        lambda a, all_: a,
    ),
    "transpose": (
        {"x": 2, "y": 1}, (4, 3), (2, 3), [("x",), ("y",)], (3, 4), (3, 2), [("y",), ("x",)],
        f"      %0 = stablehlo.transpose %a, dims = [1, 0] : ({_t(2, 3)}) -> {_t(3, 2)}\n      sdy.return %0 : {_t(3, 2)}",
        lambda a, all_: a.T,
    ),
    "all_reduce": (
        {"x": 2}, (4, 3), (2, 3), [("x",), ()], (4, 3), (2, 3), [("x",), ()],
        f'      %0 = "stablehlo.all_reduce"(%a) {ADD} {{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}}'
        f" : ({_t(2, 3)}) -> {_t(2, 3)}\n      sdy.return %0 : {_t(2, 3)}",
        lambda a, all_: _union_all(list(all_.values())),
    ),
    "row_sum": (
        {"x": 2}, (4, 3), (2, 3), [("x",), ()], (4, 1), (2, 1), [("x",), ()],
        "      %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
        f"      %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : ({_t(2, 3)}, tensor<f32>) -> {_t(2)}\n"
        f"      %0 = stablehlo.reshape %r : ({_t(2)}) -> {_t(2, 1)}\n      sdy.return %0 : {_t(2, 1)}",
        lambda a, all_: _row_union(a),
    ),
    "mesh_2x2": (
        {"x": 2, "y": 2}, (4, 6), (2, 3), [("x",), ("y",)], (4, 6), (2, 3), [("x",), ("y",)],
        f"      %0 = stablehlo.reverse %a, dims = [1] : {_t(2, 3)}\n      sdy.return %0 : {_t(2, 3)}",
        lambda a, all_: a[:, ::-1],
    ),
    # The body reads only part of its result's range per operand (the first 4 columns of
    # each block, twice): the body maps' dimension bounds must survive the lift (a
    # jax.shard_map of jnp.concatenate([r, r], 1) got maps reading past the operand).
    "concatenate_one_value_twice": (
        {"x": 2}, (4, 16), (4, 8), [(), ("x",)], (4, 16), (4, 8), [(), ("x",)],
        f"      %s = stablehlo.slice %a [0:4, 0:4] : ({_t(4, 8)}) -> {_t(4, 4)}\n"
        f"      %0 = stablehlo.concatenate %s, %s, dim = 1 : ({_t(4, 4)}, {_t(4, 4)}) -> {_t(4, 8)}\n      sdy.return %0 : {_t(4, 8)}",
        lambda a, all_: np.concatenate([a[:, :4], a[:, :4]], 1),
    ),
    "two_axes_one_dim": (
        {"x": 2, "y": 2}, (8, 2), (2, 2), [("x", "y"), ()], (8, 2), (2, 2), [("y", "x"), ()],
        f"      %0 = stablehlo.negate %a : {_t(2, 2)}\n      sdy.return %0 : {_t(2, 2)}",
        lambda a, all_: a,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_manual_computation_against_the_devices(name) -> None:
    mesh, global_in, local_in, in_axes, global_out, local_out, out_axes, body_text, body = CASES[name]
    module = parse_module(module_text(mesh, global_in, local_in, in_axes, global_out, local_out, out_axes, body_text))
    main = next(op for op in module.body.operations if op.operation.name == "func.func")
    (maps,) = fusion_indexing(main).maps
    ours = set().union(*(m.relation() for m in maps))
    result = simulate(mesh, global_in, local_in, in_axes, global_out, local_out, out_axes, body)
    expected = {(index, element) for index in itertools.product(*(range(n) for n in global_out)) for element in result[index]}
    assert expected <= ours, f"{name}: misses {sorted(expected - ours)[:3]}"
    assert ours == expected, f"{name}: over-approximates {sorted(ours - expected)[:3]}"


def test_a_collective_in_a_called_function_reads_every_device() -> None:
    """The all_reduce is in a function the body calls (as JAX puts a fori_loop's body,
    ppermute included, in a func.call'd @closed_call): every device's block is read,
    as when the all_reduce is in the body itself (it was taken for a local body)."""
    mesh, global_in, local_in, in_axes, global_out, local_out, out_axes, _, body = CASES["all_reduce"]
    call = f"      %0 = func.call @reduce_all(%a) : ({_t(2, 3)}) -> {_t(2, 3)}\n      sdy.return %0 : {_t(2, 3)}"
    text = module_text(mesh, global_in, local_in, in_axes, global_out, local_out, out_axes, call)
    helper = f"""  func.func private @reduce_all(%a: {_t(2, 3)}) -> {_t(2, 3)} {{
    %0 = "stablehlo.all_reduce"(%a) {ADD} {{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}} : ({_t(2, 3)}) -> {_t(2, 3)}
    return %0 : {_t(2, 3)}
  }}
}}"""
    module = parse_module(text[: text.rstrip().rindex("}")] + helper)
    main = next(op for op in module.body.operations if op.operation.name == "func.func")
    (maps,) = fusion_indexing(main).maps
    ours = set().union(*(m.relation() for m in maps))
    result = simulate(mesh, global_in, local_in, in_axes, global_out, local_out, out_axes, body)
    expected = {(index, element) for index in itertools.product(*(range(n) for n in global_out)) for element in result[index]}
    assert ours == expected, f"misses {sorted(expected - ours)[:3]}, over-approximates {sorted(ours - expected)[:3]}"
