"""Batch mode of hlo-indexing-opt in-process (-j 1): outputs, failures, summary, progress bar."""

from __future__ import annotations

import io
import re

from hlo_indexing.tools import batch, opt

GOOD = "func.func @{name}() attributes {{hlo_indexing.m = {{map = affine_map<(d0) -> (d0 mod 16)>, dims = array<i64: 0, {hi}>}}}} {{\n  return\n}}\n"
BAD = "func.func @bad() {\n  retur\n}\n"


def write_inputs(directory, names_and_texts):
    directory.mkdir(exist_ok=True)
    for name, text in names_and_texts:
        (directory / name).write_text(text)
    return directory


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_outputs_in_input_order_on_stdout(tmp_path, capsys):
    inputs = write_inputs(tmp_path / "in", [("z.mlir", GOOD.format(name="z", hi=9)), ("a.mlir", GOOD.format(name="a", hi=20))])
    code = opt.main([str(inputs / "z.mlir"), str(inputs / "a.mlir"), "--hlo-simplify-indexing-maps", "-mlir-print-local-scope"])
    captured = capsys.readouterr()
    assert code == 0
    chunks = captured.out.split("// -----\n")
    assert [re.search(r"func\.func @(\w+)", c).group(1) for c in chunks] == ["z", "a"]
    assert "affine_map<(d0) -> (d0)>" in chunks[0]  # d0 mod 16 with d0 <= 9
    assert "affine_map<(d0) -> (d0 mod 16)>" in chunks[1]  # d0 up to 20: kept
    assert captured.err.strip() == "2 files, 0 failed"


def test_failed_file_writes_nothing_and_is_summarised(tmp_path, capsys):
    inputs = write_inputs(tmp_path / "in", [("bad.mlir", BAD), ("ok.mlir", GOOD.format(name="ok", hi=3))])
    out = tmp_path / "out"
    assert opt.main([str(inputs), "-o", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert sorted(p.name for p in out.iterdir()) == ["ok.mlir"]
    error = f"{inputs / 'bad.mlir'}:2:3: error: custom op 'retur' is unknown (tried 'func.retur' as well)"
    # the error with its source line and caret (issue #20), then the summary with its first line
    assert captured.err.splitlines() == [error, "  retur", "  ^", "2 files, 1 failed", f"  {error}"]
    assert "Traceback" not in captured.err


def test_existing_output_of_failed_file_untouched(tmp_path, capsys):
    inputs = write_inputs(tmp_path / "in", [("bad.mlir", BAD), ("ok.mlir", GOOD.format(name="ok", hi=3))])
    out = tmp_path / "out"
    out.mkdir()
    (out / "bad.mlir").write_text("previous")
    assert opt.main([str(inputs), "-o", str(out)]) == 1
    assert (out / "bad.mlir").read_text() == "previous"


def test_progress_bar_only_on_a_terminal(tmp_path, capsys, monkeypatch):
    inputs = write_inputs(tmp_path / "in", [(f"f{k}.mlir", GOOD.format(name=f"f{k}", hi=3)) for k in range(3)])
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert opt.main([str(inputs), "-o", str(tmp_path / "out")]) == 0
    text = terminal.getvalue()
    for done in (1, 2, 3):
        assert f"] {done}/3 f{done - 1}.mlir" in text
    # the bar is erased before the summary, which stays on its own line
    assert text.endswith("\r3 files, 0 failed\n")


def test_progress_line_fills_in_proportion():
    assert batch.progress_line(0, 4, "d/x.hlo") == "[" + " " * 30 + "] 0/4 x.hlo"
    assert batch.progress_line(2, 4, "x.hlo") == "[" + "#" * 15 + " " * 15 + "] 2/4 x.hlo"
    assert batch.progress_line(4, 4, "x.hlo") == "[" + "#" * 30 + "] 4/4 x.hlo"


def test_summary_lists_first_error_of_each_failure():
    failures = [
        batch.FileResult("a.mlir", True, None, "a.mlir:1:1: remark: r\na.mlir:3:4: error: one\na.mlir:5:1: error: two\n"),
        batch.FileResult("b.mlir", True, None, ""),
    ]
    assert batch.summary(5, failures) == "5 files, 2 failed\n  a.mlir:3:4: error: one\n  b.mlir: error: failed"
    assert batch.summary(1, []) == "1 file, 0 failed"


def test_directory_expands_to_inputs_sorted(tmp_path):
    inputs = write_inputs(
        tmp_path / "in",
        [("b.mlir", ""), ("a.hlo", ""), ("dump.txt", "// XLA\nHloModule m\n"), ("notes.txt", "hello"), ("x.py", "")],
    )
    assert batch.expand_inputs([str(inputs)], {}) == [str(inputs / n) for n in ("a.hlo", "b.mlir", "dump.txt")]


def test_job_count_zero_means_cpu_count(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 7)
    assert batch.job_count(opt.parse_command_line(["-j", "0"])) == 7
    assert batch.job_count(opt.parse_command_line(["-j=3"])) == 3
    assert batch.job_count(opt.parse_command_line([])) == 1
