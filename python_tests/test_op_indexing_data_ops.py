"""Random property tests of scatter, select_and_scatter, all_gather, mhlo.bitcast (with
layouts) and mhlo.scan, against dependences computed here from each op's definition.

Data-dependent ops are compared with the documented over-approximation, computed
independently: the union over every possible (clamped) scatter start, every source
whose window covers an element, every step of a scan before an output's (read whole). Both
directions are checked (input -> output must be the transpose)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from hlo_indexing import input_to_output_indexing, output_to_input_indexing
from hlo_indexing.dialect_glue.bindings import ir

from test_op_indexing_support import CONTEXT, build, check_op, first_op, indices, relation, tensor


def _shape(rng, rank, low=1, high=4):
    return tuple(rng.randint(low, high) for _ in range(rank))


def _check_single(op, expected_o2i: list[set], result_index: int = 0) -> None:
    """``check_op`` for an op that exists in one dialect only."""
    forward = output_to_input_indexing(op, result_index)
    assert len(forward.maps) == len(expected_o2i)
    for k, expected in enumerate(expected_o2i):
        assert relation(forward.maps[k]) == expected, f"output {result_index} -> operand {k}\n{forward}"
        backward = input_to_output_indexing(op, k)
        assert relation(backward.maps[result_index]) == {(i, o) for o, i in expected}, f"operand {k}\n{backward}"


def _parse_mhlo(args: list[str], results: list[str], body: str):
    signature = ", ".join(f"%a{i}: {t}" for i, t in enumerate(args))
    returns = ", ".join(results)
    names = ", ".join(f"%0#{i}" for i in range(len(results))) if len(results) > 1 else "%0"
    count = f":{len(results)}" if len(results) > 1 else ""
    text = f"func.func @f({signature}) -> ({returns}) {{\n  %0{count} = {body}\n  return {names} : {returns}\n}}"
    with CONTEXT:
        module = ir.Module.parse(text)
    return first_op(module), module


@pytest.mark.parametrize("seed", range(40))
def test_scatter(seed):
    """operand[N, M], indices[B, K] (K = 1: rows; K = 2: rows and columns), updates[B, W]:
    update (b, j) lands at (r, c + j) for any clamped start (r, c)."""
    rng = random.Random(seed)
    n, m, b = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 3)
    w = rng.randint(1, m)
    k = rng.choice([1, 2])
    if k == 1:
        w = m  # the column start is 0: the window spans the row
    starts = [(r, c) for r in range(n) for c in (range(m - w + 1) if k == 2 else [0])]
    update_reads = {((r, c + j), (x, j)) for x in range(b) for j in range(w) for r, c in starts}
    identity = {(o, o) for o in indices((n, m))}
    every_index = {(o, i) for o in indices((n, m)) for i in indices((b, k))}
    dims_to_operand = [0, 1][:k]
    ops = build(
        '"stablehlo.scatter"(%a0, %a1, %a2) ({\n'
        "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
        "    stablehlo.return %y : tensor<f32>\n"
        "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], "
        f"scatter_dims_to_operand_dims = {dims_to_operand}, index_vector_dim = 1>}}"
        f" : ({tensor((n, m))}, {tensor((b, k), 'i32')}, {tensor((b, w))}) -> {tensor((n, m))}",
        [tensor((n, m)), tensor((b, k), "i32"), tensor((b, w))],
        tensor((n, m)),
    )
    check_op(ops, [identity, every_index, update_reads])


def _windows(n, size, stride, low, high):
    """Operand positions of each window (padding positions dropped)."""
    count = (n + low + high - size) // stride + 1
    return [[p - low for p in range(i * stride, i * stride + size) if 0 <= p - low < n] for i in range(count)]


@pytest.mark.parametrize("seed", range(40))
def test_select_and_scatter(seed):
    """Output o receives the source elements whose window holds o; which one is chosen
    compares the operand over those windows (over-approximation: all of them)."""
    rng = random.Random(seed)
    rank = rng.randint(1, 2)
    shape = _shape(rng, rank, 1, 5)
    size = [rng.randint(1, n) for n in shape]
    stride = [rng.randint(1, 2) for _ in shape]
    pads = [(rng.randint(0, 1), rng.randint(0, 1)) for _ in shape]
    per_dim = [_windows(n, s, t, lo, hi) for n, s, t, (lo, hi) in zip(shape, size, stride, pads)]
    source = tuple(len(w) for w in per_dim)
    covering = {o: [i for i in indices(source) if all(o[a] in per_dim[a][i[a]] for a in range(rank))] for o in indices(shape)}
    source_reads = {(o, i) for o, sources in covering.items() for i in sources}
    operand_reads = {
        (o, x)
        for o, sources in covering.items()
        for i in sources
        for x in indices(shape)
        if all(x[a] in per_dim[a][i[a]] for a in range(rank))
    }
    init_reads = {(o, ()) for o in indices(shape)}
    ops = build(
        '"stablehlo.select_and_scatter"(%a0, %a1, %a2) ({\n'
        "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
        "    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
        "    stablehlo.return %c : tensor<i1>\n"
        "  }, {\n"
        "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
        "    %s = stablehlo.add %x, %y : tensor<f32>\n"
        "    stablehlo.return %s : tensor<f32>\n"
        f"  }}) {{window_dimensions = array<i64: {', '.join(map(str, size))}>, "
        f"window_strides = array<i64: {', '.join(map(str, stride))}>, "
        f"padding = dense<{[list(p) for p in pads]}> : tensor<{rank}x2xi64>}}"
        f" : ({tensor(shape)}, {tensor(source)}, tensor<f32>) -> {tensor(shape)}",
        [tensor(shape), tensor(source), "tensor<f32>"],
        tensor(shape),
    )
    check_op(ops, [operand_reads, source_reads, init_reads])


@pytest.mark.parametrize("seed", range(30))
def test_all_gather(seed):
    """Output position g * n + x along the gathered axis is element x of the operand of
    the g-th replica of the group."""
    rng = random.Random(seed)
    shape = _shape(rng, rng.randint(1, 3))
    axis = rng.randrange(len(shape))
    group = rng.randint(1, 3)
    result = tuple(n * group if i == axis else n for i, n in enumerate(shape))
    reads = {(o, tuple(v % shape[axis] if i == axis else v for i, v in enumerate(o))) for o in indices(result)}
    groups = np.arange(2 * group).reshape(2, group).tolist()
    ops = build(
        f'"stablehlo.all_gather"(%a0) {{all_gather_dim = {axis} : i64, '
        f"replica_groups = dense<{groups}> : tensor<2x{group}xi64>}} : ({tensor(shape)}) -> {tensor(result)}",
        [tensor(shape)],
        tensor(result),
    )
    check_op(ops, [reads])
    replica = output_to_input_indexing(ops[0]).replica_maps[0]
    assert replica.relation() == {(o, (o[axis] // shape[axis],)) for o in indices(result)}


def _physical_offset(index, shape, minor_to_major):
    major_to_minor = list(reversed(minor_to_major))
    return int(np.ravel_multi_index([index[d] for d in major_to_minor], [shape[d] for d in major_to_minor]))


def _factor(total, rank, rng):
    """A random shape of ``rank`` dims with ``total`` elements."""
    dims = []
    for _ in range(rank - 1):
        divisors = [d for d in range(1, total + 1) if total % d == 0]
        dims.append(rng.choice(divisors))
        total //= dims[-1]
    return tuple(dims + [total])


@pytest.mark.parametrize("seed", range(60))
def test_bitcast_with_layouts(seed):
    """Result element r is the source element at the same physical offset, each
    tensor's offset given by its layout (minor-to-major)."""
    rng = random.Random(seed)
    source = _shape(rng, rng.randint(1, 3))
    result = _factor(int(np.prod(source)), rng.randint(1, 3), rng)
    source_layout = rng.sample(range(len(source)), len(source))
    result_layout = rng.sample(range(len(result)), len(result))
    by_offset = {_physical_offset(i, source, source_layout): i for i in indices(source)}
    reads = {(r, by_offset[_physical_offset(r, result, result_layout)]) for r in indices(result)}
    op, _module = _parse_mhlo(
        [tensor(source)],
        [tensor(result)],
        f"mhlo.bitcast %a0 {{result_layout = dense<{result_layout}> : tensor<{len(result)}xindex>, "
        f"source_layout = dense<{source_layout}> : tensor<{len(source)}xindex>}} : ({tensor(source)}) -> {tensor(result)}",
    )
    _check_single(op, [reads])


@pytest.mark.parametrize("seed", range(30))
def test_scan(seed):
    """A cumulative sum over ``dimension``: output k reads its own element of input k
    (the body's elementwise map) and, through the carry, inputs before k (after k
    reversed); the maps read those earlier steps, and the inits, whole (the carry chain
    does not follow elements: an over-approximation holding every real dependence)."""
    rng = random.Random(seed)
    shape = _shape(rng, rng.randint(1, 2))
    dimension = rng.randrange(len(shape))
    reverse = rng.random() < 0.5
    slice_shape = tuple(n for i, n in enumerate(shape) if i != dimension)
    last = 0 if reverse else shape[dimension] - 1
    before = (lambda j, k: j > k) if reverse else (lambda j, k: j < k)
    same = lambda o, x: all(a == b for i, (a, b) in enumerate(zip(o, x)) if i != dimension)  # noqa: E731
    at_slice = lambda c, x: c == tuple(v for i, v in enumerate(x) if i != dimension)  # noqa: E731
    reads = {
        (o, x)
        for o in indices(shape)
        for x in indices(shape)
        if before(x[dimension], o[dimension]) or (x[dimension] == o[dimension] and same(o, x))
    }
    every_init = {(o, c) for o in indices(shape) for c in indices(slice_shape)}
    carry_inputs = {
        (c, x) for c in indices(slice_shape) for x in indices(shape) if x[dimension] != last or at_slice(c, x)
    }
    carry_inits = {(c, i) for c in indices(slice_shape) for i in indices(slice_shape)}
    body_type = tensor(slice_shape)
    op, _module = _parse_mhlo(
        [tensor(shape), body_type],
        [tensor(shape), body_type],
        f'"mhlo.scan"(%a0, %a1) <{{dimension = {dimension} : i64, is_associative = false, '
        f"is_reverse = {str(reverse).lower()}, operandSegmentSizes = array<i32: 1, 1>, "
        "resultSegmentSizes = array<i32: 1, 1>}> ({\n"
        f"  ^bb0(%x: {body_type}, %c: {body_type}):\n"
        f"    %s = mhlo.add %x, %c : {body_type}\n"
        f"    mhlo.return %s, %s : {body_type}, {body_type}\n"
        f"  }}) : ({tensor(shape)}, {body_type}) -> ({tensor(shape)}, {body_type})",
    )
    _check_single(op, [reads, every_init], 0)
    _check_single(op, [carry_inputs, carry_inits], 1)


@pytest.mark.parametrize(
    "source_layout, result_layout, result, message",
    [
        ([1, 0], [0, 1], (51, 16), "attribute 'source_layout' \\[1, 0\\] is not a permutation of the 3 dimensions"),
        ([2, 7, 0], [0, 1], (51, 16), "attribute 'source_layout' \\[2, 7, 0\\] is not a permutation"),
        ([2, 1, 0], [1, 1], (51, 16), "attribute 'result_layout' \\[1, 1\\] is not a permutation"),
        ([2, 1, 0], [0, 1], (50, 16), "different element counts"),
    ],
)
def test_malformed_bitcast_raises_an_error_not_a_crash(source_layout, result_layout, result, message):
    """Layouts the MHLO verifier lets through but that do not describe the shapes."""
    from hlo_indexing.errors import HloIndexingError

    source = (16, 17, 3)
    op, _module = _parse_mhlo(
        [tensor(source)],
        [tensor(result)],
        f"mhlo.bitcast %a0 {{result_layout = dense<{result_layout}> : tensor<{len(result_layout)}xindex>, "
        f"source_layout = dense<{source_layout}> : tensor<{len(source_layout)}xindex>}} : ({tensor(source)}) -> {tensor(result)}",
    )
    for analyse in (output_to_input_indexing, input_to_output_indexing):
        with pytest.raises(HloIndexingError, match=message):
            analyse(op, 0)
