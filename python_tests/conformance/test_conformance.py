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


GET_TUPLE_ELEMENT = {
    "id": "t::GetTupleElement", "kind": "output_to_input", "root_opcode": "get-tuple-element",
    "also_checked_on_stablehlo": False, "root_output": 0, "source": {"path": "x"},
    "hlo": "HloModule m\nENTRY e {\n  p0 = f32[10,20] parameter(0)\n  p1 = f32[30,40] parameter(1)\n"
           "  t0 = (f32[30,40], f32[10,20]) tuple(p1, p0)\n  ROOT gte0 = f32[10,20] get-tuple-element(t0), index=1\n}\n",
}


@pytest.mark.parametrize(
    "expected, status",
    [
        ("(d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]", conformance.PASS),
        ("(d0, d1) -> (d0, 19 - d1), domain: d0 in [0, 9], d1 in [0, 19]", conformance.FAIL),
    ],
)
def test_a_folded_get_tuple_element_is_checked_on_the_element_it_reads(expected: str, status: str) -> None:
    # The translator folds tuple and get-tuple-element away; XLA's map (from the gte's
    # output to element 1 of t0, which is p0) is checked on the function's fused map to p0.
    outcome = conformance.run_record(dict(GET_TUPLE_ELEMENT, expected=[[expected]]))
    assert outcome.status == status, outcome.reason


PRINT_INDEXING = {
    "id": "t::print_indexing", "kind": "fusion_output_to_input", "root_opcode": "fusion", "root_output": 1,
    "source": {"path": conformance.PRINT_INDEXING_SOURCE},
    "hlo": "%fused {\n  %a = s32[8] parameter(0)\n  %b = s32[] parameter(1)\n  %d = s32[8] broadcast(%b)\n"
           "  %mul = s32[8] multiply(%a, %d)\n  %r = s32[8] reverse(%a), dimensions={0}\n"
           "  ROOT %result = (s32[8], s32[8]) tuple(%mul, %r)\n}\n\nENTRY main {\n  %a = s32[8] parameter(0)\n"
           "  %b = s32[8] parameter(1)\n  ROOT %fusion = (s32[8], s32[8]) fusion(%a, %b), kind=kLoop, calls=%fused\n}\n",
}


@pytest.mark.parametrize(
    "expected, status",
    [
        ([["(d0) -> (7 - d0), domain: d0 in [0, 7]"]], conformance.PASS),
        ([["(d0) -> (d0), domain: d0 in [0, 7]"]], conformance.FAIL),
        ([["(d0) -> (7 - d0), domain: d0 in [0, 7]"], ["(d0) -> (), domain: d0 in [0, 7]"]], conformance.FAIL),
    ],
)
def test_a_print_indexing_record_is_read_from_the_fused_computation_alone(expected: list, status: str) -> None:
    # As XLA's tool: the module is not verified (its ENTRY passes s32[8] to the s32[]
    # parameter), the fusion's maps come from the computation it calls; output 1 (the
    # reverse) reads only operand 0, the trailing operand 1 is not printed.
    outcome = conformance.run_record(dict(PRINT_INDEXING, expected=expected))
    assert outcome.status == status, outcome.reason


def test_the_ill_typed_print_indexing_module_is_still_bad_input_elsewhere() -> None:
    # Only print_indexing's records are read as the tool reads them: the same module in a
    # fusion record of another source is rejected as bad input (skipped with the reason).
    record = dict(PRINT_INDEXING, source={"path": "xla/hlo/analysis/indexing_analysis_test.cc"}, expected=[[]])
    outcome = conformance.run_record(record)
    assert outcome.status == conformance.SKIP and "rejected as bad input" in outcome.reason
