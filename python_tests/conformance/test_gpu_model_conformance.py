"""The GPU cost-model conformance runner (dev/gpu_model_conformance.py,
through tiling_conformance) over ``../shared/conformance/xla_gpu_model``: at least 95%
of the records of every file but performance_model.jsonl pass, none crashes, and the
only skips are the non-indexing model's records, each with its reason
(dev/README-gpu-model-conformance.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tiling_conformance
from helpers import CONFORMANCE

CORPUS = CONFORMANCE / "xla_gpu_model"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"GPU cost-model corpus not found at {CORPUS}")
FILES = ["indexing_performance_model.jsonl", "performance_model_base.jsonl", "emitter_constraints.jsonl",
         "tiling_from_block_parameters.jsonl", "tiled_coalescing.jsonl"]


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_corpus_pass_rate(name: str) -> None:
    rows = tiling_conformance.run_files([CORPUS / name])
    assert rows, f"no records in {name}"
    crashed = [(i, d) for s, i, d in rows if "checker raised" in d]
    assert not crashed, crashed
    assert not [i for s, i, _ in rows if s == "skip"], "only performance_model.jsonl records are skipped"
    failures = {i: d for s, i, d in rows if s == "fail"}
    passed = sum(s == "pass" for s, _, _ in rows)
    assert passed >= 0.95 * len(rows), failures


@needs_corpus
def test_the_non_indexing_model_is_skipped_with_its_reason() -> None:
    rows = tiling_conformance.run_files([CORPUS / "performance_model.jsonl"])
    assert rows and all(s == "skip" and "non-indexing GpuPerformanceModel" in d for s, _, d in rows)


@needs_corpus
def test_every_record_kind_of_the_corpus_has_a_checker() -> None:
    kinds = {json.loads(line)["kind"] for path in CORPUS.glob("*.jsonl") for line in path.read_text().splitlines()}
    assert kinds <= set(tiling_conformance.load_checkers())


def test_a_wrong_expectation_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A made-up record (not from the corpus): XLA's A6000 at 2 warps and 512 blocks runs
    64 x 84 x 2.82 = 15160 flops/ns; a record expecting 15161 must fail."""
    record = {
        "id": "t::FlopsPerNs", "kind": "effective_flops_per_ns",
        "calls": [{"label": "rate", "device": "TestGpuDeviceInfo::RTXA6000DeviceInfo",
                   "num_blocks": {"value": 512}, "num_threads_per_block": {"value": 64}}],
        "expected": {"per_call": {"rate": {"value": {"check": "range", "min": 15161, "max": 15170}}}},
    }
    good = json.loads(json.dumps(record))
    good["id"] = "t::Good"
    good["expected"]["per_call"]["rate"]["value"].update(min=15160, max=15160)
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps(good) + "\n" + json.dumps(record) + "\n")
    code = tiling_conformance.main([str(corpus)])
    out = capsys.readouterr().out
    assert code == 1
    assert "PASS t::Good" in out and "FAIL t::FlopsPerNs" in out


def _two_tilings_record(record_id: str, relation: str) -> dict:
    """A made-up record (not from the corpus): the same negate fusion of f32[256,256] in
    [1,256] row tiles (coalesced) and [256,1] column tiles (4 of 64 bytes per
    transaction), whose exec times differ."""
    def params(tiles: list[int]) -> dict:
        return {"output_tile_sizes": [tiles], "num_warps": 4, "num_ctas": 1, "num_stages": 1, "is_tma_allowed": False,
                "is_warp_specialization_allowed": False, "num_tiles_per_pid": 1, "waves_per_eu": 0}
    return {
        "id": record_id, "kind": "estimate_run_time_for_tiled_fusion",
        "hlo": "HloModule m\nf {\n  p = f32[256,256] parameter(0)\n  ROOT n = f32[256,256] negate(p)\n}\n"
               "ENTRY e {\n  p = f32[256,256] parameter(0)\n"
               "  ROOT fusion = f32[256,256] fusion(p), kind=kCustom, calls=f\n}\n",
        "fusion": {"instruction": "fusion", "computation": "f"},
        "device": "TestGpuDeviceInfo::RTXA6000DeviceInfo", "variants": ["SymbolicTiling", "ExperimentalTiling"],
        "calls": [{"label": "rows", "api": "EstimateRunTimeForTiledFusion", "block_level_parameters": params([1, 256])},
                  {"label": "columns", "api": "EstimateRunTimeForTiledFusion", "block_level_parameters": params([256, 1])}],
        "expected": {"per_call": {}, "relations": [{"relation": relation, "lhs": "rows", "lhs_quantity": "exec_time",
                                                    "rhs": "columns", "rhs_quantity": "exec_time"}]},
    }


def test_relations_between_two_calls_compare_their_times(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "c.jsonl"
    records = [_two_tilings_record("t::Differ", "not_equal"), _two_tilings_record("t::Faster", "less_than"),
               _two_tilings_record("t::Same", "equal")]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert tiling_conformance.main([str(corpus)]) == 1
    out = capsys.readouterr().out
    assert "PASS t::Differ" in out and "PASS t::Faster" in out
    assert "FAIL t::Same" in out and "XLA says equal" in out
