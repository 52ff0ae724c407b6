"""A tuple-returning custom call inside a counted loop's body (the iteration walk of
:mod:`hlo_indexing.analysis.loop_bodies`): a scan over the rows of ``x`` whose body
takes XLA's ``TopK`` of row ``t`` (a tuple of values and indices, unpacked by
``get-tuple-element``) and writes both into row ``t`` of stacked outputs, as HLO before
fusion has it. The fused maps of ``@main`` must be exactly what a numpy run of the loop
shows by perturbation (row ``t`` of each output reads row ``t`` of ``x``, all of it),
in both directions, and not be said over-approximated."""

from __future__ import annotations

import itertools

import numpy as np

from hlo_indexing import analyze

ROWS, COLUMNS, K = 4, 5, 2

CARRY = f"(s32[], f32[{ROWS},{COLUMNS}], f32[{ROWS},{K}], s32[{ROWS},{K}])"

TOP_K_SCAN_HLO = f"""HloModule top_k_scan

%compare (a: f32[], b: f32[], c: s32[], d: s32[]) -> pred[] {{
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = s32[] parameter(2)
  %d = s32[] parameter(3)
  ROOT %gt = pred[] compare(%a, %b), direction=GT
}}

%body (carry: {CARRY}) -> {CARRY} {{
  %carry = {CARRY} parameter(0)
  %i = s32[] get-tuple-element(%carry), index=0
  %xs = f32[{ROWS},{COLUMNS}] get-tuple-element(%carry), index=1
  %vs = f32[{ROWS},{K}] get-tuple-element(%carry), index=2
  %is = s32[{ROWS},{K}] get-tuple-element(%carry), index=3
  %zero = s32[] constant(0)
  %row = f32[1,{COLUMNS}] dynamic-slice(%xs, %i, %zero), dynamic_slice_sizes={{1,{COLUMNS}}}
  %tk = (f32[1,{K}], s32[1,{K}]) custom-call(%row), custom_call_target="TopK", called_computations={{%compare}}
  %values = f32[1,{K}] get-tuple-element(%tk), index=0
  %indices = s32[1,{K}] get-tuple-element(%tk), index=1
  %vs2 = f32[{ROWS},{K}] dynamic-update-slice(%vs, %values, %i, %zero)
  %is2 = s32[{ROWS},{K}] dynamic-update-slice(%is, %indices, %i, %zero)
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  ROOT %out = {CARRY} tuple(%next, %xs, %vs2, %is2)
}}

%cond (carry: {CARRY}) -> pred[] {{
  %carry = {CARRY} parameter(0)
  %i = s32[] get-tuple-element(%carry), index=0
  %n = s32[] constant({ROWS})
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}}

ENTRY %main (x: f32[{ROWS},{COLUMNS}]) -> (f32[{ROWS},{K}], s32[{ROWS},{K}]) {{
  %x = f32[{ROWS},{COLUMNS}] parameter(0)
  %zero = s32[] constant(0)
  %fz = f32[] constant(0)
  %v0 = f32[{ROWS},{K}] broadcast(%fz), dimensions={{}}
  %i0 = s32[{ROWS},{K}] broadcast(%zero), dimensions={{}}
  %init = {CARRY} tuple(%zero, %x, %v0, %i0)
  %w = {CARRY} while(%init), condition=%cond, body=%body
  %values = f32[{ROWS},{K}] get-tuple-element(%w), index=2
  %indices = s32[{ROWS},{K}] get-tuple-element(%w), index=3
  ROOT %t = (f32[{ROWS},{K}], s32[{ROWS},{K}]) tuple(%values, %indices)
}}
"""


def run(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The loop in numpy: row ``t`` of the outputs is the top ``K`` of row ``t``."""
    values, indices = np.zeros((ROWS, K), np.float32), np.zeros((ROWS, K), np.int32)
    for t in range(ROWS):
        order = np.argsort(-x[t], kind="stable")[:K]
        values[t], indices[t] = x[t][order], order
    return values, indices


def perturbation_pairs() -> list[set]:
    """Per output, the (output element, input element) pairs where setting the input
    element very large or very small changes the output element."""
    x = np.random.default_rng(0).uniform(0.5, 1.5, (ROWS, COLUMNS)).astype(np.float32)
    base = run(x)
    pairs: list[set] = [set(), set()]
    for index in itertools.product(range(ROWS), range(COLUMNS)):
        for new in (1e4, -1e4):
            changed = x.copy()
            changed[index] = new
            for r, (before, after) in enumerate(zip(base, run(changed), strict=True)):
                pairs[r] |= {(tuple(int(v) for v in row), index) for row in np.argwhere(before != after)}
    return pairs


def relation(maps) -> set:
    assert not any(m.is_undefined for m in maps), [m.reason for m in maps if m.is_undefined]
    return set().union(*(m.relation() for m in maps))


def test_top_k_tuple_in_a_counted_loop_body_is_exact() -> None:
    expected = perturbation_pairs()
    main = analyze(TOP_K_SCAN_HLO).computation("main")
    for r, fused in enumerate(main.maps):
        assert not fused.over_approximated, fused.over_approximated
        (maps,) = fused.maps
        assert relation(maps) == expected[r], f"result {r}"


def test_input_to_output_maps_are_the_transposed_pairs() -> None:
    expected = perturbation_pairs()
    (fused,) = analyze(TOP_K_SCAN_HLO, direction="input-to-output").computation("main").maps
    assert not fused.over_approximated, fused.over_approximated
    for r, maps in enumerate(fused.maps):
        assert {(inp, out) for out, inp in expected[r]} == relation(maps), f"result {r}"
