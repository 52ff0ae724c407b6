"""Asynchronous pairs of XLA modules (``async-start``/``async-done`` with a called
computation, ``copy-start``/``copy-done``, the asynchronous collectives
``all-gather-start``/``all-gather-done``, ...): the done op gives the computation's
results over the start's operands, so a fused walk goes through the pair. The maps of a
module's result must equal the dependence of the same computation written with numpy
(found by perturbing each input element), or, for a collective, the relation its
definition gives per device."""

from __future__ import annotations

import itertools

from op_fixtures import perturbed_dependence, relation

from hlo_indexing import fusion_indexing, parse_module
from hlo_indexing.analysis.per_op import output_to_input_indexing

CALLED = """HloModule m
%window (p: f32[4,6]) -> f32[6,2] {
  %p = f32[4,6] parameter(0)
  %rows = f32[2,6] slice(%p), slice={[1:3], [0:6]}
  ROOT %t = f32[6,2] transpose(%rows), dimensions={1,0}
}
ENTRY %main (x: f32[4,6], y: f32[6,2]) -> f32[6,2] {
  %x = f32[4,6] parameter(0)
  %y = f32[6,2] parameter(1)
  %start = ((f32[4,6]), f32[6,2], s32[]) async-start(%x), calls=%window
  %done = f32[6,2] async-done(%start), calls=%window
  %copy-start = (f32[6,2], f32[6,2], u32[]) copy-start(%done)
  %copy-done = f32[6,2] copy-done(%copy-start)
  ROOT %sum = f32[6,2] add(%copy-done, %y)
}
"""

GATHER = """HloModule m
ENTRY %main (x: f32[2,3]) -> f32[8,3] {
  %x = f32[2,3] parameter(0)
  %start = (f32[2,3], f32[8,3]) all-gather-start(%x), replica_groups={{0,1,2,3}}, dimensions={0}
  ROOT %done = f32[8,3] all-gather-done(%start)
}
"""


def test_an_async_computation_and_a_copy_read_as_the_computation_itself() -> None:
    module = parse_module(CALLED, filename="async.hlo")  # kept alive: MLIR frees its ops with it
    fused = fusion_indexing(module.body.operations[-1], 0)
    expected = perturbed_dependence([(4, 6), (6, 2)], lambda x, y: x[1:3, :].T + y)
    for k, pairs in enumerate(expected):
        assert relation(fused.maps[k]) == pairs, f"argument {k}: {fused.maps[k]}"


def test_an_asynchronous_all_gather_reads_each_devices_block() -> None:
    # On every device, row i of the result is row i mod 2 of device i floordiv 2's x:
    # per program, row i reads row i mod 2 of its operand.
    module = parse_module(GATHER, filename="gather.hlo")
    fused = fusion_indexing(module.body.operations[-1], 0)
    expected = {((i, j), (i % 2, j)) for i, j in itertools.product(range(8), range(3))}
    assert relation(fused.maps[0]) == expected


def test_the_done_op_is_indexed_by_its_starts_operands() -> None:
    module = parse_module(CALLED, filename="async.hlo")
    block = module.body.operations[-1].regions[0].blocks[0]
    done = next(op for op in block.operations if op.operation.name == "mhlo.async_done")
    (maps,) = output_to_input_indexing(done, 0).maps
    assert relation(maps) == {((i, j), (j + 1, i)) for i in range(6) for j in range(2)}


def test_the_start_op_names_where_its_maps_are() -> None:
    module = parse_module(CALLED, filename="async.hlo")
    block = module.body.operations[-1].regions[0].blocks[0]
    start = next(op for op in block.operations if op.operation.name == "mhlo.async_start")
    (maps,) = output_to_input_indexing(start, 0).maps
    (only,) = maps
    assert only.is_undefined and "its async_done's" in only.reason
