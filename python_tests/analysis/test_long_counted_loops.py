"""Counted loops whose body's carries read each other in a cycle (no iteration-number
form: :mod:`hlo_indexing.ops.loop_iterations` gives up) are composed step by step; the
steps end where the maps settle or repeat (the step ``n`` lands on is then known), so a
count of ``10**12`` costs a few steps, and past ``MAX_COUNTED_STEPS`` steps without
either the loop reads the carries it may depend on whole, and says so. Checked against
a provenance run of the loop in numpy (by powers of its permutation for huge counts)."""

from __future__ import annotations

import numpy as np
import pytest

from hlo_indexing import fusion_indexing, parse_module
from hlo_indexing.ops.loops import LONG, MAX_COUNTED_STEPS


def swap_loop(count: int, size: int, shift: bool) -> str:
    """``x, y = reverse(y), x`` (``shift``: ``x, y = y[1:] ++ [0], x``) ``count`` times;
    returns ``x``."""
    if shift:
        step = (
            f"%s = stablehlo.slice %y [1:{size}] : (tensor<{size}xf32>) -> tensor<{size - 1}xf32>\n"
            "    %z = stablehlo.constant dense<0.0> : tensor<1xf32>\n"
            f"    %r = stablehlo.concatenate %s, %z, dim = 0 : (tensor<{size - 1}xf32>, tensor<1xf32>) -> tensor<{size}xf32>"
        )
    else:
        step = f"%r = stablehlo.reverse %y, dims = [0] : tensor<{size}xf32>"
    t = f"tensor<{size}xf32>"
    return f"""func.func @swap(%a: {t}, %b: {t}) -> {t} {{
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %w:3 = stablehlo.while(%i = %c0, %x = %a, %y = %b) : tensor<i64>, {t}, {t}
  cond {{
    %n = stablehlo.constant dense<{count}> : tensor<i64>
    %lt = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i64>
    %next = stablehlo.add %i, %one : tensor<i64>
    {step}
    stablehlo.return %next, %r, %x : tensor<i64>, {t}, {t}
  }}
  return %w#1 : {t}
}}"""


def step_matrix(size: int, shift: bool) -> np.ndarray:
    """The 0/1 matrix of one step on the state ``(x, y)``: entry ``[i, j]`` is 1 when
    new state element ``i`` reads state element ``j``."""
    m = np.zeros((2 * size, 2 * size), np.int64)
    for j in range(size):
        source = j + 1 if shift else size - 1 - j
        if source < size:
            m[j, size + source] = 1  # x[j] reads y[source]
        m[size + j, j] = 1  # y[j] reads x[j]
    return m


def provenance(count: int, size: int, shift: bool) -> list[set]:
    """Per argument, the (x element, argument element) pairs after ``count`` steps (the
    step matrix's power by squaring, entries kept 0/1)."""
    result, power, n = np.eye(2 * size, dtype=np.int64), step_matrix(size, shift), count
    while n:
        if n & 1:
            result = np.minimum(result @ power, 1)
        power = np.minimum(power @ power, 1)
        n >>= 1
    return [{((i,), (j - k * size,)) for i, j in zip(*np.nonzero(result[:size])) if k * size <= j < (k + 1) * size}
            for k in range(2)]


def shifted_provenance(count: int, size: int) -> list[set]:
    """:func:`provenance` of the shifting loop by a run on source tags (``-1``: the
    constant 0); after ``2 * size`` steps every element is the constant, and stays so."""
    x, y = np.arange(size), np.arange(size) + size
    for _ in range(min(count, 2 * size + 1)):
        x, y = np.concatenate([y[1:], [-1]]), x
    return [{((i,), (int(v) - k * size,)) for i, v in enumerate(x) if k * size <= v < (k + 1) * size} for k in range(2)]


def relations(text: str):
    module = parse_module(text)
    fused = fusion_indexing(module.body.operations[0])
    return [set().union(*(m.relation() for m in maps)) for maps in fused.maps], fused.over_approximated


@pytest.mark.parametrize("count", [0, 1, 2, 3, 7, 10**12 + 1, 10**12 + 2])
def test_a_repeating_loop_lands_on_the_step_its_count_gives(count) -> None:
    found, _ = relations(swap_loop(count, 3, shift=False))
    assert found == provenance(count, 3, shift=False)


def test_a_loop_neither_settling_nor_repeating_reads_whole_and_says_so() -> None:
    size = MAX_COUNTED_STEPS // 2 + 8  # the shifted state takes 2 * size distinct steps to settle
    found, notes = relations(swap_loop(10**9, size, shift=True))
    assert any(LONG in note for note in notes), notes
    expected = shifted_provenance(10**9, size)
    assert all(e <= f for e, f in zip(expected, found, strict=True))
    short, short_notes = relations(swap_loop(5, size, shift=True))  # composed step by step, exactly
    assert shifted_provenance(5, 6) == provenance(5, 6, shift=True)  # the two brute forces agree
    assert short == shifted_provenance(5, size) and not any(LONG in note for note in short_notes)
