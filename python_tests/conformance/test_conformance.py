"""The XLA conformance runner: no regression from the recorded baseline, and the
runner's own comparison catches wrong maps."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import conformance
from helpers import CONFORMANCE, TESTS

CORPUS = CONFORMANCE / "xla_indexing"  # ../shared beside the clone
BASELINE = TESTS / "conformance_baseline.json"

# Only the corpus run needs ../shared; the runner's own tests build their inputs.
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"conformance corpus not found at {CORPUS}")


@pytest.mark.slow
@needs_corpus
@pytest.mark.parametrize("name", ["cases.jsonl", "cases_affine_era.jsonl"])
def test_no_regression_from_baseline(name: str) -> None:
    expected = set(json.loads(BASELINE.read_text())[name])
    outcomes = {o.case_id: o for o in conformance.run_file(CORPUS / name)}
    regressed = {i: outcomes[i].reason if i in outcomes else "missing" for i in expected
                 if i not in outcomes or outcomes[i].status != conformance.PASS}
    assert not regressed, regressed
    assert all(o.reason for o in outcomes.values() if o.status == conformance.SKIP), "skip without a reason"


def test_relation_comparison_detects_a_wrong_map() -> None:
    rng = random.Random(0)
    good = conformance.parse_map("(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 5]")
    same = conformance.parse_map("(d0, d1)[s0] -> (d1 + s0, d0), domain: d0 in [0, 3], d1 in [0, 5], s0 in [0, 0]")
    wrong = conformance.parse_map("(d0, d1) -> (d1, d0 mod 3), domain: d0 in [0, 3], d1 in [0, 5]")
    assert conformance.relation_difference(same, good, rng) == ""
    assert "relation differs" in conformance.relation_difference(wrong, good, rng)


def test_large_domain_comparison_uses_samples_and_still_detects_differences() -> None:
    rng = random.Random(0)
    text = "(d0)[s0] -> (d0 * 1000 + s0), domain: d0 in [0, 99999], s0 in [0, 999]"
    off_by_one = "(d0)[s0] -> (d0 * 1000 + s0 + 1), domain: d0 in [0, 99999], s0 in [0, 999]"
    assert conformance.relation_difference(conformance.parse_map(text), conformance.parse_map(text), rng) == ""
    assert conformance.relation_difference(conformance.parse_map(off_by_one), conformance.parse_map(text), rng)


def test_map_sets_are_compared_order_insensitively() -> None:
    rng = random.Random(0)
    a = "(d0) -> (d0), domain: d0 in [0, 7]"
    b = "(d0) -> (7 - d0), domain: d0 in [0, 7]"
    ours = [frozenset({conformance.parse_map(b), conformance.parse_map(a)})]
    conformance.compare_map_sets(ours, [[a, b]], rng)
    with pytest.raises(conformance.CaseFailure, match="no map of ours"):
        conformance.compare_map_sets(ours, [[a, "(d0) -> (d0 floordiv 2), domain: d0 in [0, 7]"]], rng)


def test_cli_prints_table_and_summary_and_fails_on_failures(tmp_path: Path, capsys) -> None:
    record = {"id": "t::Bad", "kind": "simplify", "hlo": None, "input": "(d0) -> (d0), domain: d0 in [0, 3]",
              "expected": ["(d0) -> (d0 + 1), domain: d0 in [0, 3]"], "ops": [{"op": "Simplify", "args": []}]}
    skipped = dict(record, id="t::Docs", subkind="docs_example")
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(record) + "\n" + json.dumps(skipped) + "\n")
    assert conformance.main([str(path)]) == 1
    out = capsys.readouterr().out
    assert "t::Bad" in out and "FAIL" in out and "docs example" in out
    assert out.strip().splitlines()[-1] == "conformance: 0 passed, 1 failed, 1 skipped"
