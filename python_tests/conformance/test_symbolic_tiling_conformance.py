"""The tiling conformance runner (dev/tiling_conformance.py) over XLA's
symbolic-tiling corpus: at least 95% of the records pass, no checker crashes, every
skip names its reason; and the runner itself fails on unknown kinds and crashes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tiling_conformance
from helpers import CONFORMANCE

CORPUS = CONFORMANCE / "xla_tiling"  # ../shared beside the clone
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"tiling conformance corpus not found at {CORPUS}")


@needs_corpus
@pytest.mark.parametrize("name", ["symbolic_tile.jsonl", "tiling_analysis.jsonl"])
def test_corpus_pass_rate(name: str) -> None:
    rows = tiling_conformance.run_files([CORPUS / name])
    assert rows, f"no records in {name}"
    crashed = [(i, d) for s, i, d in rows if "checker raised" in d]
    assert not crashed, crashed
    assert all(d for s, _, d in rows if s == "skip"), "skip without a reason"
    passed = sum(s == "pass" for s, _, _ in rows)
    failures = {i: d for s, i, d in rows if s == "fail"}
    assert passed >= 0.95 * len(rows), failures


def _run(tmp_path: Path, records: list[dict], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records))
    code = tiling_conformance.main([str(corpus)])
    return code, capsys.readouterr().out


def test_unknown_kinds_and_wrong_expectations_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = {
        "id": "t::Slice", "kind": "symbolic_tile", "hlo": None,
        "map_from": {"map": "(d0) -> (d0 * 2 + 3), domain: d0 in [0, 7]"},
        "expected": {}, "evaluations": [{"tile_sizes": [4], "offsets": [3], "sizes": [4], "strides": [2], "constraints_hold": True}],
    }
    wrong = dict(good, id="t::Wrong", evaluations=[dict(good["evaluations"][0], offsets=[4])])
    unknown = {"id": "t::Unknown", "kind": "no_such_kind"}
    code, out = _run(tmp_path, [good, wrong, unknown], capsys)
    assert code == 1
    assert "PASS t::Slice" in out and "FAIL t::Wrong: at tile sizes [4]: offsets [3], XLA [4]" in out
    assert "FAIL t::Unknown: no checker for record kind 'no_such_kind'" in out
    assert out.rstrip().endswith("conformance: 1 passed, 2 failed, 0 skipped")


def test_a_dropped_constraint_is_a_checked_difference_only_where_the_unconstrained_tile_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tile of a split reshape after a reverse needs '6 mod d0 || d0 mod 6'; a
    record claiming the same tile without constraints is a documented difference only
    where that tile misses an element read (enumerated); where it is right, a failure."""
    text = "(d0) -> (-(d0 floordiv 6) + 7, -(d0 mod 6) + 5), domain: d0 in [0, 47]"

    def entry(d0: int) -> dict:  # the unconstrained tile's formulas: rows ceil(d0 / 6), columns d0 - ((d0 - 1) // 6) * 6
        return {"tile_sizes": [d0], "offsets": [7, 5], "sizes": [(d0 + 5) // 6, d0 - ((d0 - 1) // 6) * 6],
                "strides": [-1, -1], "constraints_hold": True}

    record = {"id": "t::Dropped", "kind": "symbolic_tile", "hlo": None, "map_from": {"map": text}, "expected": {},
              "evaluations": [entry(d0) for d0 in (1, 2, 3, 6, 32, 48)]}
    right = dict(record, id="t::Right", evaluations=[entry(4)])  # 4 columns of row 0: the tile is right there
    code, out = _run(tmp_path, [record, right], capsys)
    assert "SKIP t::Dropped: documented difference, checked" in out and "at tile sizes [32]" in out
    assert "FAIL t::Right: at tile sizes [4]: constraints hold = False, XLA: True" in out and code == 1


def test_a_checker_that_raises_is_a_failure_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = {"id": "t::Broken", "kind": "symbolic_tile", "hlo": None, "map_from": {"map": "(d0) -> (d0"}, "expected": {}}
    code, out = _run(tmp_path, [broken], capsys)
    assert code == 1 and "FAIL t::Broken: checker raised ParseError" in out


def test_symbolic_indexing_records_compare_maps_as_relations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hlo = (
        "fusion {\n  p0 = f32[4,8] parameter(0)\n  p1 = f32[8,16] parameter(1)\n"
        "  ROOT dot = f32[4,16] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"
        "ENTRY main {\n  p0 = f32[4,8] parameter(0)\n  p1 = f32[8,16] parameter(1)\n"
        "  ROOT fusion = f32[4,16] fusion(p0, p1), kind=kLoop, calls=fusion\n}"
    )
    # Tiling parameters of a dot root: (K, M, N); the lhs reads (M, K), the rhs (K, N).
    lhs = "(d0, d1, d2) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3], d2 in [0, 15]"
    rhs = "(d0, d1, d2) -> (d0, d2), domain: d0 in [0, 7], d1 in [0, 3], d2 in [0, 15]"
    record = {
        "id": "t::DotMaps", "kind": "tiling_analysis", "subkind": "symbolic_indexing", "hlo": hlo,
        "fusion": {"computation": "fusion"},
        "expected": {"instructions": [{"path": "roots[0].operand(0)", "indexing_map": lhs},
                                      {"path": "roots[0].operand(1)", "indexing_map": rhs}]},
    }
    swapped = dict(record, id="t::Swapped", expected={"instructions": [{"path": "roots[0].operand(0)", "indexing_map": rhs}]})
    code, out = _run(tmp_path, [record, swapped], capsys)
    assert "PASS t::DotMaps: 2 indexing maps agree" in out
    assert "FAIL t::Swapped" in out and code == 1
