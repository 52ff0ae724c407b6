"""The ``RuntimeSource`` contract (``op_indexing.result``), checked by brute force for
every producer of runtime variables (dynamic_slice, dynamic_update_slice, gather,
scatter), in both directions.

For random index data, each map is *instantiated*: a point ``(d, s, rt)`` of its domain
is kept when every ``rtN`` equals the value read at ``source.index_map(d, s)`` (clamped
into ``rtN``'s range for the ops that clamp; scatter's data is in range, its
out-of-range windows being skipped). The instantiated relation must equal the exact
dependence of the op on that data, computed here with numpy from the StableHLO
definition. A source map read over the wrong index space (e.g. update positions taken
for output positions) gives a different relation. Each source map must also be over the
map's variables (its dimensions, no symbols or the map's range variables) and stay in
bounds of its operand over the map's domain."""

from __future__ import annotations

import random

import numpy as np
import pytest

from hlo_indexing import input_to_output_indexing, output_to_input_indexing
from hlo_indexing.maps import affine_expr as ax

from test_op_indexing_support import build, indices, tensor


def _instantiated(m, sources, data: dict, clamp: bool) -> set:
    """``m``'s relation once each runtime variable takes the value its source reads in
    ``data`` (operand index -> array), checking the source against ``m``'s variables."""
    n_d, n_s = m.num_dims, len(m.range_vars)
    assert len(sources) == len(m.runtime_vars)
    points, images = m.enumerate()
    keep = np.ones(len(points), bool)
    for i, (variable, source) in enumerate(zip(m.runtime_vars, sources, strict=True)):
        over = source.index_map
        assert over.num_dims == n_d and over.num_symbols in (0, n_s) and not over.runtime_vars, (str(m), str(over))
        dims = [points[:, j] for j in range(n_d)]
        symbols = [points[:, n_d + j] for j in range(over.num_symbols)]
        for row in points[:, : n_d + over.num_symbols]:
            assert over.contains_point(row[:n_d].tolist(), row[n_d:].tolist()), (str(over), row)
        array = data[source.operand]
        element = tuple(ax.evaluate_array(e, dims, symbols) for e in over.results) if over.results else ()
        for axis, position in enumerate(element):
            assert ((0 <= position) & (position < array.shape[axis])).all(), f"{over} leaves operand {source.operand}"
        values = array[element] if element else np.full(len(points), int(array))
        if clamp:
            values = np.clip(values, variable.bounds.lower, variable.bounds.upper)
        keep &= points[:, n_d + n_s + i] == values
    return {(tuple(p[:n_d].tolist()), tuple(x.tolist())) for p, x in zip(points[keep], images[keep])}


def _check(op, data: dict, truth: dict, clamp: bool) -> int:
    """For every operand ``k`` in ``truth`` (its exact output -> operand relation), both
    directions instantiated against ``data``; returns the number of sources checked."""
    checked = 0
    for k, expected in truth.items():
        forward = output_to_input_indexing(op, 0)
        backward = input_to_output_indexing(op, k)
        for indexing, entry, pairs in ((forward, k, expected), (backward, 0, {(i, o) for o, i in expected})):
            sources = indexing.runtime[entry]
            assert sources, f"no runtime variables\n{indexing}"
            got = set().union(*(_instantiated(m, sources, data, clamp) for m in indexing.maps[entry]))
            assert got == pairs, (str(indexing), sorted(got ^ pairs)[:4])
            checked += len(sources)
    return checked


def _shape(rng, rank, high=4):
    return tuple(rng.randint(1, high) for _ in range(rank))


def _window_layout(rng):
    """Random gather/scatter dimension numbers without batching dimensions: operand
    shape, dims dropped from the window (size-1), window sizes, started dims (in index
    vector order), position of the batch dim among the space's dims, index_vector_dim."""
    operand = _shape(rng, rng.randint(1, 3))
    rank = len(operand)
    dropped = sorted(rng.sample(range(rank), rng.randint(0, rank)))
    sizes = [1 if i in dropped else rng.randint(1, operand[i]) for i in range(rank)]
    started = rng.sample(range(rank), rng.randint(1, rank))
    batch_position = rng.randint(0, rank - len(dropped))
    return operand, dropped, sizes, started, batch_position, rng.randint(0, 1)


def _space(operand, dropped, sizes, batch, batch_position):
    windowed = [sizes[i] for i in range(len(operand)) if i not in dropped]
    shape = windowed[:batch_position] + [batch] + windowed[batch_position:]
    window_dims = [i for i in range(len(shape)) if i != batch_position]
    return tuple(shape), window_dims


def _operand_index(position, started_values, dropped, window_dims):
    """Operand element read/written by space ``position`` from its window start."""
    window = iter(position[i] for i in window_dims)
    return tuple(start + (0 if i in dropped else next(window)) for i, start in enumerate(started_values))


def _starts(index_data, x, started, operand, sizes, vector_dim, clamp):
    vector = index_data[x, :] if vector_dim == 1 else index_data[:, x]
    full = [0] * len(operand)
    for k, d in enumerate(started):
        value = int(vector[k])
        full[d] = min(max(value, 0), operand[d] - sizes[d]) if clamp else value
    return full


def _indices_type(batch, started, vector_dim):
    return (batch, len(started)) if vector_dim == 1 else (len(started), batch)


@pytest.mark.parametrize("seed", range(25))
def test_gather_sources(seed):
    """Result position ``o`` reads operand ``clamp(start(batch(o))) + window(o)``; the
    start index vector is read (both directions) at ``o``'s batch position."""
    rng = np.random.default_rng(seed)
    operand, dropped, sizes, started, batch_position, vector_dim = _window_layout(random.Random(seed))
    batch = int(rng.integers(1, 4))
    result, offset_dims = _space(operand, dropped, sizes, batch, batch_position)
    index_shape = _indices_type(batch, started, vector_dim)
    index_data = rng.integers(-2, max(operand) + 2, size=index_shape)
    truth = set()
    for o in indices(result):
        start = _starts(index_data, o[batch_position], started, operand, sizes, vector_dim, clamp=True)
        truth.add((o, _operand_index(o, start, dropped, offset_dims)))
    ops = build(
        '"stablehlo.gather"(%a0, %a1) {dimension_numbers = #stablehlo.gather<'
        f"offset_dims = {offset_dims}, collapsed_slice_dims = {dropped}, start_index_map = {started}, "
        f"index_vector_dim = {vector_dim}>, slice_sizes = array<i64: {', '.join(map(str, sizes))}>}}"
        f" : ({tensor(operand)}, {tensor(index_shape, 'i32')}) -> {tensor(result)}",
        [tensor(operand), tensor(index_shape, "i32")],
        tensor(result),
    )
    for op in ops[:2]:
        assert _check(op, {1: index_data}, {0: truth}, clamp=True) == 2 * len(started)


@pytest.mark.parametrize("seed", range(25))
def test_scatter_sources(seed):
    """Update position ``u`` lands at ``start(batch(u)) + window(u)`` (starts in range:
    out-of-range windows are skipped). Output -> update maps hold the update position
    as range variables; their sources must read the index vector of *that* position."""
    rng = np.random.default_rng(seed)
    operand, dropped, sizes, started, batch_position, vector_dim = _window_layout(random.Random(seed))
    batch = int(rng.integers(1, 4))
    update, window_dims = _space(operand, dropped, sizes, batch, batch_position)
    index_shape = _indices_type(batch, started, vector_dim)
    index_data = np.zeros(index_shape, np.int64)
    for k, d in enumerate(started):
        column = rng.integers(0, operand[d] - sizes[d] + 1, size=batch)
        if vector_dim == 1:
            index_data[:, k] = column
        else:
            index_data[k, :] = column
    truth = set()
    for u in indices(update):
        start = _starts(index_data, u[batch_position], started, operand, sizes, vector_dim, clamp=False)
        truth.add((_operand_index(u, start, dropped, window_dims), u))
    ops = build(
        '"stablehlo.scatter"(%a0, %a1, %a2) ({\n'
        "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
        "    %s = stablehlo.add %x, %y : tensor<f32>\n"
        "    stablehlo.return %s : tensor<f32>\n"
        "  }) {scatter_dimension_numbers = #stablehlo.scatter<"
        f"update_window_dims = {window_dims}, inserted_window_dims = {dropped}, "
        f"scatter_dims_to_operand_dims = {started}, index_vector_dim = {vector_dim}>}}"
        f" : ({tensor(operand)}, {tensor(index_shape, 'i32')}, {tensor(update)}) -> {tensor(operand)}",
        [tensor(operand), tensor(index_shape, "i32"), tensor(update)],
        tensor(operand),
    )
    for op in ops[:2]:
        assert _check(op, {1: index_data}, {2: truth}, clamp=False) == 2 * len(started)


@pytest.mark.parametrize("seed", range(15))
def test_dynamic_slice_sources(seed):
    """Output ``o`` reads operand ``o + clamp(start)``; each start is a scalar operand."""
    rng = np.random.default_rng(seed)
    operand = _shape(random.Random(seed), int(rng.integers(1, 3)), 5)
    sizes = tuple(int(rng.integers(1, n + 1)) for n in operand)
    starts = [np.array(int(rng.integers(-2, n + 2))) for n in operand]
    clamped = [min(max(int(s), 0), n - z) for s, n, z in zip(starts, operand, sizes)]
    truth = {(o, tuple(a + b for a, b in zip(o, clamped))) for o in indices(sizes)}
    names = ", ".join(f"%a{i + 1}" for i in range(len(operand)))
    types = [tensor(operand)] + ["tensor<i32>"] * len(operand)
    ops = build(
        f"stablehlo.dynamic_slice %a0, {names}, sizes = {list(sizes)} : ({', '.join(types)}) -> {tensor(sizes)}",
        types,
        tensor(sizes),
    )
    data = {1 + i: s for i, s in enumerate(starts)}
    for op in ops[:2]:
        assert _check(op, data, {0: truth}, clamp=True) == 2 * len(operand)


@pytest.mark.parametrize("seed", range(15))
def test_dynamic_update_slice_sources(seed):
    """Update position ``u`` lands at ``u + clamp(start)``."""
    rng = np.random.default_rng(seed)
    operand = _shape(random.Random(seed), int(rng.integers(1, 3)), 5)
    update = tuple(int(rng.integers(1, n + 1)) for n in operand)
    starts = [np.array(int(rng.integers(-2, n + 2))) for n in operand]
    clamped = [min(max(int(s), 0), n - z) for s, n, z in zip(starts, operand, update)]
    truth = {(tuple(a + b for a, b in zip(u, clamped)), u) for u in indices(update)}
    names = ", ".join(f"%a{i + 2}" for i in range(len(operand)))
    types = [tensor(operand), tensor(update)] + ["tensor<i32>"] * len(operand)
    ops = build(
        f"stablehlo.dynamic_update_slice %a0, %a1, {names} : ({', '.join(types)}) -> {tensor(operand)}",
        types,
        tensor(operand),
    )
    data = {2 + i: s for i, s in enumerate(starts)}
    for op in ops[:2]:
        assert _check(op, data, {1: truth}, clamp=True) == 2 * len(operand)
