"""Issue #20, item 1: JSON for scripts. ``ModuleIndexing.to_dict()`` / ``.to_json()`` and
the print passes' ``format=json`` give one document per module, valid against the
schema shipped in the package; its maps are the analysis' maps (re-parsed from the
XLA text and compared by enumeration) with their variables and constraints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import hlo_indexing
from hlo_indexing.analysis import results
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.passes import registry

ROOT = Path(__file__).resolve().parents[1]
OPT = Path(sys.executable).parent / "hlo-indexing-opt"
EXAMPLES = sorted(p for p in (ROOT / "examples").rglob("*") if p.suffix in (".mlir", ".hlo"))
SCHEMA = results.schema()

TRANSPOSE = """func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
"""
SLICE_SUM = """func.func @main(%a: tensor<4x6xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.slice %a [0:4, 1:5:2] : (tensor<4x6xf32>) -> tensor<4x2xf32>
  %r = stablehlo.reduce(%s init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x2xf32>, tensor<f32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(OPT), *argv], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_bundled_examples_validate_against_the_schema(example):
    result = hlo_indexing.analyze(example)
    document = result.to_dict()
    jsonschema.validate(document, SCHEMA)
    assert json.loads(result.to_json()) == document
    assert [c["name"] for c in document["computations"]] == [c.name for c in result.computations]
    assert len(document["ops"]) == len(result.ops)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("flag", ["--hlo-print-fused-indexing-maps=format=json", "--hlo-print-indexing-maps=format=json"])
def test_cli_json_validates_and_equals_the_python_document(example, flag):
    done = _run(str(example), flag, "-o", "/dev/null")  # the IR elsewhere: the one document on stdout
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    jsonschema.validate(document, SCHEMA)
    expected = hlo_indexing.analyze(example, fused="fused" in flag, per_op="fused" not in flag).to_dict()
    assert document == expected


def test_one_document_per_module_with_split_input_file(tmp_path):
    source = tmp_path / "two.mlir"
    source.write_text(TRANSPOSE + "// -----\n" + SLICE_SUM)
    done = _run(str(source), "--split-input-file", "--hlo-print-fused-indexing-maps=format=json", "-o", "/dev/null")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]  # JSON Lines, one per module
    assert [(line["input"], line["chunk"]) for line in lines] == [(str(source), 0), (str(source), 1)]
    documents = [line["report"] for line in lines]
    assert [d["computations"][0]["location"].split(":")[1] for d in documents] == ["1", "6"]


def _relation(m: IndexingMap) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    points, images = m.enumerate()
    return {(tuple(p[: m.num_dims]), tuple(i)) for p, i in zip(points.tolist(), images.tolist())}


def test_transpose_maps_in_json_are_the_transpose():
    document = hlo_indexing.analyze(TRANSPOSE).to_dict()
    (computation,) = document["computations"]
    (value,) = computation["values"]
    (target,) = value["targets"]
    (entry,) = target["maps"]
    assert entry["dimensions"] == [{"name": "d0", "lower": 0, "upper": 2}, {"name": "d1", "lower": 0, "upper": 1}]
    assert entry["results"] == ["d1", "d0"] and entry["constraints"] == [] and not entry["unknown"]
    # brute force: output (i, j) of a 2x3 -> 3x2 transpose reads input (j, i)
    expected = {((i, j), (j, i)) for i in range(3) for j in range(2)}
    assert _relation(IndexingMap.parse(entry["text"])) == expected
    source = np.arange(6).reshape(2, 3)
    assert all(source.T[o] == source[i] for o, i in expected)


def test_strided_slice_reduce_variables_and_constraints_by_enumeration():
    document = hlo_indexing.analyze(SLICE_SUM, per_op=False).to_dict()
    (entry,) = document["computations"][0]["values"][0]["targets"][0]["maps"]
    m = IndexingMap.parse(entry["text"])
    # output r reads a[r, 1 + 2*k] for k in 0..1 (slice 1:5:2, then the reduction over it)
    expected = {((r,), (r, 1 + 2 * k)) for r in range(4) for k in range(2)}
    assert _relation(m) == expected
    names = [v["name"] for v in entry["dimensions"] + entry["range_variables"]]
    assert names == ["d0", "s0"] and entry["range_variables"][0]["lower"] == 0
    assert entry["range_variables"][0]["upper"] == 1
    for c in entry["constraints"]:
        assert c["lower"] <= c["upper"]


def test_unknown_maps_carry_their_reason_in_json():
    custom_call = """func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.custom_call @my_kernel(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""
    document = hlo_indexing.analyze(custom_call).to_dict()
    jsonschema.validate(document, SCHEMA)
    (entry,) = document["computations"][0]["values"][0]["targets"][0]["maps"]
    assert entry["unknown"] and entry["text"] == "UNDEFINED"
    assert entry["reason"] == "stablehlo.custom_call: custom call target 'my_kernel' has no indexing rule"
    assert document["ops"][0]["values"][0]["reason"] == entry["reason"]


def test_print_passes_declare_format_and_func_in_the_registry():
    for name in ("hlo-print-indexing-maps", "hlo-print-fused-indexing-maps"):
        options = {o.name: o for o in registry.PASSES[name].options}
        assert options["format"].choices == ("text", "json") and options["format"].default == "text"
        assert options["func"].default == ""
        assert registry.describe(registry.lookup(name)) == registry.PASSES[name]


def test_bad_format_is_an_error():
    done = _run(str(EXAMPLES[0]), "--hlo-print-indexing-maps=format=yaml")
    assert done.returncode == 1 and "expected one of: text, json" in done.stderr
