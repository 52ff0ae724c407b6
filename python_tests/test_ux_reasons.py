"""Issue #20, item 3: an unknown map says why, in ``str()`` of the analysis results, in
the remarks of both print passes and (see test_ux_json) in JSON."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import hlo_indexing
from hlo_indexing.maps.indexing_map import IndexingMap

CUSTOM_CALL = """func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.custom_call @my_kernel(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""
REASON = "stablehlo.custom_call: custom call target 'my_kernel' has no indexing rule"
OPT = Path(sys.executable).parent / "hlo-indexing-opt"


def test_str_of_the_result_names_the_reason():
    result = hlo_indexing.analyze(CUSTOM_CALL)
    text = str(result)
    assert f"@f result 0 -> arg 0: unknown indexing ({REASON})" in text
    assert f"operand id = 0 unknown indexing ({REASON})" in text
    assert result.ops[0].indexing[0].reason == REASON


def test_remarks_name_the_reason(tmp_path):
    source = tmp_path / "custom_call.mlir"
    source.write_text(CUSTOM_CALL)
    for flag in ("--hlo-print-fused-indexing-maps", "--hlo-print-indexing-maps"):
        done = subprocess.run([str(OPT), str(source), flag, "-o", "/dev/null"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert f"unknown indexing ({REASON})" in done.stderr, (flag, done.stderr)


def test_repr_round_trips():
    undefined = IndexingMap.undefined(REASON)
    again = eval(repr(undefined), {"IndexingMap": IndexingMap})
    assert again.is_undefined and again.reason == REASON
    known = IndexingMap.parse("(d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 4]")
    assert eval(repr(known), {"IndexingMap": IndexingMap}) == known
