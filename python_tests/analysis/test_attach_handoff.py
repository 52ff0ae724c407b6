"""``attach_per_op_maps`` (what ``hlo-attach-indexing-maps`` does) hands its per-op maps
to the fused walk: on every lit input, the attributes it attaches equal the pass's, its
table holds each HLO op's per-op maps as the per-op API gives them, and
``computation_indexing(f, per_op=table)`` equals ``computation_indexing(f)``."""

from __future__ import annotations

import pytest

from hlo_indexing.analysis.fusion import computation_indexing
from hlo_indexing.analysis.per_op import hlo_ops, indexings
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.passes.attach_indexing_maps import AttachIndexingMaps, attach_per_op_maps
from hlo_indexing.passes.base import Diagnostics
from helpers import LIT_TESTS


def _parses(text: str) -> bool:
    try:
        parse_module(text)
    except HloIndexingError:
        return False  # a chunk that tests a parse error
    return True


def _chunks() -> list[tuple[str, str]]:
    found = []
    for path in sorted(LIT_TESTS.rglob("*.mlir")):
        if "Output" not in path.parts:
            found += [(f"{path.relative_to(LIT_TESTS)}#{k}", c) for k, c in enumerate(path.read_text().split("// -----"))]
    return [(name, text) for name, text in found if _parses(text)]


def _fused(op, **options) -> tuple:
    try:
        return tuple((f.maps, f.over_approximated) for f in computation_indexing(op, **options))
    except (HloIndexingError, ValueError, NotImplementedError) as exc:
        return (type(exc).__name__,)


@pytest.mark.parametrize("name,text", _chunks(), ids=lambda v: v if isinstance(v, str) and "#" in v else "")
def test_handoff_gives_the_pass_attributes_and_the_same_fused_maps(name: str, text: str) -> None:
    module, reference = parse_module(text), parse_module(text)
    table = attach_per_op_maps(module.operation, "output-to-input", True, Diagnostics())
    AttachIndexingMaps().run(reference.operation, Diagnostics())
    assert str(module) == str(reference)
    for op in hlo_ops(module.operation):
        if op in table:
            assert list(table[op]) == indexings(op, "output-to-input", True)
    for _, op in computations(module.operation):
        assert _fused(op, per_op=table) == _fused(op)
