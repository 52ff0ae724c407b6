"""``hlo-print-tilings{format=json}``: one JSON document per module, verbatim (on stdout
when ``-o`` sends the IR elsewhere, no remark wrapper), valid against
``hlo_indexing/schema/tilings.schema.json``; the same document from
:func:`hlo_indexing.symbolic_tiling.tilings_report.module_tilings`. Figures are
checked against hand-derived values and against the text remarks."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from hlo_indexing import parse_module
from hlo_indexing.symbolic_tiling.tilings_report import module_tilings, tilings_schema

ROOT = Path(__file__).resolve().parents[1]
OPT = Path(sys.executable).parent / "hlo-indexing-opt"
SCHEMA = tilings_schema()
# The bundled inputs but examples/softmax.mlir (2x65x125: ranking its 300 tilings takes a
# minute), tiling.mlir (its matmul's ranking takes ~7 s; the README runs it) and
# jax_fusions_cpu.hlo (validated in test_python_function_gives_the_pass_document).
SLOW = ("softmax.mlir", "tiling.mlir", "jax_fusions_cpu.hlo")
EXAMPLES = sorted(p for p in (ROOT / "examples").rglob("*") if p.suffix in (".mlir", ".hlo") and p.name not in SLOW)

SOFTMAX_AND_PAD = """func.func @softmax(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.maximum across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<4xf32>) -> tensor<4x6xf32>
  %2 = stablehlo.subtract %x, %1 : tensor<4x6xf32>
  %3 = stablehlo.exponential %2 : tensor<4x6xf32>
  return %3 : tensor<4x6xf32>
}
func.func @pad(%x: tensor<63xf32>) -> tensor<64xf32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.pad %x, %c, low = [0], high = [1], interior = [0] : (tensor<63xf32>, tensor<f32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}
"""


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(OPT), *argv], capture_output=True, text=True, timeout=300)


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_json_is_one_document_without_remarks(tmp_path):
    source = tmp_path / "s.mlir"
    source.write_text(SOFTMAX_AND_PAD)
    result = _run(str(source), "--hlo-print-tilings=budget=64B max=3 format=json", "-o", "/dev/null")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)  # the whole of stdout is the document
    assert result.stderr == ""
    jsonschema.validate(document, SCHEMA)
    assert document["budget_bytes"] == 64
    softmax, pad = document["computations"]
    assert (softmax["name"], softmax["kind"], softmax["location"]) == ("@softmax", "func.func", f"{source}:1:1")
    assert [p["size"] for p in softmax["parameters"]] == [4, 6]
    # one row per tile: 6 f32 read + 6 written = 48 B; 4 tiles; 8 B per output element
    best = softmax["tilings"][0]
    assert (best["rank"], best["tile_sizes"], best["num_tiles"], best["bytes_per_tile"]) == (1, [1, 6], 4, 48)
    assert best["bytes_per_output_element"] == 8
    # a row tile reads every element it loads: exact
    assert [(e["index"], e["exactness"], e["read_elements"]) for e in best["exactness"]] == [(0, 1.0, 24)]
    assert [t["rank"] for t in softmax["tilings"]] == [1, 2, 3]
    assert all(t["bytes_per_tile"] <= 64 for t in softmax["tilings"])
    # a row tile of the 4x6 input is a Pallas block: grid of 4 row blocks
    assert best["pallas"]["reason"] is None
    assert "pl.BlockSpec((1, 6), lambda i, j: (i, 0))" in best["pallas"]["blockspecs"]
    assert pad["failure"] is not None and "pad" in pad["failure"] and pad["tilings"] == []


def test_json_and_remarks_rank_the_same_tilings(tmp_path):
    source = tmp_path / "s.mlir"
    source.write_text(SOFTMAX_AND_PAD)
    text = _run(str(source), "--hlo-print-tilings=budget=1KiB max=4", "-o", "/dev/null").stderr
    remarks = [json.loads(m) for m in re.findall(r"@softmax tiling #\d+: tile sizes (\[[\d, ]+\])", text)]
    document = json.loads(_run(str(source), "--hlo-print-tilings=budget=1KiB max=4 format=json", "-o", "/dev/null").stdout)
    assert [t["tile_sizes"] for t in document["computations"][0]["tilings"]] == remarks
    assert len(remarks) == 4


HLO = """HloModule m
fused {
  a = f32[8,4] parameter(0)
  b = f32[4,6] parameter(1)
  ROOT d = f32[8,6] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  p = f32[8,4] parameter(0)
  q = f32[4,6] parameter(1)
  f = f32[8,6] fusion(p, q), kind=kLoop, calls=fused
  ROOT t = (f32[8,6], f32[8,4]) tuple(f, p)
}
"""


def test_python_function_gives_the_pass_document(tmp_path):
    """On HLO text: the fusion instruction (an mhlo.fusion) alone, not also its
    computation (a private function) or the ENTRY; with ``function``, that function's
    computations: the ENTRY (which returns a tuple and cannot be tiled) and the fusion."""
    path = tmp_path / "m.hlo"
    path.write_text(HLO)
    module = parse_module(path)
    document = module_tilings(module.operation, 1024, 2)
    jsonschema.validate(document, SCHEMA)
    printed = json.loads(_run(str(path), "--hlo-print-tilings=budget=1KiB max=2 format=json", "-o", "/dev/null").stdout)
    assert document == printed
    found = {c["name"]: (c["kind"], c["location"], c["failure"] is None) for c in document["computations"]}
    assert found == {"f": ("mhlo.fusion", f"{path}:10:3", True)}
    in_main = module_tilings(module.operation, 1024, 2, function="main")  # XLA names the ENTRY main
    assert {c["name"]: (c["kind"], c["location"], c["failure"] is None) for c in in_main["computations"]} == {
        "@main": ("func.func", f"{path}:7:1", False),
        "f": ("mhlo.fusion", f"{path}:10:3", True),
    }
    in_fused = module_tilings(module.operation, 1024, 2, function="fused")
    assert [(c["name"], c["location"]) for c in in_fused["computations"]] == [("@fused", f"{path}:2:1")]
    fusion = next(c for c in document["computations"] if c["name"] == "f")
    assert [p["size"] for p in fusion["parameters"]] == [4, 8, 6]  # {K, M, N}
    assert all(t["bytes_per_tile"] <= 1024 for t in fusion["tilings"])


def test_invalid_budget_is_a_located_error_and_no_document(tmp_path):
    source = tmp_path / "s.mlir"
    source.write_text(SOFTMAX_AND_PAD)
    result = _run(str(source), "--hlo-print-tilings=budget=lots format=json", "-o", str(tmp_path / "out.mlir"))
    assert result.returncode == 1
    assert "error: invalid byte size 'lots'" in result.stderr and "{" not in result.stderr
    assert not (tmp_path / "out.mlir").exists()


def test_func_keeps_one_function_and_names_a_missing_one(tmp_path):
    source = tmp_path / "s.mlir"
    source.write_text(SOFTMAX_AND_PAD)
    document = json.loads(_run(str(source), "--hlo-print-tilings=func=pad format=json", "-o", "/dev/null").stdout)
    assert [c["name"] for c in document["computations"]] == ["@pad"]
    result = _run(str(source), "--hlo-print-tilings=func=softmx", "-o", "/dev/null")
    assert result.returncode == 1
    assert "error: option func: no function or fusion 'softmx' in the module; did you mean 'softmax'?" in result.stderr


def test_a_zero_sized_computation_is_a_located_warning(tmp_path):
    """Nothing to tile: said at the computation, as for any computation that cannot be
    tiled; the others are still ranked (exit 0)."""
    source = tmp_path / "zero.mlir"
    source.write_text(
        "func.func @zero(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {\n"
        "  %0 = stablehlo.negate %x : tensor<0x4xf32>\n  return %0 : tensor<0x4xf32>\n}\n"
    )
    result = _run(str(source), "--hlo-print-tilings", "-o", "/dev/null")
    assert result.returncode == 0
    assert result.stderr.startswith(f"{source}:1:1: warning: @zero: cannot tile: output tensor<0x4xf32> is zero-sized")


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_bundled_examples_validate(example):
    result = _run(str(example), "--hlo-print-tilings=format=json max=2", "-o", "/dev/null")
    assert result.returncode == 0, result.stderr
    jsonschema.validate(json.loads(result.stdout), SCHEMA)
