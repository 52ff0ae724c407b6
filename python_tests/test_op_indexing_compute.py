"""Random property tests of the per-op maps of reductions, windows, contractions and
data-dependent ops, in StableHLO and MHLO, against dependences computed here by direct
reasoning over each op's definition (loops over small shapes).

Data-dependent ops are compared with the union over every possible (clamped) offset:
the relation of a map with runtime variables projects them out the same way."""

from __future__ import annotations

import itertools
import random

import pytest

from test_op_indexing_support import build, check_op, indices, tensor


def _shape(rng, rank, low=1, high=4):
    return tuple(rng.randint(low, high) for _ in range(rank))


@pytest.mark.parametrize("seed", range(30))
def test_reduce(seed):
    rng = random.Random(seed)
    shape = _shape(rng, rng.randint(1, 3))
    reduced = sorted(rng.sample(range(len(shape)), rng.randint(1, len(shape))))
    result = tuple(n for i, n in enumerate(shape) if i not in reduced)
    reads = {(tuple(x[i] for i in range(len(shape)) if i not in reduced), x) for x in indices(shape)}
    ops = build(
        f"stablehlo.reduce(%a0 init: %a1) applies stablehlo.add across dimensions = {reduced}"
        f" : ({tensor(shape)}, tensor<f32>) -> {tensor(result)}",
        [tensor(shape), "tensor<f32>"],
        tensor(result),
    )
    check_op(ops, [reads, {(o, ()) for o in indices(result)}])


@pytest.mark.parametrize("seed", range(30))
def test_dot_general(seed):
    rng = random.Random(seed)
    n_batch, n_contract = rng.randint(0, 1), rng.randint(0, 2)
    lhs_free, rhs_free = rng.randint(0, 1), rng.randint(0, 1)
    batch = _shape(rng, n_batch)
    contract = _shape(rng, n_contract)
    lf, rf = _shape(rng, lhs_free), _shape(rng, rhs_free)
    lhs_roles = [("b", i) for i in range(n_batch)] + [("c", i) for i in range(n_contract)] + [("f", i) for i in range(lhs_free)]
    rhs_roles = [("b", i) for i in range(n_batch)] + [("c", i) for i in range(n_contract)] + [("f", i) for i in range(rhs_free)]
    rng.shuffle(lhs_roles)
    rng.shuffle(rhs_roles)
    sizes = {"b": batch, "c": contract}

    def shape_of(roles, free):
        return tuple(free[i] if r == "f" else sizes[r][i] for r, i in roles)

    lhs, rhs = shape_of(lhs_roles, lf), shape_of(rhs_roles, rf)
    result = batch + lf + rf
    pos = lambda roles, kind: [roles.index((kind, i)) for i in range(len(sizes[kind]))]  # noqa: E731
    attr = (
        f"batching_dims = {pos(lhs_roles, 'b')} x {pos(rhs_roles, 'b')}, "
        f"contracting_dims = {pos(lhs_roles, 'c')} x {pos(rhs_roles, 'c')}"
    )
    lhs_reads, rhs_reads = set(), set()
    for b in indices(batch):
        for c in indices(contract):
            for x in indices(lf):
                for y in indices(rf):
                    values = {"b": b, "c": c}
                    out = b + x + y
                    lhs_reads.add((out, tuple(x[i] if r == "f" else values[r][i] for r, i in lhs_roles)))
                    rhs_reads.add((out, tuple(y[i] if r == "f" else values[r][i] for r, i in rhs_roles)))
    ops = build(
        f"stablehlo.dot_general %a0, %a1, {attr} : ({tensor(lhs)}, {tensor(rhs)}) -> {tensor(result)}",
        [tensor(lhs), tensor(rhs)],
        tensor(result),
    )
    check_op(ops, [lhs_reads, rhs_reads])


def _window_reads(out_index, window_index, operand, strides, low, base, dilation):
    """The operand element read at a window position, or None (padding / dilation hole)."""
    element = []
    for o, w, n, st, lo, b, di in zip(out_index, window_index, operand, strides, low, base, dilation):
        position = o * st + w * di - lo
        if position < 0 or position % b or position // b >= n:
            return None
        element.append(position // b)
    return tuple(element)


def _window_output_size(n, size, stride, lo, hi, base, dilation):
    padded = (n - 1) * base + 1 + lo + hi
    extent = (size - 1) * dilation + 1
    return 0 if padded < extent else (padded - extent) // stride + 1


@pytest.mark.parametrize("seed", range(40))
def test_reduce_window(seed):
    rng = random.Random(seed)
    rank = rng.randint(1, 2)
    operand = _shape(rng, rank, 1, 6)
    sizes = _shape(rng, rank, 1, 3)
    strides = _shape(rng, rank, 1, 2)
    base = _shape(rng, rank, 1, 2)
    dilation = _shape(rng, rank, 1, 2)
    padding = [(rng.randint(0, 2), rng.randint(0, 2)) for _ in range(rank)]
    result = tuple(
        _window_output_size(n, s, st, lo, hi, b, d)
        for n, s, st, (lo, hi), b, d in zip(operand, sizes, strides, padding, base, dilation)
    )
    if min(result) < 1:
        pytest.skip("empty output")
    reads = set()
    for o in indices(result):
        for w in indices(sizes):
            element = _window_reads(o, w, operand, strides, [p[0] for p in padding], base, dilation)
            if element is not None:
                reads.add((o, element))
    pad_text = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
    ops = build(
        '"stablehlo.reduce_window"(%a0, %a1) ({\n'
        "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
        "    %s = stablehlo.add %x, %y : tensor<f32>\n"
        "    stablehlo.return %s : tensor<f32>\n"
        f"  }}) {{window_dimensions = array<i64: {', '.join(map(str, sizes))}>, "
        f"window_strides = array<i64: {', '.join(map(str, strides))}>, "
        f"base_dilations = array<i64: {', '.join(map(str, base))}>, "
        f"window_dilations = array<i64: {', '.join(map(str, dilation))}>, "
        f"padding = dense<[{pad_text}]> : tensor<{rank}x2xi64>}}"
        f" : ({tensor(operand)}, tensor<f32>) -> {tensor(result)}",
        [tensor(operand), "tensor<f32>"],
        tensor(result),
    )
    check_op(ops, [reads, {(o, ()) for o in indices(result)}])


@pytest.mark.parametrize("seed", range(25))
def test_convolution(seed):
    """1 spatial dimension, layout [b, 0, f] x [0, i, o] -> [b, 0, f], with feature or
    batch groups, strides, padding, dilations and window reversal."""
    rng = random.Random(seed)
    groups = rng.randint(1, 2)
    feature_groups, batch_groups = (groups, 1) if rng.random() < 0.5 else (1, groups)
    out_batch = rng.randint(1, 2)
    in_batch = out_batch * batch_groups
    group_in = rng.randint(1, 2)
    in_features = group_in * feature_groups
    out_features = groups * rng.randint(1, 2)
    n, k = rng.randint(2, 6), rng.randint(1, 3)
    stride, lhs_dil, rhs_dil = rng.randint(1, 2), rng.randint(1, 2), rng.randint(1, 2)
    lo, hi = rng.randint(0, 2), rng.randint(0, 2)
    reverse = rng.random() < 0.5
    spatial = _window_output_size(n, k, stride, lo, hi, lhs_dil, rhs_dil)
    if spatial < 1:
        pytest.skip("empty output")
    lhs, rhs, result = (in_batch, n, in_features), (k, group_in, out_features), (out_batch, spatial, out_features)
    lhs_reads, rhs_reads = set(), set()
    for b, o, f in indices(result):
        group = f // (out_features // groups)
        batch = group * out_batch + b if batch_groups > 1 else b
        for w, c in itertools.product(range(k), range(group_in)):
            feature = group * group_in + c if feature_groups > 1 else c
            kernel = k - 1 - w if reverse else w
            element = _window_reads((o,), (w,), (n,), (stride,), (lo,), (lhs_dil,), (rhs_dil,))
            if element is not None:  # a tap on padding or a dilation hole reads nothing
                lhs_reads.add(((b, o, f), (batch, element[0], feature)))
                rhs_reads.add(((b, o, f), (kernel, c, f)))
    ops = build(
        f"stablehlo.convolution(%a0, %a1) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], "
        f"window = {{stride = [{stride}], pad = [[{lo}, {hi}]], lhs_dilate = [{lhs_dil}], "
        f"rhs_dilate = [{rhs_dil}], reverse = [{str(reverse).lower()}]}} "
        f"{{batch_group_count = {batch_groups} : i64, feature_group_count = {feature_groups} : i64}}"
        f" : ({tensor(lhs)}, {tensor(rhs)}) -> {tensor(result)}",
        [tensor(lhs), tensor(rhs)],
        tensor(result),
    )
    check_op(ops, [lhs_reads, rhs_reads])


@pytest.mark.parametrize("seed", range(20))
def test_dynamic_slice(seed):
    """Union over every clamped start: output o reads operand o + start."""
    rng = random.Random(seed)
    operand = _shape(rng, rng.randint(1, 2), 1, 5)
    sizes = tuple(rng.randint(1, n) for n in operand)
    reads = set()
    for start in indices(tuple(n - s + 1 for n, s in zip(operand, sizes))):
        reads |= {(o, tuple(a + b for a, b in zip(o, start))) for o in indices(sizes)}
    scalars = {(o, ()) for o in indices(sizes)}
    starts = ", ".join(f"%a{i + 1}" for i in range(len(operand)))
    types = ", ".join([tensor(operand)] + ["tensor<i32>"] * len(operand))
    ops = build(
        f"stablehlo.dynamic_slice %a0, {starts}, sizes = {list(sizes)} : ({types}) -> {tensor(sizes)}",
        [tensor(operand)] + ["tensor<i32>"] * len(operand),
        tensor(sizes),
    )
    check_op(ops, [reads] + [scalars] * len(operand))


@pytest.mark.parametrize("seed", range(20))
def test_dynamic_update_slice(seed):
    """The operand is read everywhere (over-approximation: overwritten elements are
    not); the update covers o at some clamped start."""
    rng = random.Random(seed)
    operand = _shape(rng, rng.randint(1, 2), 1, 5)
    update = tuple(rng.randint(1, n) for n in operand)
    reads = set()
    for start in indices(tuple(n - u + 1 for n, u in zip(operand, update))):
        reads |= {(tuple(a + b for a, b in zip(u, start)), u) for u in indices(update)}
    everywhere = {(o, o) for o in indices(operand)}
    scalars = {(o, ()) for o in indices(operand)}
    starts = ", ".join(f"%a{i + 2}" for i in range(len(operand)))
    types = ", ".join([tensor(operand), tensor(update)] + ["tensor<i32>"] * len(operand))
    ops = build(
        f"stablehlo.dynamic_update_slice %a0, %a1, {starts} : ({types}) -> {tensor(operand)}",
        [tensor(operand), tensor(update)] + ["tensor<i32>"] * len(operand),
        tensor(operand),
    )
    check_op(ops, [everywhere, reads] + [scalars] * len(operand))


@pytest.mark.parametrize("seed", range(20))
def test_gather(seed):
    """Row gather ``operand[N, M]``, ``indices[B, 1]`` over dim 0 with slice [s, M]:
    output (b, i, j) reads operand (start + i, j) for any clamped start, and the index
    vector of batch b."""
    rng = random.Random(seed)
    n, m, b = rng.randint(1, 5), rng.randint(1, 3), rng.randint(1, 3)
    s = rng.randint(1, n)
    result = (b, s, m)
    reads = {((x, i, j), (start + i, j)) for x, i, j in indices(result) for start in range(n - s + 1)}
    index_reads = {((x, i, j), (x, 0)) for x, i, j in indices(result)}
    ops = build(
        '"stablehlo.gather"(%a0, %a1) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], '
        f"start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: {s}, {m}>}}"
        f" : ({tensor((n, m))}, {tensor((b, 1), 'i32')}) -> {tensor(result)}",
        [tensor((n, m)), tensor((b, 1), "i32")],
        tensor(result),
    )
    check_op(ops, [reads, index_reads])


@pytest.mark.parametrize("seed", range(10))
def test_sort(seed):
    """Any element along the sorted dimension may land at any position along it."""
    rng = random.Random(seed)
    shape = _shape(rng, rng.randint(1, 2))
    dim = rng.randrange(len(shape))
    reads = {(o, x) for o in indices(shape) for x in indices(shape)
             if all(a == c for i, (a, c) in enumerate(zip(o, x)) if i != dim)}
    ops = build(
        '"stablehlo.sort"(%a0) ({\n'
        "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
        "    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
        "    stablehlo.return %c : tensor<i1>\n"
        f"  }}) {{dimension = {dim} : i64}} : ({tensor(shape)}) -> {tensor(shape)}",
        [tensor(shape)],
        tensor(shape),
    )
    check_op(ops, [reads])
