"""``dev/run.py conformance`` dispatches every corpus record to a checker: tiling records
to the tiling checkers, XLA's indexing records to the indexing runner, tiled-layout vectors
to the layout checker; a kind without a checker fails."""

from __future__ import annotations

import tiling_conformance

DOC_VECTOR = {
    "id": "doc_000", "dtype": "f32", "shape": [3, 5], "layout": "{1,0:T(2,2)}", "padded_elements": 24,
    "tiled_shape": [2, 3, 2, 2], "samples": [[0, 0, 0], [1, 2, 6], [2, 3, 17]],
}
CHECKERS = tiling_conformance.load_checkers()


def test_layout_vector_passes_and_a_wrong_offset_fails():
    assert tiling_conformance.check_record(DOC_VECTOR, CHECKERS)[0] == "pass"
    wrong = dict(DOC_VECTOR, samples=[[2, 3, 16]])
    status, detail = tiling_conformance.check_record(wrong, CHECKERS)
    assert status == "fail" and "(2, 3)" in detail


def test_unknown_kind_fails():
    assert tiling_conformance.check_record({"id": "x", "kind": "no_such_kind"}, CHECKERS)[0] == "fail"


def test_every_corpus_kind_has_a_checker():
    kinds = {"symbolic_tile", "tiling_analysis", "propagate_to_input", "tiling_space", "tile_print",
             "output_to_input", "fusion_output_to_input", "simplify", "parse_print", "layout_vector"}
    assert kinds <= set(CHECKERS)
