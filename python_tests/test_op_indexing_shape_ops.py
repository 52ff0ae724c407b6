"""Random property tests of the per-op maps of data-movement ops (elementwise,
broadcast, transpose, reverse, slice, reshape, concatenate, pad), in StableHLO and MHLO,
against numpy: the op is applied to an array of element ids, so each output element
names the input element it reads."""

from __future__ import annotations

import random

import numpy as np
import pytest

from test_op_indexing_support import build, check_op, id_relation, ids, indices, tensor

SEEDS = range(40)


def _shape(rng, rank=None, low=1, high=4):
    rank = rng.randint(0, 3) if rank is None else rank
    return tuple(rng.randint(low, high) for _ in range(rank))


@pytest.mark.parametrize("seed", SEEDS)
def test_transpose(seed):
    rng = random.Random(seed)
    shape = _shape(rng, rng.randint(1, 4))
    perm = list(range(len(shape)))
    rng.shuffle(perm)
    out = ids(shape).transpose(perm)
    ops = build(
        f"stablehlo.transpose %a0, dims = {perm} : ({tensor(shape)}) -> {tensor(out.shape)}",
        [tensor(shape)],
        tensor(out.shape),
    )
    check_op(ops, [id_relation(out, shape)])


@pytest.mark.parametrize("seed", SEEDS)
def test_reverse(seed):
    rng = random.Random(seed)
    shape = _shape(rng, rng.randint(1, 3))
    dims = sorted(rng.sample(range(len(shape)), rng.randint(1, len(shape))))
    out = np.flip(ids(shape), dims)
    ops = build(f"stablehlo.reverse %a0, dims = {dims} : {tensor(shape)}", [tensor(shape)], tensor(shape))
    check_op(ops, [id_relation(out, shape)])


@pytest.mark.parametrize("seed", SEEDS)
def test_slice(seed):
    rng = random.Random(seed)
    shape = _shape(rng, rng.randint(1, 3), 1, 9)
    starts = [rng.randint(0, n - 1) for n in shape]
    limits = [rng.randint(s + 1, n) for s, n in zip(starts, shape)]
    strides = [rng.randint(1, 3) for _ in shape]
    out = ids(shape)[tuple(slice(s, l, k) for s, l, k in zip(starts, limits, strides))]
    spec = ", ".join(f"{s}:{l}:{k}" for s, l, k in zip(starts, limits, strides))
    ops = build(
        f"stablehlo.slice %a0 [{spec}] : ({tensor(shape)}) -> {tensor(out.shape)}", [tensor(shape)], tensor(out.shape)
    )
    check_op(ops, [id_relation(out, shape)])


_RESHAPES = [((4, 8), (32,)), ((32,), (4, 8)), ((4, 8), (2, 4, 4)), ((2, 4, 4), (4, 8)), ((4, 6, 2), (8, 3, 2)),
             ((16, 8), (4, 4, 8)), ((1, 6), (6, 1)), ((3, 1, 4), (12,)), ((6,), (1, 2, 1, 3)), ((), (1, 1)), ((2, 3, 5), (5, 6))]


@pytest.mark.parametrize("src,dst", _RESHAPES)
def test_reshape(src, dst):
    out = ids(src).reshape(dst)
    ops = build(f"stablehlo.reshape %a0 : ({tensor(src)}) -> {tensor(dst)}", [tensor(src)], tensor(dst))
    check_op(ops, [id_relation(out, src)])


@pytest.mark.parametrize("seed", SEEDS)
def test_broadcast_in_dim(seed):
    rng = random.Random(seed)
    result = _shape(rng, rng.randint(1, 3))
    dims = sorted(rng.sample(range(len(result)), rng.randint(0, len(result))))
    operand = tuple(rng.choice([result[d], 1]) for d in dims)
    expanded = [1] * len(result)
    for j, d in enumerate(dims):
        expanded[d] = operand[j]
    out = np.broadcast_to(ids(operand).reshape(expanded), result)
    ops = build(
        f"stablehlo.broadcast_in_dim %a0, dims = {dims} : ({tensor(operand)}) -> {tensor(result)}",
        [tensor(operand)],
        tensor(result),
    )
    check_op(ops, [id_relation(out, operand)])


@pytest.mark.parametrize("seed", SEEDS)
def test_concatenate(seed):
    rng = random.Random(seed)
    base = list(_shape(rng, rng.randint(1, 3)))
    axis = rng.randrange(len(base))
    shapes = []
    for _ in range(rng.randint(1, 3)):
        shape = list(base)
        shape[axis] = rng.randint(1, 4)
        shapes.append(tuple(shape))
    result = list(base)
    result[axis] = sum(s[axis] for s in shapes)
    expected = []
    for k, shape in enumerate(shapes):
        parts = [ids(s) if j == k else np.full(s, -1) for j, s in enumerate(shapes)]
        expected.append(id_relation(np.concatenate(parts, axis), shape))
    args = ", ".join(f"%a{k}" for k in range(len(shapes)))
    types = ", ".join(tensor(s) for s in shapes)
    ops = build(
        f"stablehlo.concatenate {args}, dim = {axis} : ({types}) -> {tensor(result)}",
        [tensor(s) for s in shapes],
        tensor(result),
    )
    check_op(ops, expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_pad(seed):
    """Operand element i lands at ``low + i * (interior + 1)`` when inside the output;
    every other output element reads the padding value."""
    rng = random.Random(seed)
    shape = _shape(rng, rng.randint(1, 2), 1, 5)
    low = [rng.randint(-3, 3) for _ in shape]
    high = [rng.randint(-3, 3) for _ in shape]
    interior = [rng.randint(0, 2) for _ in shape]
    result = [l + h + n + (n - 1) * i for l, h, n, i in zip(low, high, shape, interior)]
    if min(result) < 1:
        pytest.skip("padding removes everything")
    out = np.full(result, -1, dtype=np.int64)
    for index in indices(shape):
        position = tuple(l + x * (i + 1) for l, x, i in zip(low, index, interior))
        if all(0 <= p < n for p, n in zip(position, result)):
            out[position] = np.ravel_multi_index(index, shape)
    padding = {(tuple(o), ()) for o in indices(result) if out[tuple(o)] < 0}
    ops = build(
        f"stablehlo.pad %a0, %a1, low = {low}, high = {high}, interior = {interior}"
        f" : ({tensor(shape)}, tensor<f32>) -> {tensor(result)}",
        [tensor(shape), "tensor<f32>"],
        tensor(result),
    )
    check_op(ops, [id_relation(out, shape), padding])


@pytest.mark.parametrize("seed", range(10))
def test_select_with_scalar_predicate(seed):
    rng = random.Random(seed)
    shape = _shape(rng, rng.randint(1, 3))
    every = {(o, o) for o in indices(shape)}
    ops = build(
        f"stablehlo.select %a0, %a1, %a2 : tensor<i1>, {tensor(shape)}",
        ["tensor<i1>", tensor(shape), tensor(shape)],
        tensor(shape),
    )
    check_op(ops, [{(o, ()) for o in indices(shape)}, every, every])


@pytest.mark.parametrize("op", ["add", "multiply", "maximum", "atan2"])
def test_binary_elementwise(op):
    shape = (3, 4)
    every = {(o, o) for o in indices(shape)}
    ops = build(f"stablehlo.{op} %a0, %a1 : {tensor(shape)}", [tensor(shape)] * 2, tensor(shape))
    check_op(ops, [every, every])
