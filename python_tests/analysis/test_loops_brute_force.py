"""Counted ``while`` loops (the form JAX gives ``scan``) against a brute force: the
loop is run on element provenance (each value an array of sets of argument elements),
and the fused maps of ``@main`` must contain every (result element, argument element)
pair the run finds (sound); for the input rows and the carry's init they must be
exactly those pairs when the carry keeps or rewrites its elements (the stacked
output's own init is over-approximated: rows that get overwritten still read it)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import hlo_indexing
from hlo_indexing import fusion_indexing, parse_module


def _t(*shape: int) -> str:
    return "tensor<" + "".join(f"{n}x" for n in shape) + "f32>"


def loop_text(n: int, m: int, reverse: bool, mode: str) -> str:
    """``acc`` keeps (``acc + row``), rewrites (``row * row``) or mixes
    (``reverse(acc) + row``) its elements; row ``idx`` (``t``, or ``n - 1 - t``) of the
    stacked output is ``acc' + row``."""
    index = (
        f"%last = stablehlo.constant dense<{n - 1}> : tensor<i32>\n"
        "    %idx = stablehlo.subtract %last, %i : tensor<i32>"
        if reverse
        else "%idx = stablehlo.add %i, %z : tensor<i32>"
    )
    update = {
        "keeps": f"%acc2 = stablehlo.add %acc, %row : {_t(m)}",
        "rewrites": f"%acc2 = stablehlo.multiply %row, %row : {_t(m)}",
        "mixes": f"%r = stablehlo.reverse %acc, dims = [0] : {_t(m)}\n    %acc2 = stablehlo.add %r, %row : {_t(m)}",
    }[mode]
    return f"""
func.func @main(%xs: {_t(n, m)}, %a0: {_t(m)}, %ys0: {_t(n, m)}) -> ({_t(m)}, {_t(n, m)}) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %w:4 = stablehlo.while(%i = %c0, %x = %xs, %acc = %a0, %ys = %ys0) : tensor<i32>, {_t(n, m)}, {_t(m)}, {_t(n, m)}
   cond {{
    %n = stablehlo.constant dense<{n}> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }} do {{
    %z = stablehlo.constant dense<0> : tensor<i32>
    {index}
    %row2 = stablehlo.dynamic_slice %x, %idx, %z, sizes = [1, {m}] : ({_t(n, m)}, tensor<i32>, tensor<i32>) -> {_t(1, m)}
    %row = stablehlo.reshape %row2 : ({_t(1, m)}) -> {_t(m)}
    {update}
    %y = stablehlo.add %acc2, %row : {_t(m)}
    %y2 = stablehlo.reshape %y : ({_t(m)}) -> {_t(1, m)}
    %ys2 = stablehlo.dynamic_update_slice %ys, %y2, %idx, %z : ({_t(n, m)}, {_t(1, m)}, tensor<i32>, tensor<i32>) -> {_t(n, m)}
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %x, %acc2, %ys2 : tensor<i32>, {_t(n, m)}, {_t(m)}, {_t(n, m)}
  }}
  return %w#2, %w#3 : {_t(m)}, {_t(n, m)}
}}"""


def _tags(argument: int, shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(shape, dtype=object)
    for index in itertools.product(*(range(k) for k in shape)):
        out[index] = frozenset({(argument, index)})
    return out


def _union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.empty(a.shape, dtype=object)
    for index in itertools.product(*(range(k) for k in a.shape)):
        out[index] = a[index] | b[index]
    return out


def run(n: int, m: int, reverse: bool, mode: str) -> list[np.ndarray]:
    """The loop on provenance: per result, an array of sets of (argument, index)."""
    xs, acc, ys = _tags(0, (n, m)), _tags(1, (m,)), _tags(2, (n, m))
    for t in range(n):
        idx = n - 1 - t if reverse else t
        row = xs[idx]
        acc = {"keeps": _union(acc, row), "rewrites": row, "mixes": _union(acc[::-1], row)}[mode]
        ys = ys.copy()
        ys[idx] = _union(acc, row)
    return [acc, ys]


def pairs_of(result: np.ndarray) -> list[set]:
    out: list[set] = [set(), set(), set()]
    for index in itertools.product(*(range(k) for k in result.shape)):
        for argument, element in result[index]:
            out[argument].add((index, element))
    return out


CASES = [(n, m, reverse, mode) for n, m in [(4, 3), (3, 2)] for reverse in (False, True)
         for mode in ("keeps", "rewrites", "mixes")]


@pytest.mark.parametrize("n, m, reverse, mode", CASES)
def test_counted_loop_maps_against_a_provenance_run(n, m, reverse, mode) -> None:
    module = parse_module(loop_text(n, m, reverse, mode))
    main = module.body.operations[0]
    for r, result in enumerate(run(n, m, reverse, mode)):
        fused = fusion_indexing(main, r)
        expected = pairs_of(result)
        for k, maps in enumerate(fused.maps):
            ours = set().union(*(mp.relation() for mp in maps)) if maps else set()
            assert expected[k] <= ours, f"result {r} arg {k} misses {sorted(expected[k] - ours)[:3]}"
            if mode != "mixes" and k < 2:
                assert ours == expected[k], f"result {r} arg {k} over-approximates {sorted(ours - expected[k])[:3]}"


def two_loops_text(n: int, m: int) -> str:
    """Two counted loops of ``n - 1`` iterations, ``acc += row(xs, i)`` through one called
    function: the first from ``i = 0``, the second from ``i = 1``. The called
    ``dynamic_slice`` and the maps into it are the same in both walks; only the value
    bound to ``i`` differs."""
    loop = """stablehlo.while(%i = {start}, %x = %xs, %acc = {init}) : tensor<i32>, {xs}, {row}
   cond {{
    %n = stablehlo.constant dense<{bound}> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }} do {{
    %r = func.call @row(%x, %i) : ({xs}, tensor<i32>) -> {row}
    %acc2 = stablehlo.add %acc, %r : {row}
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %x, %acc2 : tensor<i32>, {xs}, {row}
  }}"""
    xs, row = _t(n, m), _t(m)
    first = loop.format(start="%c0", init="%a0", bound=n - 1, xs=xs, row=row)
    second = loop.format(start="%c1", init="%b0", bound=n, xs=xs, row=row)
    return f"""
func.func private @row(%x: {xs}, %i: tensor<i32>) -> {row} {{
  %z = stablehlo.constant dense<0> : tensor<i32>
  %r2 = stablehlo.dynamic_slice %x, %i, %z, sizes = [1, {m}] : ({xs}, tensor<i32>, tensor<i32>) -> {_t(1, m)}
  %r = stablehlo.reshape %r2 : ({_t(1, m)}) -> {row}
  return %r : {row}
}}
func.func @main(%xs: {xs}, %a0: {row}, %b0: {row}) -> ({row}, {row}) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %w:3 = {first}
  %v:3 = {second}
  return %w#2, %v#2 : {row}, {row}
}}"""


def test_loops_sharing_a_called_slice_read_their_own_rows() -> None:
    """The analysis remembers the compositions of the loops' body walks: the same maps
    folded under another induction value must not reuse the first loop's answer."""
    n, m = 4, 3
    main = hlo_indexing.analyze(two_loops_text(n, m)).computation("main")
    for r, start in enumerate((0, 1)):
        xs, acc = _tags(0, (n, m)), _tags(1 + r, (m,))
        for i in range(start, start + n - 1):
            acc = _union(acc, xs[i])
        expected = pairs_of(acc)
        for k, maps in enumerate(main.maps[r].maps):
            ours = set().union(*(mp.relation() for mp in maps)) if maps else set()
            assert ours == expected[k], f"result {r} arg {k}: {sorted(ours ^ expected[k])[:3]} differ"
