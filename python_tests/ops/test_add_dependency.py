"""``add-dependency(x, token)`` of XLA modules (ordering, as GPU modules write it around
collectives and host transfers) is ``x`` itself: its result reads ``x`` at the same
index and nothing of the token, so a fused walk goes through it."""

from __future__ import annotations

import itertools

from op_fixtures import relation

from hlo_indexing import fusion_indexing, parse_module
from hlo_indexing.analysis.per_op import input_to_output_indexing

MODULE = """HloModule m
ENTRY %main (x: f32[3,4]) -> f32[4,3] {
  %x = f32[3,4] parameter(0)
  %order = token[] after-all()
  %ordered = f32[3,4] add-dependency(%x, %order)
  ROOT %t = f32[4,3] transpose(%ordered), dimensions={1,0}
}
"""


def test_add_dependency_passes_its_operand_on() -> None:
    module = parse_module(MODULE, filename="dep.hlo")  # kept alive: MLIR frees its ops with it
    fused = fusion_indexing(module.body.operations[-1], 0)
    assert relation(fused.maps[0]) == {((i, j), (j, i)) for i, j in itertools.product(range(4), range(3))}


def test_the_token_of_add_dependency_feeds_no_element() -> None:
    module = parse_module(MODULE, filename="dep.hlo")
    block = module.body.operations[-1].regions[0].blocks[0]
    dependency = next(op for op in block.operations if op.operation.name == "mhlo.add_dependency")
    (maps,) = input_to_output_indexing(dependency, 1).maps
    assert not maps
