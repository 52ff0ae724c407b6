"""hlo-indexing-opt in-process: exit codes, error format, no tracebacks, -o atomicity,
and the pipeline/diagnostics parsers it relies on."""

from __future__ import annotations

import re

import pytest

from hlo_indexing.errors import SourceLocation
from hlo_indexing.passes.pipeline_text import PipelineError, parse_options, parse_pipeline
from hlo_indexing.tools import driver, opt
from hlo_indexing.tools.diagnostics_check import Reported, parse_expectations, verify

MODULE = (
    "func.func @f() attributes {hlo_indexing.m = {map = affine_map<(d0) -> (d0 mod 4)>, "
    "dims = array<i64: 0, 3>}} {\n  return\n}\n"
)
ERROR_LINE = re.compile(r"^[^\n]+:\d+:\d+: error: .+$")


def test_success_writes_output_file(tmp_path, capsys):
    source = tmp_path / "in.mlir"
    source.write_text(MODULE)
    target = tmp_path / "out.mlir"
    assert opt.main([str(source), "--hlo-simplify-indexing-maps", "-o", str(target), "-mlir-print-local-scope"]) == 0
    assert "affine_map<(d0) -> (d0)>" in target.read_text()
    assert capsys.readouterr().out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.mlir", "out.mlir"]  # no temporary left


@pytest.mark.parametrize(
    "argv",
    [
        ["--no-such-flag"],
        ["--pass-pipeline=builtin.module(nope)"],
        ["--pass-pipeline=builtin.module(cse)", "--cse"],
        ["--input-format=xml"],
        ["--verify-diagnostics=some"],
        ["-o"],
    ],
)
def test_failures_exit_1_with_located_error_and_no_traceback(tmp_path, capsys, argv):
    source = tmp_path / "in.mlir"
    source.write_text(MODULE)
    target = tmp_path / "out.mlir"
    extra = [] if argv == ["-o"] else ["-o", str(target)]
    assert opt.main([str(source), *extra, *argv]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.rstrip().splitlines()
    # each error: its line, then the source (or command) line and a caret under the column (issue #20)
    assert lines and ERROR_LINE.match(lines[0]), captured.err
    for index, line in enumerate(lines):
        if not ERROR_LINE.match(line):
            assert re.fullmatch(r" *\^", line) or (index + 1 < len(lines) and re.fullmatch(r" *\^", lines[index + 1])), captured.err
    column = int(lines[0].split(":")[2])
    assert len(lines) >= 3 and lines[2] == " " * (column - 1) + "^", captured.err
    assert "Traceback" not in captured.err
    assert not target.exists()


def test_existing_output_file_untouched_on_failure(tmp_path):
    source = tmp_path / "in.mlir"
    source.write_text("func.func @f() {\n  retur\n}\n")
    target = tmp_path / "out.mlir"
    target.write_text("previous")
    assert opt.main([str(source), "-o", str(target)]) == 1
    assert target.read_text() == "previous"
    assert len(list(tmp_path.iterdir())) == 2  # no temporary file left behind


def test_internal_error_is_reported_without_traceback_unless_debug(tmp_path, capsys, monkeypatch):
    source = tmp_path / "in.mlir"
    source.write_text(MODULE)

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(driver, "_process_chunk", broken)
    assert opt.main([str(source)]) == 1
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom" in err and "Traceback" not in err
    assert opt.main([str(source), "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_split_keeps_line_numbers():
    chunks = [chunk for chunk, _ in driver._split("a\n// -----\nb\nc\n// -----\nd", True)]
    assert [chunk.split("\n").index(chunk.strip().split("\n")[0]) for chunk in chunks] == [0, 2, 5]
    assert driver._split("x\n  //==\ny", "//==") == [("x", None), ("\n\ny", (2, 7))]


def test_pipeline_parser_columns_and_nesting():
    pipeline = parse_pipeline("builtin.module( cse , a-b{x=1 y='p q'}, func.func(canonicalize{max-iterations=2}))")
    assert pipeline.anchor == "builtin.module"
    assert [(e.name, e.column) for e in pipeline.elements] == [("cse", 17), ("a-b", 23), ("func.func", 41)]
    assert parse_options(pipeline.elements[1].options) == {"x": "1", "y": "p q"}
    assert [e.text for e in pipeline.elements[2].nested] == ["canonicalize{max-iterations=2}"]
    with pytest.raises(PipelineError) as raised:
        parse_pipeline("builtin.module(cse{a=1)")
    assert raised.value.column == 19
    with pytest.raises(PipelineError, match="expected ','"):
        parse_pipeline("builtin.module(cse cse)")


def test_verify_matches_locators_and_reports_in_mlir_wording():
    source = "\n".join(
        [
            "op1 // expected-error {{bad thing}}",
            "// expected-remark@above {{note-worthy}}",
            "// expected-warning@+1 {{watch}}",
            "op2",
            "// expected-error-re@-1 {{value {{[0-9]+}} too big}}",
            "// expected-note@unknown {{somewhere}}",
            "// expected-error {{missing}}",
        ]
    )
    expectations = parse_expectations(source, "f.mlir")
    at = lambda line: SourceLocation("f.mlir", line, 1)  # noqa: E731
    reported = [
        Reported("error", at(1), "a bad thing happened"),
        Reported("remark", at(1), "note-worthy"),
        Reported("warning", at(4), "watch out"),
        Reported("error", at(4), "value 42 too big"),
        Reported("note", None, "somewhere else"),
        Reported("error", at(2), "surprise"),
    ]
    failures = verify(expectations, reported)
    assert [str(f) for f in failures] == [
        "f.mlir:2:1: error: unexpected error: surprise",
        'f.mlir:7:4: error: expected error "missing" was not produced',
    ]
    assert [str(f) for f in verify(parse_expectations(source, "f.mlir"), reported, "only-expected")] == [
        'f.mlir:7:4: error: expected error "missing" was not produced'
    ]
