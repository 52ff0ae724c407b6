"""A counted loop's carries are ordered once per loop for all its results, the carries
from which a cycle is reached remembered (``doomed``) and the body's walk of a carry
stopped as soon as it reads one of them. Checked against a brute force on random
dependence graphs (None exactly when a cycle of carries not fixed is reachable,
otherwise every reachable carry after those it reads, whatever the results asked
before), and on a loop whose stacked output reads a state that mixes with another:
the walk stops there, and the maps of every result are those of an analysis without
the stop."""

from __future__ import annotations

import random

import pytest

from hlo_indexing import parse_module
from hlo_indexing.analysis.fusion import REGIONS, computation_indexing
from hlo_indexing.ops import loop_iterations
from hlo_indexing.ops.loop_iterations import _order
from hlo_indexing.ops.dispatch import all_indexings
from hlo_indexing.ops.regions import ArgumentReached


class _Read:
    """A map standing for an edge (never known empty)."""

    @staticmethod
    def is_known_empty() -> bool:
        return False


def _reaches_cycle(edges: dict[int, set[int]], start: int) -> bool:
    """Whether a cycle is reachable from ``start`` (brute force: a walk of length n + 1)."""
    frontier, n = {start}, len(edges)
    for _ in range(n + 1):
        frontier = {a for c in frontier for a in edges[c]}
    return bool(frontier)


def _reachable(edges: dict[int, set[int]], start: int) -> set[int]:
    found, todo = {start}, [start]
    while todo:
        for a in edges[todo.pop()]:
            if a not in found:
                found.add(a)
                todo.append(a)
    return found


@pytest.mark.parametrize("seed", range(60))
def test_order_with_doomed_carries_against_a_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 7)
    fixed = {c for c in range(n) if rng.random() < 0.3}
    reads = {c: {a for a in range(n) if a != c and rng.random() < 0.35} for c in range(n)}
    edges = {c: {a for a in reads[c] if a not in fixed} for c in range(n)}  # what _order follows
    loads: list[int] = []

    def load(c: int, stop: frozenset[int]) -> tuple | None:
        loads.append(c)
        if stop & edges[c]:
            return None
        return tuple((_Read(),) if a in reads[c] else () for a in range(n))

    doomed: set[int] = set()
    for start in rng.sample(range(n), n):
        order = _order(load, start, fixed, n, doomed)
        if start in fixed:
            assert order == []
        elif _reaches_cycle(edges, start):
            assert order is None
        else:
            assert order is not None and set(order) == _reachable(edges, start)
            assert all(order.index(a) < order.index(c) for c in order for a in edges[c])
    assert all(_reaches_cycle(edges, c) for c in doomed)


def _loop(n: int) -> str:
    """``h`` and ``c`` feed each other (a cycle of carries); ``ys`` stacks ``h`` at ``t``."""
    v, s = "tensor<4xf32>", f"tensor<{n}x4xf32>"
    return f"""
func.func @main(%h0: {v}, %c0: {v}, %ys0: {s}) -> ({v}, {v}, {s}) {{
  %z = stablehlo.constant dense<0> : tensor<i32>
  %w:4 = stablehlo.while(%i = %z, %h = %h0, %c = %c0, %ys = %ys0) : tensor<i32>, {v}, {v}, {s}
   cond {{
    %n = stablehlo.constant dense<{n}> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }} do {{
    %h2 = stablehlo.add %h, %c : {v}
    %c2 = stablehlo.multiply %c, %h : {v}
    %row = stablehlo.reshape %h2 : ({v}) -> tensor<1x4xf32>
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %ys2 = stablehlo.dynamic_update_slice %ys, %row, %i, %zero : ({s}, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> {s}
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %h2, %c2, %ys2 : tensor<i32>, {v}, {v}, {s}
  }}
  return %w#1, %w#2, %w#3 : {v}, {v}, {s}
}}"""


def _while(module):
    main = module.body.operations[0]
    return next(op for op in main.regions[0].blocks[0].operations if op.name == "stablehlo.while")


def test_the_walk_stops_at_a_carry_it_reads() -> None:
    module = parse_module(_loop(5))
    body = _while(module).regions[1]
    inductions = ((0, 0, 1),)
    with REGIONS.session():
        for carry in (1, 2):  # ys reads h and c (through h2 = h + c)
            with pytest.raises(ArgumentReached):
                REGIONS.iteration_output_to_input(body, 3, inductions, 5, frozenset({carry}))
        full = REGIONS.iteration_output_to_input(body, 3, inductions, 5)
        assert full[1] and full[2]
        unread = frozenset(a for a in range(4) if not full[a])
        assert REGIONS.iteration_output_to_input(body, 3, inductions, 5, unread) == full


def test_maps_of_every_result_are_those_without_the_stop(monkeypatch) -> None:
    module = parse_module(_loop(6))
    loop = _while(module)
    with REGIONS.session():
        stopped = all_indexings(loop, "output-to-input", regions=REGIONS)
        fused = computation_indexing(module.body.operations[0])
    original = loop_iterations._CountedLoop.load

    def never_stopping(self, c, stop=frozenset()):
        return original(self, c)

    monkeypatch.setattr(loop_iterations._CountedLoop, "load", never_stopping)
    with REGIONS.session():
        assert all_indexings(loop, "output-to-input", regions=REGIONS) == stopped
        assert computation_indexing(module.body.operations[0]) == fused
