"""Issue #20, item 6: diagnostics at mlir-opt parity. Every error shows its source line
and a caret; misspelt flags and passes get "Did you mean"; a bad layout attribute is
located inside the attribute and names the token that was expected."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.passes import registry
from hlo_indexing.passes.pass_manager import upstream_text
from hlo_indexing.passes.pipeline_text import parse_element_list

OPT = Path(sys.executable).parent / "hlo-indexing-opt"
LAYOUT = Path(sys.executable).parent / "hlo-indexing-layout"
ADD = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.add %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n"


def _run(tool: Path, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(tool), *argv], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_a_typo_in_the_input_shows_the_line_and_a_caret(tmp_path):
    (tmp_path / "bad.mlir").write_text(ADD.replace("return", "retur"))
    done = _run(OPT, "bad.mlir", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines()[:3] == [
        "bad.mlir:3:3: error: custom op 'retur' is unknown (tried 'func.retur' as well)",
        "  retur %0 : tensor<4xf32>",
        "  ^",
    ]


@pytest.mark.parametrize(
    "argv, first, suggestion",
    [
        (["--canonicalise"], "<command line>:1:8: error: Unknown command line argument '--canonicalise'.", "Did you mean '--canonicalize'?"),
        (["--split-input-fle"], "<command line>:1:8: error: Unknown command line argument", "Did you mean '--split-input-file'?"),
        (["--hlo-print-fused-indexng-maps"], "<command line>:1:8: error:", "Did you mean '--hlo-print-fused-indexing-maps'?"),
        (
            ["--pass-pipeline=builtin.module(cannonicalize)"],
            "MLIR Textual PassPipeline Parser:1:16: error: 'cannonicalize' does not refer to a registered pass",
            "did you mean 'canonicalize'?",
        ),
    ],
)
def test_misspelt_flags_and_passes_get_a_suggestion_and_a_caret(tmp_path, argv, first, suggestion):
    (tmp_path / "a.mlir").write_text(ADD)
    done = _run(OPT, "a.mlir", *argv, cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[0].startswith(first) and lines[0].endswith(suggestion), lines[0]
    column = int(lines[0].split(":")[2])
    assert lines[2] == " " * (column - 1) + "^"
    source = lines[1]
    assert source[column - 1 :].startswith(("--", "cannonicalize")), source


def test_every_suggested_upstream_pass_is_accepted():
    with make_context():
        for name in registry.UPSTREAM_PASSES:
            upstream_text(parse_element_list(name)[0])


def test_layout_attribute_error_is_located_inside_the_attribute(tmp_path):
    source = tmp_path / "lay.mlir"
    source.write_text(
        'func.func @f(%a: tensor<100x200xf32> {hlo_indexing.layout = "{1,0:T(8,128}"}) -> tensor<100x200xf32> {\n'
        "  return %a : tensor<100x200xf32>\n}\n"
    )
    done = _run(OPT, "lay.mlir", "--hlo-lower-tiled-layouts", cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    line = source.read_text().splitlines()[0]
    column = line.index("{1,0:T(8,128}") + 13  # the '}' where ')' is missing
    assert lines[0].startswith(f"lay.mlir:1:{column}: error: argument #0: expected ',' or ')' at column 13, found '}}'")
    assert lines[1:3] == [line, " " * (column - 1) + "^"]
    assert line[column - 1] == "}"


def test_layout_error_in_hlo_points_at_the_parameter(tmp_path):
    (tmp_path / "lay.hlo").write_text(
        "HloModule m\n\nENTRY e {\n  p0 = f32[100,200]{1,0:T(8,128} parameter(0)\n  ROOT n = f32[100,200]{1,0} negate(p0)\n}\n"
    )
    done = _run(OPT, "lay.hlo", "--hlo-lower-tiled-layouts", "-o", "/dev/null", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("lay.hlo:4:32: error: argument #0: expected ',' or ')' at column 13, found '}'")


def test_layout_viewer_names_the_expected_token():
    done = _run(LAYOUT, "f32[3,5]{1,0:T(2,2}")
    assert done.returncode == 1
    assert done.stderr.startswith("<layout>:1:19: error: expected ',' or ')' at column 19, found '}'")
    done = _run(LAYOUT, "f32[3,5}")
    assert "expected ',' or ']' at column 8" in done.stderr
